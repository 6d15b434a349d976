"""trio_mcp's own Streamable HTTP server (both eras, resumable streams), for the fuzzer's HTTP
tests: correct as it stands, or broken in one way by an ASGI wrapper in front of it.

``python http_server.py [BUG]`` serves on 127.0.0.1 (a free port) and prints the MCP
endpoint's URL as its first stdout line. BUG is one of:

``stale-session-400``
    A request with the id of a session that was DELETEd gets 400, not 404.
``any-session``
    A made-up or missing ``Mcp-Session-Id`` is taken to mean the newest live session.
``ignores-header-mismatch``
    2026-07-28 headers are rewritten from the body before the server sees them (so
    headers that disagree with the body are never refused), and ``Origin`` is dropped.
``loses-answer-on-resume``
    ``Last-Event-ID`` is dropped from GETs: a client resuming a stream gets the standalone
    stream instead, and the answer it was owed never comes.
``accepts-any-host``
    (vulnerable, http class) No DNS-rebinding protection: any ``Host`` is served, and
    any ``Origin``.
``no-body-limit``
    (vulnerable, http class) The whole body is read into memory, however big, and a
    body past 4 MiB is answered as usual (the server's own 413 never comes).
``one-body-at-a-time``
    (vulnerable, http class) Request bodies are read one at a time, behind one lock: a
    client that sends its body slowly holds up everyone (slowloris).
``bare-401``
    (vulnerable, http class) A request without ``Authorization`` gets 401 with
    ``WWW-Authenticate: Bearer`` and no ``resource_metadata``: a client cannot find
    where to log in.

Its one slow tool, ``slow``, logs and reports progress (so its answer is an SSE stream,
with event ids), then takes a quarter of a second to answer.
"""

from __future__ import annotations

import signal
import sys
from functools import partial
from typing import Any

import orjson
import trio
from hypercorn.config import Config
from hypercorn.trio import serve

from trio_mcp import Context, Server
from trio_mcp._http._headers import encode_value, name_source
from trio_mcp.http import OriginPolicy, asgi_app

Scope = dict[str, Any]
Message = dict[str, Any]

server = Server("http-target", version="1.0.0", tools=True)


@server.tool()
def echo(text: str) -> str:
    """Says the text back."""
    return text


@server.tool()
async def slow(ctx: Context) -> str:
    """Logs (which opens its answer's stream at once), reports progress, then answers a
    quarter of a second later."""
    await ctx.log("emergency", "slow: started")  # (every level lets it through)
    await ctx.report_progress(1, 2)
    await trio.sleep(0.25)
    return "done"


@server.tool()
async def nap() -> str:
    """Says nothing for a quarter of a second, then answers (a request cancelled meanwhile
    shows how the server ends a response it has not begun)."""
    await trio.sleep(0.25)
    return "rested"


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope["headers"]:
        if key.lower() == name:
            return bytes(value)
    return None


def _with_headers(scope: Scope, changes: dict[bytes, bytes | None]) -> Scope:
    headers = [(k, v) for k, v in scope["headers"] if k.lower() not in changes]
    headers += [(k, v) for k, v in changes.items() if v is not None]
    return {**scope, "headers": headers}


class Broken:
    """An ASGI app that forwards to ``app`` after breaking the exchange as ``bug`` says."""

    def __init__(self, app: Any, bug: str) -> None:
        self.app = app
        self.bug = bug
        self.deleted: set[bytes] = set()
        self.live: list[bytes] = []
        self.reading = trio.Lock()

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method = scope["method"]
        session = _header(scope, b"mcp-session-id")
        if self.bug == "bare-401" and _header(scope, b"authorization") is None:
            await _respond(
                send,
                401,
                {"code": -32600, "message": "Unauthorized"},
                [(b"www-authenticate", b'Bearer realm="mcp"')],
            )
            return
        if self.bug == "stale-session-400" and session in self.deleted:
            await _respond(send, 400, {"code": -32600, "message": "Bad Request: no session"})
            return
        if self.bug == "loses-answer-on-resume" and method == "GET":
            scope = _with_headers(scope, {b"last-event-id": None})
        body = b""
        if method == "POST" and self.bug == "one-body-at-a-time":
            async with self.reading:
                body, receive = await _read_body(receive)
        elif method == "POST":
            body, receive = await _read_body(receive)
            scope = self._rewrite(scope, body, session)

        async def watch(message: Message) -> None:
            # Which sessions are live: learned from the answers.
            if message["type"] == "http.response.start":
                status = message["status"]
                new = dict(message.get("headers") or []).get(b"mcp-session-id")
                if new is not None and new not in self.live:
                    self.live.append(new)
                if method == "DELETE" and 200 <= status < 300 and session is not None:
                    self.deleted.add(session)
                    if session in self.live:
                        self.live.remove(session)
            await send(message)

        await self.app(scope, receive, watch)

    def _rewrite(self, scope: Scope, body: bytes, session: bytes | None) -> Scope:
        try:
            message = orjson.loads(body)
        except orjson.JSONDecodeError:
            return scope
        if not isinstance(message, dict):
            return scope
        method = message.get("method")
        params = message.get("params") if isinstance(message.get("params"), dict) else None
        meta = params.get("_meta") if params is not None else None
        version = meta.get("io.modelcontextprotocol/protocolVersion") if meta else None
        legacy = method != "initialize" and version is None
        unknown = session is None or session not in self.live
        if self.bug == "any-session" and legacy and unknown and self.live:
            return _with_headers(scope, {b"mcp-session-id": self.live[-1]})
        if self.bug == "ignores-header-mismatch" and isinstance(version, str):
            changes: dict[bytes, bytes | None] = {
                b"mcp-protocol-version": version.encode(),
                b"origin": None,
            }
            if isinstance(method, str):
                changes[b"mcp-method"] = method.encode()
                name = name_source(method, params)
                changes[b"mcp-name"] = encode_value(name).encode() if name else None
            return _with_headers(scope, changes)
        return scope


async def _read_body(receive: Any) -> tuple[bytes, Any]:
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    body = b"".join(chunks)
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()  # type: ignore[no-any-return]

    return body, replay


async def _respond(
    send: Any,
    status: int,
    error: dict[str, Any],
    headers: list[tuple[bytes, bytes]] = [],  # noqa: B006 - never changed
) -> None:
    body = orjson.dumps({"jsonrpc": "2.0", "id": None, "error": error})
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), *headers],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def main(bug: str | None) -> None:
    config = Config()
    config.bind = ["127.0.0.1:0"]
    config.loglevel = "WARNING"
    config.accesslog = None
    config.read_timeout = None
    config.graceful_timeout = 1.0
    # A short retry keeps resumptions quick.
    app = asgi_app(
        server,
        retry_ms=50,
        origin_policy=OriginPolicy(allowed_hosts=["*"], allowed_origins=["*"])
        if bug == "accepts-any-host"
        else None,
        max_body_bytes=1 << 30 if bug == "no-body-limit" else 4 << 20,
    )
    asgi = app if bug is None else Broken(app, bug)

    async def until_signalled() -> None:
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for _ in signals:
                app.begin_shutdown()
                return

    async with trio.open_nursery() as nursery:
        binds = await nursery.start(
            partial(serve, asgi, config, shutdown_trigger=until_signalled, mode="asgi")
        )
        print(binds[0] + "/mcp", flush=True)


if __name__ == "__main__":
    trio.run(main, sys.argv[1] if len(sys.argv) > 1 else None)
