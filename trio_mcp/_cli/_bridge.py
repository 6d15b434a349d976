"""``trio-mcp bridge``: serve an MCP server over the other transport.

    trio-mcp bridge --stdio 'python server.py' --serve-http 8000   # stdio -> Streamable HTTP
    trio-mcp bridge --url http://127.0.0.1:8000/mcp                # HTTP -> stdio

The server behind the bridge is reached with the connecting commands' options (``--stdio``
or ``--url``, ``--header``, ``--auth``, ...); the bridge serves a proxy of it
(:mod:`._proxy`): over Streamable HTTP, both eras, with the HTTP server's limits and
Host/Origin checks (``--serve-http PORT``, on ``--host``, 127.0.0.1 by default), or over
this process's stdin and stdout. One connection to the server behind serves every client
of the bridge.

Shutdown: SIGINT or SIGTERM (or, over stdio, the client closing stdin) ends the serving
side; then the connection behind it is closed (a stdio server gets the close, SIGTERM,
SIGKILL ladder), so no child process is left.
"""

from __future__ import annotations

import argparse
import signal
import sys
from functools import partial
from typing import Any

import trio

from .._extras import require_extra
from .._server._stdio import run_stdio
from ._proxy import proxy_server
from ._target import add_target_options, open_target

__all__ = ["add_bridge_command", "run_bridge"]


def add_bridge_command(commands: Any) -> None:
    """Register ``bridge`` on the ``trio-mcp`` subparsers."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "bridge",
        help="serve a stdio server over Streamable HTTP, or an HTTP server over stdio",
        description=(
            "Serve the MCP server that --stdio or --url names over the other transport: "
            "over Streamable HTTP with --serve-http PORT, else over this process's stdin "
            "and stdout. Its tools (calls, progress, cancellation) its resources and its "
            "prompts are forwarded; templates, completions and the server's own requests "
            "are not."
        ),
    )
    add_target_options(parser)
    parser.add_argument(
        "--serve-http",
        type=int,
        metavar="PORT",
        help="serve Streamable HTTP on this port (0: a free one, printed on stderr)",
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="the address to serve HTTP on (127.0.0.1)"
    )
    parser.set_defaults(timeout=0.0)  # a bridge runs until it is stopped


async def run_bridge(args: argparse.Namespace) -> int:
    """Connect, build the proxy, serve until stopped. Blocks for the bridge's lifetime."""
    if args.serve_http is not None:
        require_extra("http", "trio-mcp bridge --serve-http", "hypercorn", "httpx")
    async with open_target(args) as client:
        server = await proxy_server(client)
        if args.serve_http is None:
            await run_stdio(server)
            return 0
        from ..http import serve

        async with trio.open_nursery() as nursery:
            port = await nursery.start(
                partial(
                    serve, server, args.host, args.serve_http, shutdown_trigger=_until_signalled
                )
            )
            print(f"bridge serving http://{args.host}:{port}/mcp", file=sys.stderr, flush=True)
    return 0


async def _until_signalled() -> None:
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for _ in signals:
            return
