"""A trio_mcp server for stdio tests: ``nap`` reports progress once, then sleeps; when the
client cancels it (``notifications/cancelled``, not a signal), it appends a line to the
file named by the first argument."""

import sys

import trio

import trio_mcp
from trio_mcp import Context

server = trio_mcp.Server("napping")
RECORD = sys.argv[1]


@server.tool()
async def nap(seconds: float, ctx: Context) -> str:
    await ctx.report_progress(0, 1)  # the client knows the call is running
    try:
        await trio.sleep(seconds)
    finally:
        if ctx.cancelled:  # by the client's notifications/cancelled
            with open(RECORD, "a") as record:
                record.write("cancelled\n")
    return "rested"


if __name__ == "__main__":
    trio_mcp.run(server)
