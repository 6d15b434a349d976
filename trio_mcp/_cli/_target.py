"""Which server a command talks to, and how to open a client to it."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import trio

from .._client._client import Client
from .._client._stdio import open_stdio_client

if TYPE_CHECKING:
    from .._auth._client._oauth import OAuth

#: Where ``--client-credentials`` reads the client secret (never from the command line).
CLIENT_SECRET_VARIABLE = "TRIO_MCP_CLIENT_SECRET"


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
    login = parser.add_mutually_exclusive_group()
    login.add_argument(
        "--auth",
        action="store_true",
        help="--url: log in with OAuth in a browser when the server asks for it",
    )
    login.add_argument(
        "--client-credentials",
        metavar="CLIENT_ID",
        help=f"--url: get a token with the client credentials grant (the secret is read "
        f"from ${CLIENT_SECRET_VARIABLE})",
    )
    parser.add_argument(
        "--token-store",
        metavar="DIR",
        help="--url: keep OAuth tokens in this directory (files of mode 0600) between runs",
    )


@asynccontextmanager
async def open_target(args: argparse.Namespace, **client_options: Any) -> AsyncIterator[Client]:
    if args.protocol_version:
        client_options["protocol_version"] = args.protocol_version
    if args.url:
        from .._http._client import open_http_client  # loaded only for --url

        async with _authorization(args) as auth:
            if auth is not None:
                client_options["auth"] = auth
            async with open_http_client(args.url, **client_options) as client:
                yield client
        return
    if getattr(args, "auth", False) or getattr(args, "client_credentials", None):
        raise ValueError("--auth and --client-credentials apply to --url only")
    command = shlex.split(args.stdio)
    if not command:
        raise ValueError("--stdio needs a command")
    if not args.shutdown_grace >= 0:  # also NaN
        raise ValueError("--shutdown-grace must be 0 or more seconds")
    async with open_stdio_client(
        command, grace=args.shutdown_grace, stderr=_quiet, **client_options
    ) as client:
        yield client


@asynccontextmanager
async def _authorization(args: argparse.Namespace) -> AsyncIterator[OAuth | None]:
    """The OAuth flow ``--auth`` or ``--client-credentials`` asks for (``None``: none).
    For ``--auth`` the loopback redirect exists for the block, listening only while the
    user logs in."""
    interactive = getattr(args, "auth", False)
    client_id = getattr(args, "client_credentials", None)
    if not interactive and not client_id:
        yield None
        return
    from ..auth import (  # loaded only when authorizing
        AuthorizationCode,
        ClientCredentials,
        ClientInfo,
        FileTokenStore,
        OAuth,
        open_loopback_redirect,
    )

    directory = getattr(args, "token_store", None)
    store = FileTokenStore(await trio.Path(directory).expanduser()) if directory else None
    if client_id:
        secret = os.environ.get(CLIENT_SECRET_VARIABLE)
        if not secret:
            raise ValueError(f"--client-credentials needs the secret in ${CLIENT_SECRET_VARIABLE}")
        yield OAuth(ClientCredentials(ClientInfo(client_id, secret)), token_store=store)
        return
    async with open_loopback_redirect(open_browser=_show) as redirect:
        grant = AuthorizationCode(redirect, redirect.redirect_uri, client_name="trio-mcp")
        yield OAuth(grant, token_store=store)


def _show(url: str) -> None:
    """Open the authorization page, and print its address for a machine without one."""
    import webbrowser  # only for a login

    print(f"Log in at: {url}", file=sys.stderr, flush=True)
    webbrowser.open(url)


def _quiet(line: str) -> None:
    """The server's stderr is not our output; keep it out of the way."""
