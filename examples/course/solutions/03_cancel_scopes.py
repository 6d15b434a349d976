"""Chapter 3, exercise: one deadline for two calls. ``trio.fail_after(3)`` covers both;
the first takes 2 s, so the second has 1 s left and is cancelled, and the block raises
``trio.TooSlowError``.

Run it: ``python examples/course/solutions/03_cancel_scopes.py``
"""

from __future__ import annotations

import trio
import trio.testing

from trio_mcp import Server
from trio_mcp.testing import connect

server = Server("slow")


@server.tool()
async def report(pages: int) -> str:
    """Write a report, one second per page."""
    try:
        await trio.sleep(pages)
    except trio.Cancelled:
        print(f"  [server] report({pages}) cancelled at t={trio.current_time():.0f}")
        raise
    return f"{pages} pages"


async def main() -> None:
    async with connect(server) as client:
        try:
            with trio.fail_after(3):
                first = await client.call_tool("report", {"pages": 2})
                print("[client] first:", first.content[0].text)  # type: ignore[union-attr]
                await client.call_tool("report", {"pages": 2})
        except trio.TooSlowError:
            print(f"[client] TooSlowError at t={trio.current_time():.0f}")


if __name__ == "__main__":
    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
