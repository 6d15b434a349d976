"""A stand-in Streamable HTTP server for the fuzzer's CI run, until ``trio_mcp.http`` lands:
the stand-in everything server behind a minimal ASGI adapter (JSON responses only, no SSE,
no GET stream), served by hypercorn's Trio worker on 127.0.0.1.

Modern (2026-07-28) POSTs are checked against their headers and served statelessly
(a fresh ``Server.serve`` per request); legacy ones get a session (``Mcp-Session-Id``)
with one ``Server.serve`` each, alive until ``DELETE`` or shutdown.

``python standin_http.py`` binds a free port and prints ``http://127.0.0.1:PORT/mcp``
on its first stdout line.
"""

from __future__ import annotations

import secrets
import sys
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

import orjson
import trio
from hypercorn.config import Config
from hypercorn.trio import serve
from standin_everything import server

from trio_mcp import jsonrpc as rpc
from trio_mcp._http._headers import decode_value
from trio_mcp.testing import memory_stream_pair

LEGACY = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
META_VERSION = "io.modelcontextprotocol/protocolVersion"
Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class Session:
    """One legacy MCP session: our end of a memory stream pair to ``server.serve``."""

    def __init__(self, stream: Any, scope: trio.CancelScope) -> None:
        self.stream = stream
        self.scope = scope
        self.waiting: dict[Any, trio.MemorySendChannel[rpc.Message]] = {}

    async def route(self) -> None:
        async for message in self.stream:
            if isinstance(message, rpc.ResultResponse | rpc.ErrorResponse):
                channel = self.waiting.pop(message.id, None)
                if channel is not None:
                    channel.send_nowait(message)


class App:
    def __init__(self) -> None:
        self.nursery: trio.Nursery | None = None
        self.sessions: dict[str, Session] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.lifespan(receive, send)
        elif scope["type"] == "http":
            await self.http(scope, receive, send)

    async def lifespan(self, receive: Receive, send: Send) -> None:
        async with trio.open_nursery() as nursery:
            self.nursery = nursery
            await receive()
            await send({"type": "lifespan.startup.complete"})
            await receive()
            nursery.cancel_scope.cancel()
        await send({"type": "lifespan.shutdown.complete"})

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        method = scope["method"]
        origin = headers.get("origin")
        if origin is not None and urlsplit(origin).hostname not in ("127.0.0.1", "localhost"):
            await respond(send, 403)  # DNS rebinding protection
            return
        if method == "DELETE":
            session = self.sessions.pop(headers.get("mcp-session-id", ""), None)
            if session is not None:
                session.scope.cancel()
            await respond(send, 200 if session is not None else 404)
            return
        if method != "POST":
            await respond(send, 405, extra=[(b"allow", b"POST, DELETE")])
            return
        body = b""
        while True:
            event = await receive()
            body += event.get("body", b"")
            if not event.get("more_body"):
                break
        message = rpc.parse(body)
        if isinstance(message, rpc.InvalidMessage | rpc.Batch):
            reply = message.reply if isinstance(message, rpc.InvalidMessage) else None
            error = reply or rpc.ErrorResponse(None, rpc_error(-32600, "Invalid Request: batch"))
            await respond(send, 400, error)
            return
        version = headers.get("mcp-protocol-version")
        if version is not None and version not in LEGACY:
            await self.modern(headers, message, send)
        else:
            await self.legacy(headers, message, send)

    async def modern(self, headers: dict[str, str], message: rpc.Message, send: Send) -> None:
        if not isinstance(message, rpc.Request):
            await respond(send, 202)
            return
        params = message.params or {}
        meta = params.get("_meta")
        body_version = meta.get(META_VERSION) if isinstance(meta, dict) else None
        mismatch = None
        if body_version is not None and headers.get("mcp-protocol-version") != body_version:
            mismatch = "MCP-Protocol-Version does not match _meta"
        elif headers.get("mcp-method") != message.method:
            mismatch = "Mcp-Method does not match the body"
        elif message.method in ("tools/call", "prompts/get", "resources/read"):
            name = params.get("uri" if message.method == "resources/read" else "name")
            try:
                header = decode_value(headers.get("mcp-name", ""))
            except ValueError:
                header = None
            if header != name:
                mismatch = "Mcp-Name does not match the body"
        if mismatch is not None:
            await respond(send, 400, rpc.ErrorResponse(message.id, rpc_error(-32020, mismatch)))
            return
        ours, theirs = memory_stream_pair(16)
        answer: rpc.Message | None = None
        async with trio.open_nursery() as nursery:
            nursery.start_soon(server.serve, theirs)
            await ours.send(message)
            async for item in ours:
                if isinstance(item, rpc.ResultResponse | rpc.ErrorResponse):
                    answer = item
                    break
            nursery.cancel_scope.cancel()
        status = 200
        if isinstance(answer, rpc.ErrorResponse):
            status = {-32601: 404, -32602: 400, -32022: 400, -32021: 400}.get(
                answer.error.code, 200
            )
        await respond(send, status, answer)

    async def legacy(self, headers: dict[str, str], message: rpc.Message, send: Send) -> None:
        session_id = headers.get("mcp-session-id")
        if isinstance(message, rpc.Request) and message.method == "initialize" and not session_id:
            session_id = secrets.token_hex(16)
            assert self.nursery is not None
            session = await self.nursery.start(self.run_session)
            self.sessions[session_id] = session
        elif session_id is None:
            await respond(send, 400, rpc.ErrorResponse(None, rpc_error(-32600, "missing session")))
            return
        session = self.sessions.get(session_id)
        if session is None:
            await respond(send, 404, rpc.ErrorResponse(None, rpc_error(-32600, "unknown session")))
            return
        if not isinstance(message, rpc.Request):
            await session.stream.send(message)
            await respond(send, 202)
            return
        inbox, outbox = trio.open_memory_channel[rpc.Message](1)
        session.waiting[message.id] = inbox
        await session.stream.send(message)
        answer = await outbox.receive()
        extra = [(b"mcp-session-id", session_id.encode())] if message.method == "initialize" else []
        await respond(send, 200, answer, extra=extra)

    async def run_session(self, task_status: trio.TaskStatus[Session]) -> None:
        ours, theirs = memory_stream_pair(16)
        with trio.CancelScope() as scope:
            session = Session(ours, scope)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(server.serve, theirs)
                nursery.start_soon(session.route)
                task_status.started(session)


def rpc_error(code: int, message: str) -> Any:
    from trio_mcp.types import Error

    return Error(code=code, message=message)


async def respond(
    send: Send,
    status: int,
    message: rpc.Message | None = None,
    *,
    extra: list[tuple[bytes, bytes]] | None = None,
) -> None:
    body = orjson.dumps(rpc.serialize(message)) if message is not None else b""
    headers = list(extra or [])
    if body:
        headers.append((b"content-type", b"application/json"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def main() -> None:
    config = Config()
    config.bind = ["127.0.0.1:0"]
    config.accesslog = None
    async with trio.open_nursery() as nursery:
        binds = await nursery.start(serve, App(), config)
        port = binds[0].rsplit(":", 1)[1]
        print(f"http://127.0.0.1:{port}/mcp", flush=True)


if __name__ == "__main__":
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    trio.run(main)
