"""What to fuzz: a command to run as a stdio server, or the URL of a Streamable HTTP one."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import Literal, TypeAlias
from urllib.parse import urlsplit

import attrs

__all__ = ["HttpTarget", "StdioTarget", "Target"]


def _command(value: Sequence[str] | str) -> tuple[str, ...]:
    parts = tuple(shlex.split(value)) if isinstance(value, str) else tuple(value)
    if not parts:
        raise ValueError("the command is empty")
    return parts


@attrs.frozen(kw_only=True)
class StdioTarget:
    """A server started as a child process and spoken to over its stdin and stdout.

    Attributes:
        command: the program and its arguments (a string is split like a shell would).
        env: variables for the child, on top of the usual minimal environment
            (``PATH``, ``HOME``, ``LANG``...; see
            :func:`~trio_mcp.transports.default_environment`).
        cwd: the child's working directory.
        process: ``"per-example"`` (default): a fresh process for every
            Hypothesis example, so examples are independent and shrink well;
            ``"per-run"``: one process for the whole run, or one per era when the
            server speaks both (faster; examples share the process's history, which a
            reproduction then includes).
    """

    command: tuple[str, ...] = attrs.field(converter=_command)
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    process: Literal["per-example", "per-run"] = "per-example"

    def describe(self) -> str:
        return shlex.join(self.command)


def _url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"not an http(s) URL: {value!r}")
    return value


@attrs.frozen(kw_only=True)
class HttpTarget:
    """A Streamable HTTP server at ``url`` (its MCP endpoint).

    Only that URL is ever contacted: redirects are not followed and proxy
    settings from the environment are ignored.

    Attributes:
        url: the MCP endpoint, e.g. ``http://127.0.0.1:8000/mcp``.
        headers: extra headers for every request (authorization, say).
    """

    url: str = attrs.field(converter=_url)
    headers: Mapping[str, str] = attrs.field(factory=dict)

    def describe(self) -> str:
        return self.url


Target: TypeAlias = StdioTarget | HttpTarget
