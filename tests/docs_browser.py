"""Drive a headless Chromium over the DevTools protocol (a WebSocket, spoken with
trio-websocket): load pages, collect console errors and uncaught exceptions, evaluate
JavaScript. Only for loopback URLs; every wait is bounded."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio
from trio_websocket import WebSocketConnection, open_websocket_url


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Page:
    """One browser tab: navigate, evaluate, and the errors it logged."""

    def __init__(self, ws: WebSocketConnection) -> None:
        self._ws = ws
        self._ids = itertools.count(1)
        self.errors: list[str] = []
        self._loaded = trio.Event()

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        id = next(self._ids)
        await self._ws.send_message(json.dumps({"id": id, "method": method, "params": params}))
        while True:
            message = json.loads(await self._ws.get_message())
            if message.get("id") == id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})  # type: ignore[no-any-return]
            self._event(message)

    def _event(self, message: dict[str, Any]) -> None:
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            self.errors.append(details.get("exception", {}).get("description") or details["text"])
        elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
            self.errors.append(
                " ".join(str(a.get("value", a.get("description"))) for a in params["args"])
            )
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            self.errors.append(f"{params['entry'].get('url', '')}: {params['entry']['text']}")
        elif method == "Page.loadEventFired":
            self._loaded.set()

    async def goto(self, url: str) -> None:
        """Open ``url`` and wait for its load event (and for scripts to settle)."""
        self._loaded = trio.Event()
        await self.call("Page.navigate", url=url)
        with trio.fail_after(30):
            while not self._loaded.is_set():
                self._event(json.loads(await self._ws.get_message()))
        await self.settle(0.3)

    async def settle(self, seconds: float) -> None:
        """Take the events of the next ``seconds`` (real time: a browser's own)."""
        with trio.move_on_after(seconds):
            while True:
                self._event(json.loads(await self._ws.get_message()))

    async def evaluate(self, expression: str) -> Any:
        result = await self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression!r} raised: {result['exceptionDetails']}")
        return result["result"].get("value")


@asynccontextmanager
async def open_browser(binary: str) -> AsyncIterator[Page]:
    """A headless Chromium with one page, for the block (the process is killed after)."""
    port = _free_port()
    profile = tempfile.mkdtemp(prefix="trio-mcp-chromium-")
    process = subprocess.Popen(
        [
            binary,
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            f"--user-data-dir={profile}",
            f"--remote-debugging-port={port}",
            "--remote-debugging-address=127.0.0.1",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ},
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=2) as r:
                    targets = [t for t in json.load(r) if t["type"] == "page"]
                if targets:
                    break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("chromium did not start")
            await trio.sleep(0.1)
        async with open_websocket_url(
            targets[0]["webSocketDebuggerUrl"], max_message_size=64 * 2**20
        ) as ws:
            page = Page(ws)
            for domain in ("Page", "Runtime", "Log"):
                await page.call(f"{domain}.enable")
            yield page
    finally:
        process.kill()
        process.wait(timeout=10)
        shutil.rmtree(profile, ignore_errors=True)
