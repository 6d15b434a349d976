"""Cancelling a call is just Trio: put it in a cancel scope. When the scope is
cancelled the client tells the server (``notifications/cancelled``), the tool's
task is cancelled on the server, and no answer is sent.

Here a ``MockClock`` makes the timeout instant; real code uses the real clock.

Run it: ``python examples/cancellation.py``
"""

from __future__ import annotations

import trio
import trio.testing

from trio_mcp import Server
from trio_mcp.testing import connect

server = Server("slow")
cancelled = trio.Event()


@server.tool()
async def crunch() -> str:
    """Takes an hour."""
    try:
        await trio.sleep(3600)
    except trio.Cancelled:
        print("[server] crunch was cancelled")
        cancelled.set()
        raise
    return "done"


async def main() -> None:
    async with connect(server) as client:
        with trio.move_on_after(5) as scope:
            await client.call_tool("crunch")
        print("[client] gave up after 5 s:", scope.cancelled_caught)
        await cancelled.wait()
        print("[client] the server is still fine:", [t.name for t in await client.list_tools()])


if __name__ == "__main__":
    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
