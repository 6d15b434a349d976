"""Chapter 8: many connections. A host is a nursery of clients: one supervising task per
server, each a loop that connects, serves, and on failure waits and starts again. One
server here is a child process (this very file, run with ``serve``) that we crash; the
other lives in this process; the crash of one does not touch the other.

Run it: ``python examples/course/08_host.py`` (see docs/course/08-many-connections.md)
"""

from __future__ import annotations

import os
import sys

import trio

import trio_mcp
from trio_mcp import ConnectionClosed, Server
from trio_mcp.host import (
    Host,
    InProcessServerConfig,
    ServerConfig,
    StdioServerConfig,
    allow_all,
    open_host,
)
from trio_mcp.types import CallToolResult, TextContent

child = Server("child")


@child.tool()
def pid() -> str:
    """The process id of the server."""
    return str(os.getpid())


@child.tool()
def crash() -> str:
    """Exit at once, without a word."""
    os._exit(3)


local = Server("local")


@local.tool()
def hello() -> str:
    """Say hello from this process."""
    return "hello"


def text(result: CallToolResult) -> str:
    """The text of a tool's answer."""
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def show(host: Host) -> None:
    for name, state in sorted(host.servers.items()):
        print(f"  {name}: {state.status}, restarts: {state.restarts}")


async def main() -> None:
    servers: dict[str, ServerConfig] = {
        "child": StdioServerConfig(command=[sys.executable, __file__, "serve"]),
        "local": InProcessServerConfig(server=local),
    }
    with trio.fail_after(30):  # real processes: a bound, never reached
        # allow_all(): this program trusts its own servers (a real host asks its user).
        async with open_host(servers, backoff_initial=0.1, consent=allow_all()) as host:
            await host.wait_settled()
            print("tools:", sorted(host.tools()))
            first = text(await host.call_tool("child__pid"))
            try:
                await host.call_tool("child__crash")
            except ConnectionClosed:
                print("child crashed in the middle of a call")
            print("local still answers:", text(await host.call_tool("local__hello")))
            state = host.servers["child"]
            while state.restarts == 0 or state.status != "connected":
                await host.wait_changed()
            show(host)
            second = text(await host.call_tool("child__pid"))
            print("a new process:", first != second)
        show(host)


if __name__ == "__main__":
    if sys.argv[1:] == ["serve"]:
        trio_mcp.run(child)
    else:
        trio.run(main)
