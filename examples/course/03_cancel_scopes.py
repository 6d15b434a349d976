"""Chapter 3: cancel scopes. The client gives up on a call after 2 s with
``trio.move_on_after``; the session sends ``notifications/cancelled``; the server cancels
the handler's task, which sees ``trio.Cancelled`` at its checkpoint.

Run it: ``python examples/course/03_cancel_scopes.py`` (see docs/course/03-cancel-scopes.md)
"""

from __future__ import annotations

import trio
import trio.testing

from trio_mcp.server import Context, Server
from trio_mcp.testing import connect

server = Server("slow")
handler_done = trio.Event()


@server.tool()
async def report(pages: int, ctx: Context) -> str:
    """Write a report, one second per page."""
    written = 0
    try:
        for _ in range(pages):
            await trio.sleep(1)  # the checkpoint where Cancelled arrives
            written += 1
        return f"{written} page(s)"
    except trio.Cancelled:
        now = trio.current_time()
        print(f"  [server] cancelled at t={now:.1f} after {written} pages;")
        print(f"  [server] ctx.cancelled: {ctx.cancelled}")
        raise  # always let it go on: the scope that was cancelled catches it
    finally:
        handler_done.set()


async def main() -> None:
    async with connect(server) as client:
        with trio.move_on_after(2.5) as scope:
            await client.call_tool("report", {"pages": 10})
            print("not printed: the call was cancelled")
        print(f"[client] gave up at t={trio.current_time():.1f}: {scope.cancelled_caught}")
        await handler_done.wait()
        result = await client.call_tool("report", {"pages": 1})
        print("[client] the next call works:", result.content[0].text)  # type: ignore[union-attr]


if __name__ == "__main__":
    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
