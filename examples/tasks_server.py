"""A Streamable HTTP server whose long tool calls run as tasks (the
``io.modelcontextprotocol/tasks`` extension), recorded in a durable store.

    python examples/tasks_server.py --port 8000 --store sqlite:///tmp/tasks.db

As one worker of a fleet (run several, on other ports or machines, with the same Redis):

    python examples/tasks_server.py --port 8001 --redis redis://127.0.0.1:6379/0

Tools:

- ``slow(seconds)`` sleeps, then answers. A client that declares the extension gets a
  task id at once and polls ``tasks/get`` for the result (``Client.call_tool(...,
  as_task=True)`` does that for you); any other client waits for the answer, as for a
  plain call.
- ``ask()`` asks the user for a name through the task (the task goes
  ``input_required`` until the client answers with ``tasks/update``), then greets.

``--store`` names where tasks are recorded: ``memory:`` (the default; gone with the
process), ``sqlite:///path/file.db`` (survives a restart: a finished task's result is
still there, a task that was running when the process died reads ``failed``), or
``redis://host:port/db`` (shared by a fleet of workers; needs the ``tasks-redis`` extra).
``--redis URL`` makes the server one worker of the fleet sharing that Redis (the
``state=`` of ``serve``): its tasks are recorded there (unless ``--store`` names another
store), and the rest crosses workers too (input rounds, change notifications, sessions),
so any worker reads, updates and cancels a task another one runs.
The server prints ``tasks server on http://HOST:PORT/mcp`` once it listens.
"""

from __future__ import annotations

import argparse
import sys
from functools import partial
from typing import Annotated, Final

import trio

from trio_mcp import Context, Server
from trio_mcp.http import serve
from trio_mcp.server import Field, TaskSettings

#: The longest ``slow`` sleeps, in seconds.
MAX_SLEEP: Final = 3600


def make_server(store: str) -> Server:
    server = Server("tasks-example", tasks=TaskSettings(store=store, poll_interval_ms=100))

    @server.tool(task="optional")
    async def slow(
        seconds: Annotated[float, Field(schema={"minimum": 0, "maximum": MAX_SLEEP})],
        ctx: Context,
    ) -> str:
        """Sleep for ``seconds`` (at most an hour: a server bounds what a caller can make
        it hold), then say so."""
        await ctx.report_progress(0, seconds, "started")
        await trio.sleep(seconds)
        return f"slept {seconds:g} s"

    @server.tool(task="always")
    async def ask(ctx: Context) -> str:
        """Ask for a name, then greet."""
        answer = await ctx.elicit(
            "What is your name?", {"type": "object", "properties": {"name": {"type": "string"}}}
        )
        return f"Hello, {(answer.content or {}).get('name', 'stranger')}!"

    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument(
        "--store", help="where tasks are recorded: memory: (the default), sqlite:///FILE, redis://…"
    )
    parser.add_argument(
        "--redis",
        metavar="URL",
        help="serve as one worker of the fleet sharing this Redis (redis://host:port/db): "
        "tasks, input rounds, notifications and sessions cross workers "
        "(its tasks are recorded there unless --store says otherwise)",
    )
    args = parser.parse_args()
    server = make_server(args.store or args.redis or "memory:")

    async def run() -> None:
        async with trio.open_nursery() as nursery:
            port = await nursery.start(
                partial(serve, server, args.host, args.port, state=args.redis)
            )
            print(f"tasks server on http://{args.host}:{port}/mcp", flush=True)

    failed: BaseException | None = None
    try:
        trio.run(run)
    except* RuntimeError as group:  # the store cannot be opened, say
        failed = group.exceptions[0]
    if failed is not None:
        sys.exit(f"tasks_server.py: {failed}")  # one line, and exit status 1


if __name__ == "__main__":
    main()
