"""Helpers for the HTTP transport tests: a test server, serving an app on a real socket, and
reading SSE bodies."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from functools import partial
from typing import Annotated, Any

import attrs
import front_ends
import httpx
import trio
from hypercorn.config import Config
from hypercorn.trio import serve as hypercorn_serve

from trio_mcp import Context, Server
from trio_mcp.http import McpAsgiApp, close_sse_stream
from trio_mcp.server import Field

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ACCEPT = "application/json, text/event-stream"


@attrs.define
class Probe:
    """What the test tools saw."""

    started: trio.Event = attrs.field(factory=trio.Event)
    cancelled: trio.Event = attrs.field(factory=trio.Event)
    release: trio.Event = attrs.field(factory=trio.Event)
    finished: trio.Event = attrs.field(factory=trio.Event)


def make_server() -> tuple[Server, Probe]:
    server = Server("http-test", version="1.0")
    probe = Probe()

    @server.tool()
    async def echo(text: str) -> str:
        """Echo the text."""
        return text

    @server.tool()
    async def progress(ctx: Context) -> str:
        """Report progress three times."""
        for step in range(3):
            await ctx.report_progress(step, 3)
            await ctx.info(f"step {step}")
            await trio.sleep(0.01)
        return "done"

    @server.tool()
    async def block(ctx: Context) -> str:
        """Wait until released (or cancelled)."""
        probe.started.set()
        try:
            await probe.release.wait()
        except trio.Cancelled:
            probe.cancelled.set()
            raise
        probe.finished.set()
        return "released"

    @server.tool()
    async def ask_name(ctx: Context) -> str:
        """Ask the user's name."""
        answer = await ctx.elicit("Name?", {"properties": {"name": {"type": "string"}}}, key="who")
        return f"Hello, {(answer.content or {}).get('name')}!"

    @server.tool()
    async def poll(ctx: Context) -> str:
        """Close the request's stream, then answer."""
        await ctx.report_progress(1, 2)
        await close_sse_stream(ctx)
        await probe.release.wait()
        return "after reconnect"

    @server.tool()
    async def regional(
        region: Annotated[str, Field(schema={"x-mcp-header": "Region"})], count: int = 1
    ) -> str:
        """Mirror the region into a header."""
        return f"{region} x{count}"

    @server.resource("test://text", mime_type="text/plain")
    async def text() -> str:
        return "hello"

    @server.prompt()
    async def hello(name: str) -> str:
        """Greet."""
        return f"Hello {name}"

    return server, probe


@asynccontextmanager
async def running(app: McpAsgiApp, *, graceful_timeout: float = 2.0) -> AsyncIterator[str]:
    """Serve ``app`` on a free port with the front end of the test (Hypercorn's Trio worker
    unless the ``front_end`` fixture says otherwise); yields the base URL. Leaving shuts
    down gracefully (the lifespan, or the app's ``running`` block, ends the sessions)."""
    if front_ends.current == "httptools":

        async def begin_shutdown() -> None:
            app.begin_shutdown()

        async with AsyncExitStack() as stack:
            if app.manager is None:  # (else the caller runs it)
                await stack.enter_async_context(app.running())
            async with front_ends.serving_http11(
                app,
                shutdown_trigger=begin_shutdown,
                shutdown_deadline=graceful_timeout,
            ) as url:
                yield url
        return
    config = Config()
    config.bind = ["127.0.0.1:0"]
    config.accesslog = None
    config.loglevel = "WARNING"
    config.graceful_timeout = graceful_timeout
    stop = trio.Event()

    async def trigger() -> None:
        await stop.wait()
        app.begin_shutdown()

    async with trio.open_nursery() as nursery:
        binds = await nursery.start(
            partial(hypercorn_serve, app, config, shutdown_trigger=trigger, mode="asgi")  # type: ignore[arg-type]
        )
        try:
            yield binds[0]
        finally:
            stop.set()


def meta(**capabilities: Any) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }


def modern_headers(method: str, name: str | None = None, **extra: str) -> dict[str, str]:
    headers = {"mcp-protocol-version": MODERN, "mcp-method": method, "accept": ACCEPT}
    if name is not None:
        headers["mcp-name"] = name
    headers.update(extra)
    return headers


def modern_body(id: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": id,
        "method": method,
        "params": {**(params or {}), "_meta": meta()},
    }


@attrs.frozen
class Event:
    data: str
    id: str | None = None
    event: str | None = None
    retry: int | None = None


def parse_sse(text: str) -> list[Event]:
    """The events of an SSE body (comments dropped)."""
    events = []
    fields: dict[str, Any] = {}
    data: list[str] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        if not line:
            if data or fields:
                events.append(Event("\n".join(data), **fields))
            fields, data = {}, []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            data.append(value)
        elif name == "id":
            fields["id"] = value
        elif name == "event":
            fields["event"] = value
        elif name == "retry":
            fields["retry"] = int(value)
    return events


class SseReader:
    """Reads the events of a streaming response as they come (see :func:`open_sse`)."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self._chunks = response.aiter_text()
        self._buffer = ""
        self.events: list[Event] = []
        self.raw = ""

    async def wait_raw(self, text: str) -> None:
        """Block until ``text`` appeared in the raw stream (a comment, say)."""
        while text not in self.raw:
            chunk = await self._chunks.__anext__()
            self.raw += chunk
            self._buffer += chunk

    async def wait_for(self, count: int) -> list[Event]:
        """Block until ``count`` events (priming events included) arrived in all; returns
        them all. Returns fewer if the stream ends first."""
        while len(self.events) < count:
            try:
                chunk = await self._chunks.__anext__()
            except StopAsyncIteration:
                break
            self.raw += chunk
            self._buffer += chunk
            complete, sep, rest = self._buffer.rpartition("\n\n")
            if sep:
                self.events.extend(parse_sse(complete + "\n\n"))
                self._buffer = rest
        return self.events

    async def rest(self) -> list[Event]:
        """Read to the end of the stream; returns every event."""
        return await self.wait_for(1 << 30)


@asynccontextmanager
async def open_sse(
    client: httpx.AsyncClient, method: str, url: str, **options: Any
) -> AsyncIterator[SseReader]:
    """Send a request and read its streaming answer for the block."""
    async with client.stream(method, url, **options) as response:
        reader = SseReader(response)
        try:
            yield reader
        finally:
            await reader._chunks.aclose()  # type: ignore[attr-defined]


async def initialize(client: httpx.AsyncClient, url: str, version: str = LEGACY) -> dict[str, str]:
    """Open a legacy session; returns the headers later requests carry."""
    response = await client.post(
        url,
        json={
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": version,
                "capabilities": {"elicitation": {}},
                "clientInfo": {"name": "test", "version": "1"},
            },
        },
        headers={"accept": ACCEPT},
    )
    assert response.status_code == 200, response.text
    headers = {
        "mcp-session-id": response.headers["mcp-session-id"],
        "mcp-protocol-version": response.json()["result"]["protocolVersion"],
        "accept": ACCEPT,
    }
    done = await client.post(
        url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
    )
    assert done.status_code == 202
    return headers
