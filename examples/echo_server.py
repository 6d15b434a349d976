"""An echo server: one tool, ``echo(text)``, returning the text. Over stdio by default, or
over Streamable HTTP (both protocol eras) on 127.0.0.1::

    python examples/echo_server.py                          # stdio
    python examples/echo_server.py --http 8000              # http://127.0.0.1:8000/mcp
    python examples/echo_server.py --http 8000 --workers 2  # two processes on one port
    python examples/echo_server.py --http 8000 --front-end hypercorn  # on Hypercorn
    python examples/echo_server.py --http 8000 --workers 2 --redis redis://127.0.0.1:6379/0
                                                            # a fleet sharing that Redis
    hypercorn --worker-class trio --workers 2 --bind 127.0.0.1:8000 \
        'examples/echo_server.py:make_app("redis://127.0.0.1:6379/0")'   # the same, on Hypercorn

SIGTERM or Ctrl-C shuts the HTTP server down gracefully: long-lived streams
end at once, requests in flight get ``--graceful`` seconds, then everything
still running is cancelled.
"""

from __future__ import annotations

import signal
import sys
from functools import partial

import trio

import trio_mcp
from trio_mcp import Server

server = Server("echo", version="1.0.0")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    # A plain function: it never waits, so a call is answered without a task of its own.
    return text


def make_app(redis: str | None = None) -> object:
    """The ASGI app, for ASGI servers run from the command line (Hypercorn's own
    ``--workers`` included). A factory, so that a stdio server never loads the HTTP stack.
    ``make_app("redis://host:6379/0")``: each process is one worker of the fleet sharing
    that Redis."""
    from trio_mcp.http import asgi_app

    return asgi_app(server, state=redis)


async def until_signalled() -> None:
    """Return at the first SIGTERM or SIGINT."""
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for _ in signals:
            return


async def serve_http(
    port: int,
    graceful: float,
    workers: int = 1,
    front_end: str | None = None,
    redis: str | None = None,
) -> None:
    from trio_mcp.http import serve

    options = {"front_end": front_end} if front_end else {}  # (else serve's default)
    async with trio.open_nursery() as nursery:
        bound = await nursery.start(
            partial(
                serve,
                server,
                "127.0.0.1",
                port,
                workers=workers,
                graceful_timeout=graceful,
                state=redis,  # None: this process alone; a URL: one worker of that fleet
                **options,
                shutdown_trigger=until_signalled,
            )
        )
        print(f"echo server on http://127.0.0.1:{bound}/mcp", file=sys.stderr, flush=True)


def main() -> None:
    if len(sys.argv) == 1:
        # Plain stdio, the common case: no options to parse, so no argparse to import
        # (about 5 ms of a 130 ms start).
        trio_mcp.run(server)
        return
    import argparse

    parser = argparse.ArgumentParser(description="An MCP echo server.")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve HTTP on this port")
    parser.add_argument("--workers", type=int, default=1, help="HTTP worker processes")
    parser.add_argument("--graceful", type=float, default=5.0, help="shutdown deadline (s)")
    parser.add_argument(
        "--front-end", choices=["httptools", "hypercorn"], help="the HTTP server (serve's default)"
    )
    parser.add_argument(
        "--redis",
        metavar="URL",
        help="share state with every other worker given this Redis (redis://host:port/db)",
    )
    args = parser.parse_args()
    if args.http is None:
        trio_mcp.run(server)
    else:
        trio.run(serve_http, args.http, args.graceful, args.workers, args.front_end, args.redis)


if __name__ == "__main__":
    main()
