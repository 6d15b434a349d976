"""Progress and log messages from a running tool.

Progress goes to whoever passed ``on_progress``. Log messages follow the era:
a legacy client sets one level for the session (``logging/setLevel``); a
modern client asks per request (``logLevel`` in ``_meta``) and gets messages
only for the requests that asked. ``client.set_log_level`` does the right thing
in both.

Run it: ``python examples/logging_progress.py``
"""

from __future__ import annotations

import trio

from trio_mcp import Context, Server
from trio_mcp.testing import connect
from trio_mcp.types import LoggingMessageNotificationParams, ProgressNotificationParams

server = Server("indexer")


@server.tool()
async def index(files: int, ctx: Context) -> str:
    """Index some files, reporting as it goes."""
    await ctx.debug("starting", logger="indexer")
    for done in range(1, files + 1):
        await trio.lowlevel.checkpoint()  # real work would happen here
        await ctx.report_progress(done, files, f"indexed file {done}")
    await ctx.warning({"skipped": ["big.bin"]}, logger="indexer")
    return f"indexed {files} files"


def on_log(params: LoggingMessageNotificationParams) -> None:
    print(f"  log [{params.level}] {params.logger}: {params.data}")


def on_progress(update: ProgressNotificationParams) -> None:
    print(f"  progress {update.progress}/{update.total}: {update.message}")


async def main() -> None:
    for version in ["2025-11-25", "2026-07-28"]:
        async with connect(server, protocol_version=version, on_log=on_log) as client:
            print(f"{version} ({client.era}), no log level asked:")
            await client.call_tool("index", {"files": 2}, on_progress=on_progress)
            await client.set_log_level("warning")
            print(f"{version} ({client.era}), level 'warning':")
            result = await client.call_tool("index", {"files": 2}, on_progress=on_progress)
            print("  ->", result.content[0].text)  # type: ignore[union-attr]


if __name__ == "__main__":
    trio.run(main)
