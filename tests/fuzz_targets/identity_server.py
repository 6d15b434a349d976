"""trio_mcp's own Streamable HTTP server with principals (bearer tokens ``alice-token`` and
``bob-token``), sessions, resumable streams and tasks, for the fuzzer's identity scan:
correct as it stands, or deliberately vulnerable in one way.

``python identity_server.py [BUG]`` serves on 127.0.0.1 (a free port) and prints the MCP
endpoint's URL as its first stdout line. BUG is one of:

``shared-sessions``
    A session is trusted by its id alone (CVE-2026-52869's class): a request carrying a
    known ``Mcp-Session-Id`` is served as the session's opener, whoever sent it.
``forbidden``
    Sessions are bound to their principal, but another principal's request for one is
    refused with 403 Forbidden, where an unknown session gets 404: the refusal confirms
    that the session exists.
``guessable-tasks``
    Task ids are sequential numbers and nothing is bound to a principal (the server
    ignores who calls: CVE-2026-52870's class): anyone may read, answer or cancel anyone's
    task, and take up anyone's ``requestState``.
"""

from __future__ import annotations

import signal
import sys
from functools import partial
from typing import Any

import trio
from hypercorn.config import Config
from hypercorn.trio import serve

from trio_mcp import Context, Server
from trio_mcp.http import asgi_app
from trio_mcp.server import TaskSettings
from trio_mcp.tasks import MemoryTaskStore, TaskRecord

Scope = dict[str, Any]
TOKENS = {"alice-token": "alice", "bob-token": "bob"}


def principal(scope: Scope) -> str | None:
    """The test's authentication: a bearer token from :data:`TOKENS`."""
    for name, value in scope["headers"]:
        if name.lower() == b"authorization":
            scheme, _, token = value.decode().partition(" ")
            if scheme.lower() == "bearer":
                return TOKENS.get(token)
    return None


class SequentialStore(MemoryTaskStore):
    """Tasks numbered 1, 2, 3..."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def new_record(self, *, owner: str | None, **kwargs: Any) -> TaskRecord:
        import attrs

        self.count += 1
        record = super().new_record(owner=owner, **kwargs)
        return attrs.evolve(record, task_id=str(self.count))


def make_server(bug: str | None) -> Server:
    store = SequentialStore() if bug == "guessable-tasks" else "memory:"
    server = Server("identity-target", version="1.0.0", tools=True, tasks=TaskSettings(store=store))

    @server.tool()
    async def slow(ctx: Context) -> str:
        """Logs (its answer is a stream with event ids), then answers."""
        await ctx.log("emergency", "slow: started")
        await ctx.report_progress(1, 2)
        return "done"

    @server.tool()
    async def ask(ctx: Context) -> str:
        """Asks for a name (a multi round-trip request in 2026-07-28), then greets."""
        answer = await ctx.elicit(
            "Your name?", {"type": "object", "properties": {"name": {"type": "string"}}}
        )
        return f"Hello, {(answer.content or {}).get('name', 'stranger')}!"

    @server.tool(task="optional")
    async def work(seconds: float) -> str:
        """Works for ``seconds`` (a second at most), then says so."""
        await trio.sleep(min(max(seconds, 0.0), 1.0))
        return f"worked {seconds:g} s"

    return server


class Forbidden:
    """An ASGI app in front of ``app`` that refuses another principal's session with 403."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.owners: dict[bytes, str | None] = {}

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        session = dict((k.lower(), v) for k, v in scope["headers"]).get(b"mcp-session-id")
        caller = principal(scope)
        if session in self.owners and self.owners[session] != caller:
            await send(
                {
                    "type": "http.response.start",
                    "status": 403,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            body = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Forbidden"}}'
            await send({"type": "http.response.body", "body": body})
            return

        async def watch(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                new = dict(message.get("headers") or []).get(b"mcp-session-id")
                if new is not None:
                    self.owners.setdefault(new, caller)
            await send(message)

        await self.app(scope, receive, watch)


class SharedSessions:
    """An ASGI app in front of ``app`` that serves a request carrying a known session id
    as the session's opener (it swaps in the opener's Authorization header)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.openers: dict[bytes, bytes] = {}

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict((k.lower(), v) for k, v in scope["headers"])
        session = headers.get(b"mcp-session-id")
        if session in self.openers:
            changed = [(k, v) for k, v in scope["headers"] if k.lower() != b"authorization"]
            changed.append((b"authorization", self.openers[session]))
            scope = {**scope, "headers": changed}
        authorization = headers.get(b"authorization")

        async def watch(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start" and authorization is not None:
                new = dict(message.get("headers") or []).get(b"mcp-session-id")
                if new is not None:
                    self.openers.setdefault(new, authorization)
            await send(message)

        await self.app(scope, receive, watch)


async def main(bug: str | None) -> None:
    config = Config()
    config.bind = ["127.0.0.1:0"]
    config.loglevel = "WARNING"
    config.accesslog = None
    config.graceful_timeout = 1.0
    who = None if bug == "guessable-tasks" else principal
    app = asgi_app(make_server(bug), principal=who, retry_ms=50)
    wrappers = {"shared-sessions": SharedSessions, "forbidden": Forbidden}
    asgi = wrappers[bug](app) if bug in wrappers else app

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
