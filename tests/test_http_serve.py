"""Serving over real sockets: ``serve()`` reports its port and shuts down gracefully, and the
echo example runs over HTTP (one process and several)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import httpx
import pytest
import trio
from http_support import MODERN, initialize, make_server, modern_body, modern_headers

from trio_mcp.http import serve

ROOT = Path(__file__).resolve().parent.parent
ECHO = ROOT / "examples" / "echo_server.py"


async def test_serve_reports_its_port_and_stops_on_its_trigger() -> None:
    server, probe = make_server()
    stop = trio.Event()
    async with httpx.AsyncClient() as client, trio.open_nursery() as nursery:
        port = await nursery.start(
            partial(serve, server, port=0, graceful_timeout=0.5, shutdown_trigger=stop.wait)
        )
        url = f"http://127.0.0.1:{port}/mcp"
        headers = await initialize(client, url)
        r = await client.post(
            url,
            json=modern_body(1, "tools/call", {"name": "echo", "arguments": {"text": "x"}}),
            headers=modern_headers("tools/call", "echo"),
        )
        assert r.json()["result"]["content"][0]["text"] == "x"

        async def blocked_call() -> None:
            body = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "block"},
            }
            with pytest.raises(httpx.TransportError):
                await client.post(url, json=body, headers=headers)  # cut at the deadline

        nursery.start_soon(blocked_call)
        with trio.fail_after(5):
            await probe.started.wait()
        started = trio.current_time()
        stop.set()
    # The call in flight was cancelled at the graceful deadline, not before.
    elapsed = trio.current_time() - started
    assert probe.cancelled.is_set()
    assert 0.4 < elapsed < 3


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(ECHO), *args],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        start_new_session=True,
    )


def echo_call(url: str, text: str) -> str:
    r = httpx.post(
        url,
        json=modern_body(1, "tools/call", {"name": "echo", "arguments": {"text": text}}),
        headers=modern_headers("tools/call", "echo"),
        timeout=10,
    )
    return str(r.json()["result"]["content"][0]["text"])


def wait_until_up(url: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        try:
            httpx.post(url, json={}, headers={"mcp-protocol-version": MODERN}, timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError("the server did not come up")


@pytest.mark.slow
def test_the_echo_example_over_http_exits_promptly_on_sigterm() -> None:
    port = free_port()
    process = spawn("--http", str(port), "--graceful", "3")
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        wait_until_up(url, process)
        assert echo_call(url, "hello") == "hello"
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
        assert time.monotonic() - started < 3
    finally:
        process.kill()
        process.wait()


@pytest.mark.slow
def test_the_echo_example_with_two_workers() -> None:
    port = free_port()
    process = spawn("--http", str(port), "--workers", "2", "--graceful", "2")
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        wait_until_up(url, process)
        assert [echo_call(url, str(n)) for n in range(20)] == [str(n) for n in range(20)]
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=15)
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait()
