"""Chapter 2, exercise: ten orders, but at most two in the oven at once. A
``trio.CapacityLimiter`` on the client side bounds how many calls are in flight.

Run it: ``python examples/course/solutions/02_nurseries.py``
"""

from __future__ import annotations

import trio
import trio.testing

from trio_mcp import Client, Server
from trio_mcp.testing import connect

server = Server("kitchen")
running = 0
most = 0  # the most bake() calls running at once


@server.tool()
async def bake(item: str, minutes: int) -> str:
    """Bake something (a minute is a second here)."""
    global running, most
    running += 1
    most = max(most, running)
    try:
        await trio.sleep(minutes)
    finally:
        running -= 1
    return f"{item} ready"


async def order(client: Client, limiter: trio.CapacityLimiter, item: str) -> None:
    async with limiter:  # waits while two orders are in the oven
        await client.call_tool("bake", {"item": item, "minutes": 1})


async def main() -> None:
    async with connect(server) as client:
        limiter = trio.CapacityLimiter(2)
        start = trio.current_time()
        async with trio.open_nursery() as nursery:
            for n in range(10):
                nursery.start_soon(order, client, limiter, f"loaf {n}")
        print(f"10 loaves in {trio.current_time() - start:.0f} s")
        print("at most", most, "in the oven at once")


if __name__ == "__main__":
    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
