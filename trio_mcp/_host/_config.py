"""How a host reaches each of its servers."""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

import attrs

from .._transports._stderr import DEFAULT_STDERR_RATE
from ._config_keys import ConfigError, check_entry
from ._policy import ServerPolicy, parse_policy

if TYPE_CHECKING:
    from .._server._server import ServeOptions, Server

__all__ = [
    "ConfigError",
    "HttpServerConfig",
    "InProcessServerConfig",
    "ServerConfig",
    "StdioServerConfig",
    "parse_config",
    "validate_name",
]

_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def _argv(value: Iterable[str]) -> tuple[str, ...]:
    if isinstance(value, str):
        # Iterating it would make one argument per character.
        raise TypeError(
            f"command must be a sequence of strings (the program and its arguments), "
            f"not the string {value!r}: use shlex.split, or parse_config"
        )
    argv = tuple(value)
    for part in argv:
        if not isinstance(part, str):
            raise TypeError(f"command: expected strings, got {type(part).__name__} {part!r}")
    if not argv:
        raise ValueError("command must name a program")
    return argv


def _not_negative(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    if math.isnan(value) or value < 0:
        raise ValueError(f"{attribute.name} must be 0 or more seconds, got {value!r}")


@attrs.frozen(kw_only=True)
class StdioServerConfig:
    """A server the host starts as a child process."""

    command: tuple[str, ...] = attrs.field(converter=_argv)
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    #: Seconds for each step of the shutdown ladder.
    grace: float = attrs.field(default=2.0, validator=_not_negative)
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
    """A :class:`~trio_mcp.Server` of this program, joined to the host in memory.

    Each connection is a fresh :meth:`Server.serve <trio_mcp.Server.serve>` over a
    memory stream pair, run in the host's nursery; the ``Server`` object (and whatever
    state it keeps) outlives the connections. Useful for a host's built-in tools, and
    for tests.
    """

    server: Server
    #: Options of :meth:`Server.serve <trio_mcp.Server.serve>`
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
    inner mapping): ``{"command": "uvx", "args": [...], "env": {...}, "cwd": ...,
    "grace": 2}`` for stdio, ``{"url": "...", "headers": {...}}`` for HTTP.

    With ``args`` present, ``command`` is the program itself (a path may contain spaces,
    as in Claude Desktop's configuration); without ``args``, a string ``command`` is split
    the way a shell would (``"python server.py --flag"``). A list ``command`` is the
    argument list either way.

    Each entry may also give its policy (see :func:`~trio_mcp.host.parse_policy`):
    ``allowedTools``, ``blockedTools``, ``roots``, ``sampling``, ``elicitation``,
    ``timeout``, ``rateLimit``, ``burst``; and ``type`` (``"stdio"``, or ``"http"``,
    ``"streamable-http"``, ``"sse"`` for a URL), which several clients write.

    Parsing is strict: every key is checked for its type and range, and an unknown key is
    refused (other keys beside ``mcpServers`` at the top are left alone).

    Raises:
        ConfigError: (a :exc:`ValueError`) the first bad entry or key; the message names
            the server, the key and the type of the value found, as in ``server 'files',
            key 'allowedTools': expected a list of strings, got str 'read_*'``.
    """
    if not isinstance(config, Mapping):
        raise ConfigError(None, None, f"expected an object, got {type(config).__name__}")
    servers = config.get("mcpServers", config)
    if not isinstance(servers, Mapping):
        raise ConfigError(
            None, "mcpServers", f"expected an object of servers, got {type(servers).__name__}"
        )
    parsed: dict[str, ServerConfig] = {}
    for name, entry in servers.items():
        if not isinstance(name, str):
            raise ConfigError(None, None, f"a server name must be a string, got {name!r}")
        check_entry(name, entry)
        policy = parse_policy(entry)
        if "url" in entry:
            parsed[name] = HttpServerConfig(
                url=entry["url"], headers=entry.get("headers"), policy=policy
            )
            continue
        command = entry["command"]
        args: list[str] | None = entry.get("args")
        if isinstance(command, str):
            argv = [command] if args is not None else shlex.split(command)
        else:
            argv = list(command)
        if not argv:
            raise ConfigError(name, "command", "expected a program, got only blanks")
        parsed[name] = StdioServerConfig(
            command=(*argv, *(args or ())),
            env=entry.get("env"),
            cwd=entry.get("cwd"),
            grace=float(entry.get("grace", 2.0)),
            policy=policy,
        )
    return parsed
