"""How a host reaches each of its servers."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

import attrs

from .._transports._stderr import DEFAULT_STDERR_RATE
from ._policy import ServerPolicy, parse_policy

if TYPE_CHECKING:
    from .._server._server import ServeOptions, Server

__all__ = [
    "HttpServerConfig",
    "InProcessServerConfig",
    "ServerConfig",
    "StdioServerConfig",
    "parse_config",
    "validate_name",
]

_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def _argv(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(str(part) for part in value)


@attrs.frozen(kw_only=True)
class StdioServerConfig:
    """A server the host starts as a child process."""

    command: tuple[str, ...] = attrs.field(converter=_argv)
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    #: Seconds for each step of the shutdown ladder.
    grace: float = 2.0
    #: The most stderr lines a second logged for this server; past it they are counted and
    #: dropped, so a child flooding stderr costs the host little (``math.inf``: log all).
    stderr_rate: float = DEFAULT_STDERR_RATE
    #: What the host lets this server do (see :class:`~trio_mcp.host.ServerPolicy`).
    policy: ServerPolicy = attrs.Factory(ServerPolicy)


@attrs.frozen(kw_only=True)
class HttpServerConfig:
    """A server the host reaches over HTTP (Streamable HTTP or the legacy HTTP+SSE)."""

    url: str
    headers: Mapping[str, str] | None = None
    #: What the host lets this server do (see :class:`~trio_mcp.host.ServerPolicy`).
    policy: ServerPolicy = attrs.Factory(ServerPolicy)


@attrs.frozen(kw_only=True)
class InProcessServerConfig:
    """A :class:`~trio_mcp.server.Server` of this program, joined to the host in memory.

    Each connection is a fresh :meth:`Server.serve <trio_mcp.server.Server.serve>` over a
    memory stream pair, run in the host's nursery; the ``Server`` object (and whatever
    state it keeps) outlives the connections. Useful for a host's built-in tools, and
    for tests.
    """

    server: Server
    #: Options of :meth:`Server.serve <trio_mcp.server.Server.serve>`
    #: (:class:`~trio_mcp.server.ServeOptions`: the session's settings, ``principal``).
    server_options: ServeOptions | None = None
    #: How many messages each direction of the memory stream buffers.
    buffer: int = 64
    #: What the host lets this server do (see :class:`~trio_mcp.host.ServerPolicy`).
    policy: ServerPolicy = attrs.Factory(ServerPolicy)


ServerConfig: TypeAlias = StdioServerConfig | HttpServerConfig | InProcessServerConfig


def validate_name(name: str, separator: str) -> str:
    """Server names prefix tool and prompt names, so they follow the tool-name rules and
    cannot contain the separator."""
    if not _NAME.fullmatch(name) or separator in name:
        raise ValueError(
            f"invalid server name {name!r}: use 1 to 64 of A-Z a-z 0-9 _ . - and not {separator!r}"
        )
    return name


def parse_config(config: Mapping[str, Any]) -> dict[str, ServerConfig]:
    """Server configs from the common JSON shape (``{"mcpServers": {name: {...}}}`` or the
    inner mapping): ``{"command": "uvx", "args": [...], "env": {...}, "cwd": ...}`` for
    stdio, ``{"url": "...", "headers": {...}}`` for HTTP.

    With ``args`` present, ``command`` is the program itself (a path may contain spaces,
    as in Claude Desktop's configuration); without ``args``, a string ``command`` is split
    the way a shell would (``"python server.py --flag"``). A list ``command`` is the
    argument list either way.

    Each entry may also give its policy (see :func:`~trio_mcp.host.parse_policy`):
    ``allowedTools``, ``blockedTools``, ``roots``, ``sampling``, ``elicitation``,
    ``timeout``, ``rateLimit``, ``burst``.

    Raises:
        ValueError: an entry that is neither.
    """
    servers = config.get("mcpServers", config)
    parsed: dict[str, ServerConfig] = {}
    for name, entry in servers.items():
        if not isinstance(entry, Mapping):
            raise ValueError(f"server {name!r}: expected an object")  # noqa: TRY004 - bad config
        if "url" in entry:
            parsed[name] = HttpServerConfig(
                url=str(entry["url"]), headers=entry.get("headers"), policy=parse_policy(entry)
            )
        elif "command" in entry:
            command = entry["command"]
            args: Sequence[str] | None = entry.get("args")
            if isinstance(command, str):
                argv = [command] if args is not None else shlex.split(command)
            else:
                argv = list(command)
            args = args or ()
            parsed[name] = StdioServerConfig(
                command=(*argv, *args),
                env=entry.get("env"),
                cwd=entry.get("cwd"),
                grace=float(entry.get("grace", 2.0)),
                policy=parse_policy(entry),
            )
        else:
            raise ValueError(f"server {name!r}: give either 'command' or 'url'")
    return parsed
