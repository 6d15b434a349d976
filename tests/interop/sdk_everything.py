"""The official SDK's servers the interop tests talk to: an ``MCPServer`` with every feature
and a low-level ``Server`` that answers multi round-trip requests by hand.

This module imports only the SDK (``mcp``, ``mcp_types``), anyio and pydantic, so it also
runs as a stdio server without trio_mcp on the path::

    python tests/interop/sdk_everything.py            # the MCPServer, on asyncio
    python tests/interop/sdk_everything.py lowlevel   # the low-level Server
    python tests/interop/sdk_everything.py --trio     # either one, on Trio

In-process tests build fresh servers with :func:`build_everything` and
:func:`build_lowlevel`, passing a :class:`Probe` to see what the handlers saw.

One SDK server serves both protocol eras on a stream connection: the first request
decides (``initialize`` opens a handshake-era connection, an enveloped request a
2026-07-28 one). Tools that ask the client (``greet_user``, ``sample_it``,
``list_roots``) do it with ``Resolve``: a server→client request in the handshake era,
an ``InputRequiredResult`` at 2026-07-28.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Annotated, Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.mcpserver import Context, Elicit, ListRoots, MCPServer, Resolve, Sample
from mcp.server.mcpserver.prompts.base import UserMessage
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel

__all__ = ["Probe", "build_everything", "build_lowlevel"]

#: Runs a server over an SDK ``(read_stream, write_stream)`` pair until its input ends.
Serve = Callable[[Any, Any], Awaitable[None]]

SUBSCRIBABLE = "note://hello"


@dataclass
class Probe:
    """What the SDK server's handlers saw (for in-process tests). Create it inside the
    event loop (anyio events need one)."""

    hang_started: anyio.Event = field(default_factory=anyio.Event)
    hang_cancelled: anyio.Event = field(default_factory=anyio.Event)
    #: Levels set with ``logging/setLevel``.
    log_levels: list[str] = field(default_factory=list)
    #: URIs passed to ``resources/subscribe`` (and ``resources/unsubscribe``).
    subscribed: list[str] = field(default_factory=list)
    unsubscribed: list[str] = field(default_factory=list)
    #: ``(inputResponses, requestState)`` of each low-level ``ask`` call (modern era).
    ask_rounds: list[tuple[Any, Any]] = field(default_factory=list)


class Sum(BaseModel):
    total: int
    note: str


class Name(BaseModel):
    name: str


def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


def draft() -> Sample:
    message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text="hi"))
    return Sample([message], max_tokens=10)


def roots() -> ListRoots:
    return ListRoots()


def _modern(protocol_version: str | None) -> bool:
    return protocol_version in MODERN_PROTOCOL_VERSIONS


def build_everything(probe: Probe | None = None) -> tuple[MCPServer, Serve]:
    """A fresh ``MCPServer`` with every feature, and how to serve it over streams."""
    probe = probe or Probe()
    mcp = MCPServer("sdk-everything", version="9.9.9", instructions="the SDK's everything server")

    @mcp.tool()
    def add(a: int, b: int) -> Sum:
        """Adds two numbers (structured output)."""
        return Sum(total=a + b, note="ok")

    @mcp.tool()
    def fail() -> str:
        """Always fails."""
        raise ValueError("it failed")

    @mcp.tool()
    async def slow(steps: int, ctx: Context) -> str:
        """Logs at three levels and reports progress for each step."""
        await ctx.debug("debug line")
        await ctx.info("info line")
        await ctx.warning("warning line")
        for i in range(steps):
            await ctx.report_progress(i + 1, steps, f"step {i + 1}")
        return f"done {steps}"

    @mcp.tool()
    async def hang(ctx: Context) -> str:
        """Waits until cancelled."""
        probe.hang_started.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            probe.hang_cancelled.set()
            raise
        return "unreachable"

    @mcp.tool()
    async def greet_user(who: Annotated[Name, Resolve(ask_name)]) -> str:
        """Asks the user's name (elicitation)."""
        return f"hello {who.name}"

    @mcp.tool()
    async def sample_it(result: Annotated[types.CreateMessageResult, Resolve(draft)]) -> str:
        """Asks the client's model (sampling)."""
        content = result.content
        return content.text if isinstance(content, types.TextContent) else "?"

    @mcp.tool()
    async def list_roots(result: Annotated[types.ListRootsResult, Resolve(roots)]) -> str:
        """Lists the client's roots."""
        return ",".join(str(root.uri) for root in result.roots)

    @mcp.tool()
    async def touch(uri: str, ctx: Context) -> str:
        """Announces that ``uri`` was updated and that the tool list changed."""
        if _modern(ctx.protocol_version):
            await ctx.notify_resource_updated(uri)  # to subscriptions/listen streams
            await ctx.notify_tools_changed()
        else:
            await ctx.session.send_resource_updated(uri)  # plain notifications
            await ctx.session.send_tool_list_changed()
        return "touched"

    @mcp.resource(SUBSCRIBABLE, mime_type="text/plain")
    def hello_note() -> str:
        return "hello world"

    @mcp.resource("greet://{name}")
    def greet_template(name: str) -> str:
        return f"Hello, {name}!"

    @mcp.prompt()
    def hello_prompt(name: str) -> list[UserMessage]:
        return [UserMessage(f"Say hello to {name}")]

    @mcp.completion()
    async def complete(
        ref: types.PromptReference | types.ResourceTemplateReference,
        argument: types.CompletionArgument,
        context: types.CompletionContext | None,
    ) -> types.Completion:
        names = ["alice", "albert", "bob"]
        return types.Completion(values=[n for n in names if n.startswith(argument.value)])

    # MCPServer answers neither logging/setLevel nor resources/(un)subscribe: register them
    # on the low-level server underneath (it has no public accessor).
    low: Server[Any] = mcp._lowlevel_server

    async def on_subscribe(
        ctx: ServerRequestContext, params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        probe.subscribed.append(str(params.uri))
        return types.EmptyResult()

    async def on_unsubscribe(
        ctx: ServerRequestContext, params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        probe.unsubscribed.append(str(params.uri))
        return types.EmptyResult()

    async def on_set_level(
        ctx: ServerRequestContext, params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        probe.log_levels.append(params.level)
        return types.EmptyResult()

    low.add_request_handler("resources/subscribe", types.SubscribeRequestParams, on_subscribe)
    low.add_request_handler("resources/unsubscribe", types.UnsubscribeRequestParams, on_unsubscribe)
    low.add_request_handler("logging/setLevel", types.SetLevelRequestParams, on_set_level)
    # Legacy listChanged flags come only from NotificationOptions.
    options = low.create_initialization_options(
        NotificationOptions(prompts_changed=True, resources_changed=True, tools_changed=True)
    )

    async def serve(read: Any, write: Any) -> None:
        await low.run(read, write, options)

    return mcp, serve


NAME_FORM = types.ElicitRequestFormParams(
    message="name?",
    requested_schema={
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
    },
)
NAME_QUESTION = types.ElicitRequest(params=NAME_FORM)
TOTAL_SCHEMA = {
    "type": "object",
    "properties": {"total": {"type": "integer"}},
    "required": ["total"],
}


def build_lowlevel(probe: Probe | None = None) -> tuple[Server[Any], Serve]:
    """A fresh low-level ``Server``: ``add`` (structured output) and ``ask``, which asks
    the user's name by hand (a server→client request in the handshake era; an
    ``InputRequiredResult`` with a plain-text ``requestState`` at 2026-07-28). Changes
    go to ``subscriptions/listen`` streams through a bus."""
    probe = probe or Probe()
    bus = InMemorySubscriptionBus()

    async def list_tools(
        ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name="add",
                    input_schema={
                        "type": "object",
                        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                    },
                    output_schema=TOTAL_SCHEMA,
                ),
                types.Tool(name="ask", input_schema={"type": "object"}),
            ]
        )

    async def call_tool(
        ctx: ServerRequestContext, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        arguments = params.arguments or {}
        if params.name == "add":
            total = arguments["a"] + arguments["b"]
            await bus.publish(ResourceUpdated(uri="mem://total"))
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=str(total))],
                structured_content={"total": total},
            )
        if params.name == "ask":
            if _modern(ctx.protocol_version):
                probe.ask_rounds.append((params.input_responses, params.request_state))
                answer = (params.input_responses or {}).get("q")
                if not isinstance(answer, types.ElicitResult):
                    return types.InputRequiredResult(
                        input_requests={"q": NAME_QUESTION}, request_state="round-1"
                    )
            else:
                answer = await ctx.session.elicit_form(
                    NAME_FORM.message,
                    NAME_FORM.requested_schema,
                    related_request_id=ctx.request_id,
                )
            name = (answer.content or {}).get("name") if answer.action == "accept" else None
            return types.CallToolResult(content=[types.TextContent(type="text", text=f"hi {name}")])
        raise ValueError(f"unknown tool {params.name}")

    server: Server[Any] = Server(
        "sdk-lowlevel",
        version="1.0",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_subscriptions_listen=ListenHandler(bus),
    )
    options = server.create_initialization_options(NotificationOptions(tools_changed=True))

    async def serve(read: Any, write: Any) -> None:
        await server.run(read, write, options)

    return server, serve


async def _serve_stdio(serve: Serve) -> None:
    async with stdio_server() as (read, write):
        await serve(read, write)


def main(argv: list[str]) -> None:
    _, serve = build_lowlevel() if "lowlevel" in argv else build_everything()
    anyio.run(_serve_stdio, serve, backend="trio" if "--trio" in argv else "asyncio")


if __name__ == "__main__":
    main(sys.argv[1:])
