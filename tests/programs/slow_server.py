"""A trio_mcp server for stdio tests: echo, a slow tool, a tool that prints to stdout."""

import os
import sys

import trio

import trio_mcp

server = trio_mcp.Server("slow")
#: With SLOW_SERVER_ANNOUNCE=1, a call of ``slow`` that asks for progress first hears that
#: it is running (progress 0): a test waits for that instead of sleeping and hoping.
ANNOUNCE = os.environ.get("SLOW_SERVER_ANNOUNCE") == "1"


@server.tool()
async def echo(text: str) -> str:
    return text


@server.tool()
async def slow(seconds: float, ctx: trio_mcp.Context) -> str:
    """Sleeps, then answers (stdin closing does not stop it)."""
    if ANNOUNCE:
        await ctx.report_progress(0)
    await trio.sleep(seconds)
    return f"slept {seconds}"


@server.tool()
async def chatty() -> str:
    """Prints to stdout: the output must not reach the protocol stream."""
    print("this would corrupt the protocol")
    sys.stdout.flush()
    return "ok"


if __name__ == "__main__":
    trio_mcp.run(server, drain_timeout=float(sys.argv[1]) if len(sys.argv) > 1 else 10.0)
