"""Chapter 5: memory channels and backpressure. Inside a tool, a fast producer feeds a slow
indexer through ``trio.open_memory_channel(2)``: when two files wait, ``send`` blocks, so the
producer runs only as fast as the indexer. The indexer reports progress to the client.

Run it: ``python examples/course/05_channels.py`` (see docs/course/05-channels-and-backpressure.md)
"""

from __future__ import annotations

import trio
import trio.testing

from trio_mcp import Context, Server
from trio_mcp.testing import connect
from trio_mcp.types import ProgressNotificationParams

server = Server("indexer")


@server.tool()
async def index(files: int, ctx: Context) -> str:
    """Index some files, one second each, reporting progress."""
    send, receive = trio.open_memory_channel[str](2)  # at most 2 files waiting

    async def produce() -> None:
        async with send:  # closing it ends the consumer's loop
            for n in range(1, files + 1):
                await send.send(f"file{n}")  # blocks while 2 are waiting
                print(f"  [producer] t={trio.current_time():.0f}: file{n} queued")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(produce)
        async with receive:
            done = 0
            async for name in receive:
                await trio.sleep(1)  # indexing is slow
                done += 1
                await ctx.report_progress(done, files, f"indexed {name}")
    return f"indexed {files} files"


def show(update: ProgressNotificationParams) -> None:
    print(f"  [client] t={trio.current_time():.0f}: {update.progress:.0f}/{update.total:.0f}")


async def main() -> None:
    async with connect(server) as client:
        result = await client.call_tool("index", {"files": 5}, on_progress=show)
        print(result.content[0].text)  # type: ignore[union-attr]


if __name__ == "__main__":
    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
