"""A small trio_mcp server for the fuzzer's cross-talk and leaks scans, over stdio or
Streamable HTTP: correct as it stands, or deliberately broken under concurrency.

``python concurrency_server.py [--http] [BUG]``: with ``--http`` it serves on 127.0.0.1 (a
free port) and prints the MCP endpoint's URL as its first stdout line; otherwise it speaks
stdio. Its tool ``echo(text)`` reports progress (its message is the text), naps a moment,
then answers with the text. BUG is one of:

``mixed-answers``
    The text is kept in a module-level variable across the nap: under concurrency a
    call answers with another call's text.
``mixed-progress``
    The progress of a call is reported through the context of the latest call: it
    reaches another client, carrying this call's text.
``leaks-on-cancel``
    Every cancelled call leaves a megabyte behind, forever.
``loses-requests``
    Calls run five at a time, and each cancelled call (running or waiting) loses the pool
    a slot: after five cancellations, no call is ever answered again.
``dies-under-load``
    The process exits when more than twenty calls are in flight.
"""

from __future__ import annotations

import os
import signal
import sys
from functools import partial
from typing import Any

import trio
from hypercorn.config import Config
from hypercorn.trio import serve

import trio_mcp
from trio_mcp import Context, Server
from trio_mcp.http import asgi_app

BUG = next((a for a in sys.argv[1:] if not a.startswith("--")), None)
server = Server("concurrency-target", version="1.0.0", tools=True)
shared: dict[str, Any] = {}
kept: list[bytes] = []
POOL = 5
running = [0]
leaked = [0]


@server.tool()
async def echo(text: str, ctx: Context) -> str:
    """Reports progress (its message is the text), naps a moment, then says the text."""
    if BUG == "dies-under-load":
        running[0] += 1
        if running[0] > 20:
            os._exit(3)
    if BUG == "loses-requests":
        while running[0] >= POOL - leaked[0]:
            try:
                await trio.sleep(0.01)
            except trio.Cancelled:
                leaked[0] += 1  # the bug: a cancelled call's slot is lost, waiting or not
                raise
        running[0] += 1
    try:
        shared["text"], shared["ctx"] = text, ctx
        await trio.sleep(0.05)
        reporter = shared["ctx"] if BUG == "mixed-progress" else ctx
        await reporter.report_progress(1, 2, text)
        await trio.sleep(0.05)
    except trio.Cancelled:
        if BUG == "leaks-on-cancel":
            kept.append(bytes(1 << 20) + text.encode())
        if BUG == "loses-requests":
            running[0] -= 1
            leaked[0] += 1
        raise
    if BUG == "loses-requests":
        running[0] -= 1
    return str(shared["text"]) if BUG == "mixed-answers" else text


async def main_http() -> None:
    config = Config()
    config.bind = ["127.0.0.1:0"]
    config.loglevel = "WARNING"
    config.accesslog = None
    config.graceful_timeout = 1.0
    app = asgi_app(server)

    async def until_signalled() -> None:
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for _ in signals:
                app.begin_shutdown()
                return

    async with trio.open_nursery() as nursery:
        binds = await nursery.start(
            partial(serve, app, config, shutdown_trigger=until_signalled, mode="asgi")
        )
        print(binds[0] + "/mcp", flush=True)


if __name__ == "__main__":
    if "--http" in sys.argv:
        trio.run(main_http)
    else:
        trio_mcp.run(server)
