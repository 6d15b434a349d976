"""Chapter 1, exercise: a ``countdown`` tool that sleeps one second per step. Three steps
take three (virtual) seconds, and each ``await trio.sleep(1)`` is a checkpoint.

Run it: ``python examples/course/solutions/01_first_call.py``
"""

from __future__ import annotations

import trio
import trio.testing

from trio_mcp import Server
from trio_mcp.testing import connect

server = Server("countdown")


@server.tool()
async def countdown(steps: int) -> str:
    """Count down, one second per step."""
    for left in range(steps, 0, -1):
        print(f"  [server] {left}...")
        await trio.sleep(1)
    return "lift-off"


async def main() -> None:
    async with connect(server) as client:
        start = trio.current_time()
        result = await client.call_tool("countdown", {"steps": 3})
        print("countdown ->", result.content[0].text)  # type: ignore[union-attr]
        print(f"took {trio.current_time() - start:.1f} s")


if __name__ == "__main__":
    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
