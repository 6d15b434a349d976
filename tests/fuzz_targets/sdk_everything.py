"""The official Python SDK's kind of example server (``mcp`` 2.3.0, ``MCPServer``), for
fuzzing a peer we did not write (see docs/discussion/fuzzing-peers.md).

``python sdk_everything.py`` serves it over stdio; ``python sdk_everything.py http`` over
Streamable HTTP on 127.0.0.1 (a free port; the first stdout line is the MCP endpoint URL).
"""

from __future__ import annotations

import socket
import sys
import warnings

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import UserMessage
from pydantic import BaseModel

warnings.simplefilter("ignore")  # MCPDeprecationWarning for logging in 2026-07-28

mcp = MCPServer("sdk-everything", version="2.3.0", instructions="an SDK example server")
LOW = mcp._lowlevel_server


class Sum(BaseModel):
    total: int
    note: str


@mcp.tool()
def add(a: int, b: int) -> Sum:
    """Adds two integers (structured output)."""
    return Sum(total=a + b, note="ok")


@mcp.tool()
def echo(text: str) -> str:
    """Says the text back."""
    return text


@mcp.tool()
async def slow(steps: int, ctx: Context, delay: float = 0.05) -> str:
    """Logs and reports progress for a few steps."""
    steps = max(0, min(steps, 4))
    for i in range(steps):
        await ctx.info(f"step {i}")
        await ctx.report_progress(i + 1, steps, f"step {i + 1}")
        await anyio.sleep(max(0.0, min(delay, 0.1)))
    return f"done {steps}"


@mcp.resource("note://hello", mime_type="text/plain")
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
    ref: object, argument: types.CompletionArgument, context: object
) -> types.Completion:
    return types.Completion(
        values=[v for v in ["alice", "albert", "bob"] if v.startswith(argument.value)]
    )


async def on_subscribe(
    ctx: ServerRequestContext, params: types.SubscribeRequestParams
) -> types.EmptyResult:
    return types.EmptyResult()


async def on_set_level(
    ctx: ServerRequestContext, params: types.SetLevelRequestParams
) -> types.EmptyResult:
    return types.EmptyResult()


LOW.add_request_handler("resources/subscribe", types.SubscribeRequestParams, on_subscribe)
LOW.add_request_handler("resources/unsubscribe", types.UnsubscribeRequestParams, on_subscribe)
LOW.add_request_handler("logging/setLevel", types.SetLevelRequestParams, on_set_level)


async def run_stdio() -> None:
    from mcp.server.stdio import stdio_server

    options = LOW.create_initialization_options(
        NotificationOptions(prompts_changed=True, resources_changed=True, tools_changed=True)
    )
    async with stdio_server() as (read, write):
        await LOW.run(read, write, options)


def run_http() -> None:
    import uvicorn

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    print(f"http://127.0.0.1:{port}/mcp", flush=True)
    uvicorn.run(mcp.streamable_http_app(), host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    if sys.argv[1:] == ["http"]:
        run_http()
    else:
        anyio.run(run_stdio)
