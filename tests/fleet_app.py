"""A fleet member for the tests: ``python tests/fleet_app.py PORT STORE LOG`` serves
Streamable HTTP on 127.0.0.1:PORT with its tasks in STORE (``redis://...``), and appends to
LOG what its ``hold`` tool sees (``started PID``, ``cancelled PID``, ``done PID``). Prints
the port once it serves."""

from __future__ import annotations

import os
import sys
from functools import partial

import trio

from trio_mcp import Context, Server
from trio_mcp.server import TaskSettings

PORT, STORE, LOG = int(sys.argv[1]), sys.argv[2], sys.argv[3]

server = Server("fleet", tasks=TaskSettings(store=STORE))


def note(what: str) -> None:
    with open(LOG, "a") as log:
        log.write(f"{what} {os.getpid()}\n")


@server.tool(task="optional")
async def hold(seconds: float) -> str:
    """Wait ``seconds``, noting its start and its end (or cancellation)."""
    note("started")
    try:
        await trio.sleep(seconds)
    except trio.Cancelled:
        note("cancelled")
        raise
    note("done")
    return "held"


@server.tool(task="optional")
async def confirm(ctx: Context) -> str:
    """Ask a yes/no question, noting who answered where."""
    answer = await ctx.elicit("Go on?", {"properties": {"ok": {"type": "boolean"}}}, key="go")
    note(f"answered {answer.action}")
    return f"confirmed: {(answer.content or {}).get('ok')}"


async def main() -> None:
    from trio_mcp.http import serve

    async with trio.open_nursery() as nursery:
        port = await nursery.start(partial(serve, server, port=PORT, graceful_timeout=1))
        print(port, flush=True)


if __name__ == "__main__":
    trio.run(main)
