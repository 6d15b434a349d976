"""A fleet member for the initialize-era tests: ``python tests/fleet_sessions_app.py STATE``
serves Streamable HTTP on a free port of 127.0.0.1 as one worker of the fleet sharing
STATE (a Redis URL), and prints the port once it serves (``... STATE IDLE``: sessions
end after IDLE seconds without traffic; ``... STATE IDLE sigterm``: it shuts down
gracefully on SIGTERM). The caller is named by the
``x-user`` header. Its tools say which process ran them (``where``), raise a list change
(``grow``), ask the client's model (``ask``), wait to be cancelled (``hang``, then
``was_cancelled``), and report numbered progress (``count``)."""

from __future__ import annotations

import os
import signal
import sys
from functools import partial

import trio

from trio_mcp import Context, Server

IDLE_TIMEOUT = float(sys.argv[2]) if len(sys.argv) > 2 else 600.0
#: ``... STATE IDLE sigterm``: SIGTERM shuts the worker down gracefully.
ON_SIGTERM = len(sys.argv) > 3 and sys.argv[3] == "sigterm"

server = Server("fleet-sessions")
cancelled: list[str] = []
grown = 0


@server.tool
def where() -> str:
    """The id of the process that runs this tool."""
    return str(os.getpid())


@server.tool
def grow() -> str:
    """Add a tool: the standalone streams of the sessions hear that the list changed."""
    global grown
    grown += 1
    server.add_tool(lambda: "extra", name=f"extra{grown}")
    return f"grew {grown}"


@server.tool
async def ask(ctx: Context, question: str) -> str:
    """Ask the client's model (sampling), from the process holding the session."""
    result = await ctx.sample(question, max_tokens=10)
    return f"{os.getpid()} heard: {result.content.text}"  # type: ignore[union-attr]


@server.tool
async def hang(ctx: Context, name: str) -> str:
    """Report progress once, then wait until cancelled (the name is then listed by
    ``was_cancelled``)."""
    await ctx.report_progress(1)
    try:
        await trio.sleep_forever()
    finally:
        cancelled.append(name)
    return "never"


@server.tool
def was_cancelled() -> str:
    """The names of the ``hang`` calls cancelled so far."""
    return ",".join(cancelled)


@server.tool
async def count(ctx: Context, upto: int, pause: float = 0.0) -> str:
    """Report progress ``1`` to ``upto`` (``pause`` seconds apart), then answer."""
    for n in range(1, upto + 1):
        await ctx.report_progress(n, upto)
        await trio.sleep(pause)
    return f"counted to {upto}"


def user(scope: dict[str, object]) -> str | None:
    for name, value in scope["headers"]:  # type: ignore[attr-defined]
        if name == b"x-user":
            return str(value.decode())
    return None


async def sigterm() -> None:
    """Return at the first SIGTERM."""
    with trio.open_signal_receiver(signal.SIGTERM) as signals:
        async for _ in signals:
            return


async def main() -> None:
    from trio_mcp.http import serve

    async with trio.open_nursery() as nursery:
        port = await nursery.start(
            partial(
                serve,
                server,
                port=0,
                graceful_timeout=1,
                state=sys.argv[1],
                principal=user,
                session_idle_timeout=IDLE_TIMEOUT,
                shutdown_trigger=sigterm if ON_SIGTERM else None,
            )
        )
        print(port, flush=True)


if __name__ == "__main__":
    trio.run(main)
