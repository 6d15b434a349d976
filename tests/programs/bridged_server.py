"""A trio_mcp server for the bridge tests: ``python bridged_server.py LOG`` over stdio, or
with ``--http`` over Streamable HTTP on a free port (printed on stdout). It appends to LOG
``pid N`` when it starts and ``cancelled`` when a ``nap`` is cancelled."""

import os
import sys
from functools import partial

import trio

import trio_mcp
from trio_mcp import Context

LOG = sys.argv[1]
server = trio_mcp.Server("bridged", version="1.0.0")


def note(line: str) -> None:
    with open(LOG, "a") as log:
        log.write(line + "\n")


@server.tool()
async def echo(text: str) -> str:
    """Say the text back."""
    return text


@server.tool()
async def context(ctx: str, context: str = "") -> str:
    """Arguments named like a handler's context parameter usually is."""
    return f"{ctx} {context}".strip()


@server.tool()
async def count(n: int, ctx: Context) -> str:
    """Report progress n times."""
    for step in range(1, n + 1):
        await ctx.report_progress(step, n, f"step {step}")
    return f"counted {n}"


@server.tool()
async def nap(seconds: float) -> str:
    """Sleep, noting a cancellation."""
    try:
        await trio.sleep(seconds)
    except trio.Cancelled:
        note("cancelled")
        raise
    return "rested"


@server.resource("note://hello", mime_type="text/plain")
def hello() -> str:
    return "hello from the bridged server"


@server.prompt()
def greet(name: str) -> str:
    """Greet someone."""
    return f"Say hello to {name}."


async def serve_http() -> None:
    from trio_mcp.http import serve

    async with trio.open_nursery() as nursery:
        port = await nursery.start(partial(serve, server, port=0))
        print(port, flush=True)


if __name__ == "__main__":
    note(f"pid {os.getpid()}")
    if sys.argv[2:] == ["--http"]:
        trio.run(serve_http)
    else:
        trio_mcp.run(server)
