"""A trio_mcp server for stdio tests whose one tool runs until cancelled."""

import trio

import trio_mcp

server = trio_mcp.Server("hanging")


@server.tool()
async def hang(ctx: trio_mcp.Context) -> str:
    """Reports progress once (so a test knows it runs), then sleeps until cancelled."""
    await ctx.report_progress(0, 1, "started")
    await trio.sleep_forever()
    raise AssertionError("unreachable")


if __name__ == "__main__":
    trio_mcp.run(server)  # the default drain deadline: 10 seconds
