"""Chapter 2: nurseries. A client starts three calls at once in a nursery; the server
answers them at once, each in a task of its own; the ``async with`` block does not end
until every task in it has ended.

Run it: ``python examples/course/02_nurseries.py`` (see docs/course/02-nurseries.md)
"""

from __future__ import annotations

import trio
import trio.testing

from trio_mcp import Client, Server
from trio_mcp.testing import connect

server = Server("kitchen")
running = 0  # how many bake() calls the server is running right now
most = 0  # and the most at once


@server.tool()
async def bake(item: str, minutes: int) -> str:
    """Bake something (a minute is a second here)."""
    global running, most
    running += 1
    most = max(most, running)
    print(f"  [server] baking {item}")
    try:
        await trio.sleep(minutes)
    finally:
        running -= 1
    return f"{item} ready"


async def order(client: Client, item: str, minutes: int) -> None:
    result = await client.call_tool("bake", {"item": item, "minutes": minutes})
    print(f"  [client] t={trio.current_time():.0f}: {result.content[0].text}")  # type: ignore[union-attr]


async def main() -> None:
    async with connect(server) as client:
        start = trio.current_time()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(order, client, "bread", 3)
            nursery.start_soon(order, client, "cake", 2)
            nursery.start_soon(order, client, "cookies", 1)
            print("  [client] three orders placed; the nursery waits for them")
        print(f"all three done after {trio.current_time() - start:.0f} s, not 6")
        print("most in the oven at once:", most, "- and now it is empty:", running == 0)


if __name__ == "__main__":
    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
