"""Small HTTP servers for the HTTP client's tests: a raw ASGI app whose every response a test
function writes (:class:`ScriptedApp`), :func:`serving` to run any ASGI app with hypercorn
on 127.0.0.1, port 0, inside the test's nursery, and :func:`in_process` to reach one with no
socket at all (for ``autojump_clock`` tests)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import attrs
import front_ends
import httpx
import orjson
import trio
from hypercorn.config import Config
from hypercorn.trio import serve

ASGIApp = Callable[..., Awaitable[None]]


@asynccontextmanager
async def serving(app: ASGIApp) -> AsyncIterator[str]:
    """Run ``app`` for the block, on the front end of the test (see ``front_ends``); yields
    its base URL (``http://127.0.0.1:PORT``)."""
    if front_ends.current == "httptools":
        async with front_ends.serving_http11(app) as url:
            yield url
        return
    config = Config()
    config.bind = ["127.0.0.1:0"]
    config.accesslog = None
    config.errorlog = None
    async with trio.open_nursery() as nursery:
        binds = await nursery.start(
            partial(serve, app, config, shutdown_trigger=trio.sleep_forever)
        )
        yield binds[0]
        nursery.cancel_scope.cancel()


def in_process(app: ASGIApp) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` that calls ``app`` directly (base URL ``http://mcp.test``).

    No socket and no httpx timeout: every wait is a Trio one, so ``autojump_clock`` runs
    the client's backoff in virtual time. httpx's ASGI transport hands over a response only
    once the app has finished it, so scripts must end their responses (no endless streams,
    no :meth:`Reply.wait_disconnect`).
    """
    return httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://mcp.test")


@attrs.define
class Seen:
    """One HTTP request as the server saw it."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes
    at: float

    @property
    def json(self) -> Any:
        return orjson.loads(self.body)

    @property
    def rpc_method(self) -> str | None:
        try:
            value = self.json
        except orjson.JSONDecodeError:
            return None
        return value.get("method") if isinstance(value, dict) else None


class Reply:
    """Writes one response; handed to the script with the request."""

    def __init__(self, send: Any, receive: Any) -> None:
        self._send = send
        self._receive = receive
        self.started = False
        self.ended = False
        self.disconnected = trio.Event()

    async def _start(self, status: int, headers: dict[str, str]) -> None:
        self.started = True
        await self._send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
            }
        )

    async def json(
        self, value: Any, status: int = 200, headers: dict[str, str] | None = None
    ) -> None:
        await self._start(status, {"content-type": "application/json", **(headers or {})})
        await self.end(orjson.dumps(value))

    async def empty(self, status: int, headers: dict[str, str] | None = None) -> None:
        await self._start(status, headers or {})
        await self.end()

    async def text(self, body: str, status: int, content_type: str = "text/html") -> None:
        await self._start(status, {"content-type": content_type})
        await self.end(body.encode())

    async def sse(self, status: int = 200, headers: dict[str, str] | None = None) -> None:
        await self._start(status, {"content-type": "text/event-stream", **(headers or {})})

    async def raw(self, data: bytes) -> None:
        await self._send({"type": "http.response.body", "body": data, "more_body": True})

    async def event(
        self,
        data: Any = None,
        *,
        id: str | None = None,
        retry: int | None = None,
        event: str | None = None,
    ) -> None:
        """One SSE event (``data`` may be a JSON value, or a str sent as is)."""
        lines = []
        if event is not None:
            lines.append(f"event: {event}")
        if id is not None:
            lines.append(f"id: {id}")
        if retry is not None:
            lines.append(f"retry: {retry}")
        text = data if isinstance(data, str) or data is None else orjson.dumps(data).decode()
        for line in (text or "").split("\n"):
            lines.append(f"data: {line}")
        await self.raw(("\n".join(lines) + "\n\n").encode())

    async def end(self, body: bytes = b"") -> None:
        if not self.ended:
            self.ended = True
            await self._send({"type": "http.response.body", "body": body, "more_body": False})

    async def wait_disconnect(self) -> None:
        await self.disconnected.wait()


Script = Callable[[Seen, Reply], Awaitable[None]]


class ScriptedApp:
    """A raw ASGI app: every HTTP request is recorded in :attr:`requests` and answered by
    ``await script(seen, reply)``. What the script leaves unanswered gets a 500."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[Seen] = []
        self.arrived = trio.Condition()

    def rpc(self, method: str) -> list[Seen]:
        """The POSTs whose JSON-RPC method is ``method``."""
        return [r for r in self.requests if r.method == "POST" and r.rpc_method == method]

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        body = b""
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        seen = Seen(
            method=scope["method"],
            path=scope["path"],
            query=scope["query_string"].decode(),
            headers={k.decode().lower(): v.decode() for k, v in scope["headers"]},
            body=body,
            at=trio.current_time(),
        )
        self.requests.append(seen)
        async with self.arrived:
            self.arrived.notify_all()
        reply = Reply(send, receive)

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            reply.disconnected.set()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch)
            await self.script(seen, reply)
            if not reply.started:
                await reply.empty(500)
            await reply.end()
            nursery.cancel_scope.cancel()

    async def wait_for(self, predicate: Callable[[Seen], bool]) -> Seen:
        """Block until a request matching ``predicate`` has arrived; return it."""
        async with self.arrived:
            while True:
                for seen in self.requests:
                    if predicate(seen):
                        return seen
                await self.arrived.wait()


def result(request: Seen, value: dict[str, Any]) -> dict[str, Any]:
    """A JSON-RPC result answering ``request``."""
    return {"jsonrpc": "2.0", "id": request.json["id"], "result": value}


def error(request: Seen | None, code: int, message: str, data: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": request.json["id"] if request else None, "error": body}


MODERN = "2026-07-28"
DISCOVER = {
    "supportedVersions": [MODERN],
    "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
    "resultType": "complete",
    "ttlMs": 0,
    "cacheScope": "private",
}


def initialize_result(version: str = "2025-11-25", **capabilities: Any) -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "capabilities": capabilities or {"tools": {}},
        "serverInfo": {"name": "scripted", "version": "1"},
    }
