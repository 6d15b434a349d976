"""Our HTTP client against the official Python SDK's HTTP servers (``mcp`` 2.3.0), hosted in
this process under Trio by hypercorn: Streamable HTTP in both eras (SSE and JSON answers,
stateful and stateless) and the 2024-11-05 HTTP+SSE transport."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import pytest
import trio
from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from pydantic import BaseModel
from scripted_http import serving

from trio_mcp import Client, types
from trio_mcp.http import open_http_client

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(60),
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]


class Sum(BaseModel):
    total: int


class Name(BaseModel):
    name: str


def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


def make_server() -> tuple[MCPServer, dict[str, trio.Event]]:
    # (Module-level types only in the tools' annotations: the SDK evaluates them.)
    server = MCPServer("sdk-server", version="2.3.0")
    events = {"started": trio.Event(), "cancelled": trio.Event()}

    @server.tool()
    def add(a: int, b: int) -> Sum:
        return Sum(total=a + b)

    @server.tool()
    async def count(steps: int, ctx: Context) -> str:
        for i in range(steps):
            await ctx.report_progress(i + 1, steps)
        return f"counted {steps}"

    @server.tool()
    async def wait_forever() -> str:
        events["started"].set()
        try:
            await trio.sleep_forever()
        finally:
            events["cancelled"].set()
        return "never"

    @server.tool()
    async def greet(who: Annotated[Name, Resolve(ask_name)]) -> str:
        return f"hello {who.name}"

    @server.tool()
    async def touch(ctx: Context) -> str:
        await ctx.notify_tools_changed()  # to the open subscriptions/listen streams
        return "touched"

    @server.resource("note://hello", mime_type="text/plain")
    def hello() -> str:
        return "hello world"

    @server.prompt()
    def hello_prompt(name: str) -> str:
        return f"Say hello to {name}"

    return server, events


async def answer(
    params: types.ElicitRequestFormParams | types.ElicitRequestURLParams,
) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"name": "Ada"})


@asynccontextmanager
async def sdk_client(app: Any, path: str, **options: Any) -> AsyncIterator[Client]:
    async with (
        serving(app) as base,
        open_http_client(base + path, elicitation=answer, cache=False, **options) as client,
    ):
        yield client


async def exercise(client: Client, *, progress: bool) -> None:
    """What every era and server mode must do alike."""
    tools = {tool.name for tool in await client.list_tools()}
    assert {"add", "count", "greet", "wait_forever"} <= tools
    added = await client.call_tool("add", {"a": 2, "b": 3})
    assert added.structured_content == {"total": 5}
    updates: list[float] = []
    counted = await client.call_tool(
        "count", {"steps": 3}, on_progress=lambda p: updates.append(p.progress)
    )
    assert counted.content[0].text == "counted 3"  # type: ignore[union-attr]
    if progress:
        assert updates == [1, 2, 3]
    greeted = await client.call_tool("greet", {})
    assert greeted.content[0].text == "hello Ada"  # type: ignore[union-attr]
    note = await client.read_resource("note://hello")
    assert note.contents[0].text == "hello world"  # type: ignore[union-attr]
    prompt = await client.get_prompt("hello_prompt", {"name": "Bob"})
    assert "Bob" in prompt.messages[0].content.text  # type: ignore[union-attr]


@pytest.mark.parametrize("json_response", [False, True], ids=["sse", "json"])
async def test_modern_streamable_http(json_response: bool) -> None:
    server, events = make_server()
    app = server.streamable_http_app(json_response=json_response)
    async with sdk_client(app, "/mcp") as client:
        assert client.era == "modern"
        assert client.server_info is not None and client.server_info.name == "sdk-server"
        with trio.fail_after(20):
            await exercise(client, progress=not json_response)
        # A subscription is one long-lived POST; its notifications arrive while it is open.
        with trio.fail_after(10):
            async with client.listen(tools=True) as listener:
                await client.call_tool("touch", {})
                change = await listener.__anext__()
        assert change.kind == "tools"
        # Cancelling a call closes its POST. An SDK server answering with an SSE stream sees
        # the disconnect and cancels the handler (in JSON mode it does not watch for it).
        with trio.move_on_after(10):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(client.call_tool, "wait_forever", {})
                await events["started"].wait()
                nursery.cancel_scope.cancel()
        if not json_response:
            with trio.fail_after(5):
                await events["cancelled"].wait()


@pytest.mark.parametrize("stateless", [False, True], ids=["stateful", "stateless"])
async def test_legacy_streamable_http(stateless: bool) -> None:
    server, events = make_server()
    app = server.streamable_http_app(stateless_http=stateless)
    async with sdk_client(app, "/mcp", protocol_version="2025-11-25") as client:
        assert client.era == "legacy" and client.protocol_version == "2025-11-25"
        stream = client.session.stream
        assert (getattr(stream, "session_id", None) is None) == stateless
        with trio.fail_after(20):
            tools = {tool.name for tool in await client.list_tools()}
            assert "add" in tools
            added = await client.call_tool("add", {"a": 2, "b": 3})
            assert added.structured_content == {"total": 5}
            if not stateless:  # server requests need a back-channel: a stateful session
                await exercise(client, progress=True)
        if not stateless:
            # Cancelling a call POSTs notifications/cancelled; the SDK cancels the handler.
            with trio.move_on_after(10):
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(client.call_tool, "wait_forever", {})
                    await events["started"].wait()
                    nursery.cancel_scope.cancel()
            with trio.fail_after(5):
                await events["cancelled"].wait()


async def test_the_2024_11_05_http_sse_transport() -> None:
    server, _ = make_server()
    async with sdk_client(server.sse_app(), "/sse") as client:
        assert client.era == "legacy"
        assert getattr(client.session.stream, "mode", None) == "sse"
        with trio.fail_after(20):
            await exercise(client, progress=True)
