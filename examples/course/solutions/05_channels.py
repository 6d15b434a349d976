"""Chapter 5, exercise: a slow reader. The server reports 100 progress updates at once; the
client takes a second over each. The session keeps only the newest unread updates (a
bounded buffer), so memory stays bounded, the newest update and the answer always arrive,
and what was dropped is counted.

Run it: ``python examples/course/solutions/05_channels.py``
"""

from __future__ import annotations

import trio
import trio.testing

from trio_mcp import Context, Server
from trio_mcp.session import PROGRESS_BUFFER
from trio_mcp.testing import connect
from trio_mcp.types import ProgressNotificationParams

server = Server("indexer")


@server.tool()
async def index(files: int, ctx: Context) -> str:
    """Index files instantly, reporting progress after each."""
    for done in range(1, files + 1):
        await ctx.report_progress(done, files)
    return f"indexed {files} files"


async def main() -> None:
    seen: list[float] = []

    async def slow_reader(update: ProgressNotificationParams) -> None:
        await trio.sleep(1)
        seen.append(update.progress)

    async with connect(server) as client:
        result = await client.call_tool("index", {"files": 100}, on_progress=slow_reader)
        dropped = client.session.connection.statistics().progress_dropped
        print(result.content[0].text)  # type: ignore[union-attr]
        print(f"seen + dropped = {len(seen) + dropped}")
        print(f"at most {PROGRESS_BUFFER} waited at once: {len(seen) <= PROGRESS_BUFFER + 1}")
        print(f"the newest update was seen: {seen[-1]:.0f}")


if __name__ == "__main__":
    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
