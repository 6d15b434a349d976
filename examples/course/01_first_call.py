"""Chapter 1: a tool and a client. ``trio.run`` starts the program, ``async with`` bounds
every resource, and each ``await`` of a Trio operation is a checkpoint.

Run it: ``python examples/course/01_first_call.py`` (see docs/course/01-a-tool-and-a-client.md)
"""

from __future__ import annotations

import trio
import trio.testing

from trio_mcp import Server
from trio_mcp.testing import connect

server = Server("hello")


@server.tool()
async def greet(name: str) -> str:
    """Say hello, after thinking about it for a second."""
    await trio.sleep(1)  # a checkpoint: other tasks may run here, or this one be cancelled
    return f"Hello, {name}!"


async def main() -> None:
    # connect() runs the server and a client over in-memory streams for the block.
    async with connect(server) as client:
        print("connected, protocol", client.protocol_version)
        print("tools:", [tool.name for tool in await client.list_tools()])
        result = await client.call_tool("greet", {"name": "Ada"})
        print("greet ->", result.content[0].text)  # type: ignore[union-attr]
        print(f"clock: {trio.current_time():.1f} s")
    print("block left: the server and the client have stopped")


if __name__ == "__main__":
    # A MockClock with autojump: when every task waits, time jumps to the next deadline.
    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
