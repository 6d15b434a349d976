"""The server the worker tests run in worker processes: ``pid`` says which process
answered, ``wait`` holds a call open. Run as a script it serves with two workers from
``__main__`` and prints the port: ``python tests/workers_app.py GRACE``."""

from __future__ import annotations

import os
import sys
from functools import partial

import trio

from trio_mcp import Context, Server

server = Server("workers", version="1.0.0")


@server.tool()
def pid() -> int:
    """The id of the process that answers."""
    return os.getpid()


@server.tool()
async def wait(seconds: float) -> str:
    """Answer after ``seconds``."""
    await trio.sleep(seconds)
    return "done"


@server.tool()
async def ask_name(ctx: Context) -> str:
    """An input round: the name, asked by one process, greeted by whichever answers."""
    answer = await ctx.elicit(
        f"Name? (asked by {os.getpid()})", {"properties": {"name": {"type": "string"}}}, key="who"
    )
    assert answer.content is not None
    return f"Hello, {answer.content['name']}! (from {os.getpid()})"


def make_server() -> Server:
    """A factory, as ``"workers_app:make_server"`` names it."""
    return server


async def _main(grace: float) -> None:
    from trio_mcp.http import serve

    async with trio.open_nursery() as nursery:
        port = await nursery.start(
            partial(serve, server, port=0, workers=2, graceful_timeout=grace)
        )
        print(port, flush=True)


if __name__ == "__main__":
    trio.run(_main, float(sys.argv[1]))
