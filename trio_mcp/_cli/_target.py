"""Which server a command talks to, and how to open a client to it.

Every command that connects takes the same options (:func:`add_target_options`), and
:func:`open_target` is the one place that turns them into a client: an option that every
connecting command should have (credentials, say) is added in these two functions.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Unpack

import attrs
import orjson
import trio

from .._client._client import Client
from .._client._options import ClientOptions
from .._client._stdio import open_stdio_client
from .._errors import McpError
from .._extras import require_extra
from .._transports._stream import Received
from .._transports._tap import Direction
from . import _lazy
from ._authorization_hint import authorization_hint
from ._errors import CliError
from ._raw import raw_printer

__all__ = [
    "Target",
    "add_server_options",
    "add_target_options",
    "config_servers",
    "open_target",
    "parse_env",
    "parse_headers",
]

#: An HTTP header name (RFC 9110 token).
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_ENV_NAME = re.compile(r"[^=\0]+")
#: Headers the HTTP transport writes itself (framing, the connection, the MCP headers, what
#: it accepts and sends), lowercase: ``--header`` cannot set them.
TRANSPORT_HEADERS = frozenset(
    {
        "accept",
        "connection",
        "content-length",
        "content-type",
        "host",
        "keep-alive",
        "last-event-id",
        "mcp-method",
        "mcp-name",
        "mcp-protocol-version",
        "mcp-session-id",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)

if TYPE_CHECKING:
    from .._auth._client._oauth import OAuth
    from .._host._config import ServerConfig

#: Where ``--client-credentials`` reads the client secret (never from the command line).
CLIENT_SECRET_VARIABLE = "TRIO_MCP_CLIENT_SECRET"


def add_target_options(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    """The options of every command that connects to a server."""
    add_server_options(
        parser,
        required=required,
        url_help="connect to a Streamable HTTP (or HTTP+SSE) server, or to a WebSocket "
        "server (a ws:// or wss:// URL)",
    )
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
    parser.add_argument(
        "--strict",
        action="store_true",
        help="check every message sent and received against the official JSON Schema of "
        "the revision spoken (exit 1 on a violation)",
    )
    parser.add_argument(
        "--spec-dir",
        metavar="DIR",
        help="--strict: the directory of schema-<version>.json files (default $TRIO_MCP_SPEC_DIR)",
    )
    parser.add_argument(
        "--output",
        choices=("text", "raw"),
        default="text",
        help="raw: print the JSON-RPC messages as sent (>) and received (<), one a line, "
        "instead of the command's output",
    )
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


def add_server_options(parser: argparse.ArgumentParser, *, required: bool, url_help: str) -> None:
    """The options that name a server and how to reach it (``--stdio`` or ``--url``, with
    ``--env``, ``--cwd``, ``--header``): those of every command that connects, and of
    ``fuzz`` and ``replay``. Read them back with :func:`parse_env` and
    :func:`parse_headers`."""
    target = parser.add_mutually_exclusive_group(required=required)
    target.add_argument(
        "--stdio", metavar="'CMD ARGS'", help="start the server with this command line"
    )
    target.add_argument("--url", help=url_help)
    target.add_argument(
        "--config",
        metavar="FILE",
        help="a servers file (the mcpServers JSON that hosts read): the server --server "
        "names in it",
    )
    parser.add_argument(
        "--server",
        metavar="NAME",
        help="--config: which server of the file (needed when it has more than one)",
    )
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="stdio: set a variable for the server (repeatable); it gets a minimal "
        "environment otherwise",
    )
    parser.add_argument("--cwd", metavar="DIR", help="stdio: the server's working directory")
    parser.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="http: send this header with every request (repeatable), such as "
        "'Authorization: Bearer TOKEN'",
    )


@attrs.frozen(kw_only=True)
class Target:
    """The server the options name, checked."""

    command: tuple[str, ...] | None = None
    url: str | None = None
    env: dict[str, str] = attrs.Factory(dict)
    cwd: str | None = None
    headers: dict[str, str] = attrs.Factory(dict)
    protocol_version: str | None = None
    shutdown_grace: float = 2.0

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Target:
        """Raises :exc:`CliError` for options that do not fit together or do not parse."""
        if getattr(args, "config", None) is not None:
            return cls.from_config(args)
        if getattr(args, "server", None) is not None:
            raise CliError("--server names a server of a --config file")
        if args.url is not None:
            if args.env or args.cwd is not None:
                raise CliError("--env and --cwd are for a server started with --stdio")
            return cls(
                url=args.url,
                headers=parse_headers(args.header),
                protocol_version=args.protocol_version,
            )
        if args.header:
            raise CliError("--header is for a server reached with --url")
        if getattr(args, "auth", False) or getattr(args, "client_credentials", None):
            raise CliError("--auth and --client-credentials apply to --url only")
        command = tuple(shlex.split(args.stdio))
        if not command:
            raise CliError("--stdio needs a command")
        if not args.shutdown_grace >= 0:  # also NaN
            raise CliError("--shutdown-grace must be 0 or more seconds")
        if args.cwd is not None and not os.path.isdir(args.cwd):
            raise CliError(f"--cwd {args.cwd}: no such directory")
        return cls(
            command=command,
            env=parse_env(args.env),
            cwd=args.cwd,
            protocol_version=args.protocol_version,
            shutdown_grace=args.shutdown_grace,
        )

    @classmethod
    def from_config(cls, args: argparse.Namespace) -> Target:
        """The server ``--server`` names in the ``--config`` file, read strictly by the
        host's parser (an entry's policy keys are checked too, and ignored here). The
        command line's ``--env`` and ``--header`` add to the entry's (and win).

        Raises:
            CliError: the file cannot be read or parsed (the message names the server and
                the key), or ``--server`` names no server of it.
        """
        from .._host._config import HttpServerConfig, StdioServerConfig

        servers = config_servers(args.config)
        name = args.server
        if name is None:
            if len(servers) != 1:
                raise CliError(
                    f"--config {args.config} has {len(servers)} servers: name one with "
                    f"--server ({', '.join(sorted(servers)) or 'none'})"
                )
            (name,) = servers
        if name not in servers:
            raise CliError(
                f"--config {args.config} has no server {name!r} "
                f"(it has {', '.join(sorted(servers)) or 'none'})"
            )
        entry = servers[name]
        if isinstance(entry, HttpServerConfig):
            if args.env or args.cwd is not None:
                raise CliError(f"--env and --cwd are for a stdio server; {name!r} has a url")
            return cls(
                url=entry.url,
                headers={**(entry.headers or {}), **parse_headers(args.header)},
                protocol_version=getattr(args, "protocol_version", None),
            )
        assert isinstance(entry, StdioServerConfig)
        if args.header:
            raise CliError(f"--header is for a server with a url; {name!r} is started")
        return cls(
            command=tuple(entry.command),
            env={**(entry.env or {}), **parse_env(args.env)},
            cwd=args.cwd if args.cwd is not None else entry.cwd,
            protocol_version=getattr(args, "protocol_version", None),
            shutdown_grace=entry.grace,
        )


def config_servers(path: str) -> dict[str, ServerConfig]:
    """The servers of the ``--config`` file at ``path`` (name → the host's
    ``HttpServerConfig`` or ``StdioServerConfig``), read strictly by the host's parser.

    Raises:
        CliError: the file cannot be read or parsed (the message names the server and
            the key).
    """
    # Here: only --config loads the host's parser.
    from .._host._config import parse_config
    from .._host._config_keys import ConfigError

    try:
        with open(path, "rb") as file:
            document = orjson.loads(file.read())
    except OSError as exc:
        raise CliError(f"--config {path}: {exc.strerror or exc}") from None
    except orjson.JSONDecodeError as exc:
        raise CliError(f"--config {path}: not JSON: {exc}") from None
    if not isinstance(document, dict):
        raise CliError(f"--config {path}: expected a JSON object")
    try:
        return dict(parse_config(document))
    except ConfigError as exc:
        raise CliError(f"--config {path}: {exc}") from None


def parse_env(items: Sequence[str]) -> dict[str, str]:
    """``NAME=VALUE`` items as a mapping (the value may contain ``=``)."""
    env = {}
    for item in items:
        name, equals, value = item.partition("=")
        if not equals or not _ENV_NAME.fullmatch(name):
            raise CliError(f"--env expects NAME=VALUE, not {item!r}")
        env[name] = value
    return env


def parse_headers(items: Sequence[str]) -> dict[str, str]:
    """``NAME: VALUE`` items as a mapping (surrounding spaces of the value dropped).

    A header in :data:`TRANSPORT_HEADERS` (or an ``Mcp-Param-*`` one) is refused: the
    transport writes those, and a second value would break the request or the session."""
    headers = {}
    for item in items:
        name, colon, value = item.partition(":")
        if not colon or not _HEADER_NAME.fullmatch(name.strip()):
            raise CliError(f"--header expects 'NAME: VALUE', not {item!r}")
        if "\r" in value or "\n" in value:
            raise CliError(f"--header {name.strip()}: a value cannot span lines")
        if name.strip().lower() in TRANSPORT_HEADERS or name.strip().lower().startswith(
            "mcp-param-"
        ):
            raise CliError(
                f"--header {name.strip()}: the transport sets this header itself; "
                "it cannot be given"
            )
        headers[name.strip()] = value.strip()
    return headers


@asynccontextmanager
async def open_target(
    args: argparse.Namespace, **client_options: Unpack[ClientOptions]
) -> AsyncIterator[Client]:
    """A client of the server the command's options name, for the block (``client_options``
    go to the client: handlers such as ``on_log``)."""
    target = Target.from_args(args)
    if target.protocol_version:
        client_options["protocol_version"] = target.protocol_version
    taps = []
    if getattr(args, "raw_output", None) is not None:
        taps.append(raw_printer(args.raw_output))
    recorder = getattr(args, "strict_recorder", None)
    if recorder is not None:
        taps.append(recorder.tap)
    if taps:

        def on_message(direction: Direction, message: Received) -> None:
            for tap in taps:
                tap(direction, message)

        client_options["on_message"] = on_message
    async with _opened(target, args, client_options) as client:
        if recorder is not None:
            recorder.version = client.protocol_version
        yield client


@asynccontextmanager
async def _opened(
    target: Target, args: argparse.Namespace, client_options: ClientOptions
) -> AsyncIterator[Client]:
    if target.url is not None and is_websocket(target.url):
        require_extra("http", "--url ws://", "trio_websocket", "httpx")
        async with (
            _authorization(args) as auth,
            _websocket_refusals(target.url),
            _lazy.open_websocket_client(
                target.url, headers=target.headers or None, auth=auth, **client_options
            ) as client,
        ):
            yield client
        return
    if target.url is not None:
        require_extra("http", "--url", "httpx", "httpx_sse")
        async with _authorization(args) as auth:
            try:
                async with _lazy.open_http_client(
                    target.url, headers=target.headers or None, auth=auth, **client_options
                ) as client:
                    yield client
            except McpError as exc:
                if auth is not None:
                    raise
                hint = await authorization_hint(target.url, target.headers)
                if hint is None:
                    raise
                raise CliError(f"{exc.message}: {hint}") from None
        return
    assert target.command is not None
    async with open_stdio_client(
        target.command,
        env=target.env or None,
        cwd=target.cwd,
        grace=target.shutdown_grace,
        stderr=_quiet,
        **client_options,
    ) as client:
        yield client


def is_websocket(url: str) -> bool:
    """Whether ``url`` names a WebSocket server (``ws://`` or ``wss://``)."""
    return url.partition(":")[0].lower() in ("ws", "wss")


@asynccontextmanager
async def _websocket_refusals(url: str) -> AsyncIterator[None]:
    """A refused WebSocket handshake, as one line naming the URL and the status."""
    try:
        yield
    except _lazy.trio_websocket.ConnectionRejected as exc:
        hint = None
        if exc.status_code == 401:
            hint = await authorization_hint(
                "http" + url[2:], {}, challenge=_header(exc.headers, b"www-authenticate")
            )
        raise CliError(
            f"{url} refused the WebSocket connection: HTTP {exc.status_code}"
            + (f": {hint}" if hint else "")
        ) from None
    except _lazy.trio_websocket.HandshakeError as exc:
        raise CliError(f"cannot open a WebSocket to {url}: {exc!r}") from None


def _header(headers: Sequence[tuple[bytes, bytes]] | None, name: bytes) -> str | None:
    for key, value in headers or ():
        if key.lower() == name:
            return value.decode("latin-1")
    return None


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

    directory = getattr(args, "token_store", None)
    store = _lazy.FileTokenStore(await trio.Path(directory).expanduser()) if directory else None
    if client_id:
        secret = os.environ.get(CLIENT_SECRET_VARIABLE)
        if not secret:
            raise CliError(f"--client-credentials needs the secret in ${CLIENT_SECRET_VARIABLE}")
        yield _lazy.OAuth(
            _lazy.ClientCredentials(_lazy.ClientInfo(client_id, secret)), token_store=store
        )
        return
    async with _lazy.open_loopback_redirect(open_browser=_show) as redirect:
        grant = _lazy.AuthorizationCode(redirect, redirect.redirect_uri, client_name="trio-mcp")
        yield _lazy.OAuth(grant, token_store=store)


def _show(url: str) -> None:
    """Open the authorization page, and print its address for a machine without one."""
    print(f"Log in at: {url}", file=sys.stderr, flush=True)
    _lazy.webbrowser.open(url)


def _quiet(line: str) -> None:
    """The server's stderr is not our output; keep it out of the way."""
