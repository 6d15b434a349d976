"""Which server a command talks to, and how to open a client to it."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from .._client._client import Client
from .._client._stdio import open_stdio_client


def add_target_options(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    target = parser.add_mutually_exclusive_group(required=required)
    target.add_argument(
        "--stdio", metavar="'CMD ARGS'", help="start the server with this command line"
    )
    target.add_argument("--url", help="connect to a Streamable HTTP (or HTTP+SSE) server")
    parser.add_argument(
        "--protocol-version", metavar="V", help="speak this revision (no era detection)"
    )
    parser.add_argument(
        "--shutdown-grace",
        type=float,
        default=2.0,
        metavar="SECONDS",
        help="stdio: seconds for each step of the shutdown ladder (default 2; 0: no waiting "
        "between steps; inf: never signal the server)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="give up on the whole command after this long (default 60; 0 for never)",
    )
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


@asynccontextmanager
async def open_target(args: argparse.Namespace, **client_options: Any) -> AsyncIterator[Client]:
    if args.protocol_version:
        client_options["protocol_version"] = args.protocol_version
    if args.url:
        from .._http._client import open_http_client  # loaded only for --url

        async with open_http_client(args.url, **client_options) as client:
            yield client
        return
    command = shlex.split(args.stdio)
    if not command:
        raise ValueError("--stdio needs a command")
    if not args.shutdown_grace >= 0:  # also NaN
        raise ValueError("--shutdown-grace must be 0 or more seconds")
    async with open_stdio_client(
        command, grace=args.shutdown_grace, stderr=_quiet, **client_options
    ) as client:
        yield client


def _quiet(line: str) -> None:
    """The server's stderr is not our output; keep it out of the way."""
