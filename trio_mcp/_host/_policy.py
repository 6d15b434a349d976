"""Per-server policy: which tools a server may offer, which roots it sees, which client
capabilities it is offered, and how long and how often its tools may be called."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase
from typing import Any

import attrs

from .._tool_text import fold
from .._types._roots import Root
from ._config_keys import check_policy

__all__ = ["RateLimiter", "ServerPolicy", "parse_policy"]


def _not_a_string(value: object, what: str) -> None:
    # Iterating a string would make one entry per character ("read_*" -> r, e, a, d, _, *).
    if isinstance(value, str | bytes):
        raise TypeError(f"{what} must be a list, not the string {value!r}")


def _patterns(value: Iterable[str] | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    _not_a_string(value, "tool patterns")
    return tuple(str(pattern) for pattern in value)


def _roots(value: Iterable[Root | str] | None) -> tuple[Root, ...] | None:
    if value is None:
        return None
    _not_a_string(value, "roots")
    return tuple(root if isinstance(root, Root) else Root(uri=str(root)) for root in value)


@attrs.frozen(kw_only=True)
class ServerPolicy:
    """What the host lets one server do. The default lets it do everything the host's
    consent hooks allow.

    Tool names in the patterns are the server's own (``forecast``, not
    ``weather__forecast``); patterns are shell globs (``read_*``, ``*``), matched without
    regard to case or Unicode compatibility forms (both sides NFKC-normalised and
    case-folded), so ``export_*`` blocks ``Export_all`` and its fullwidth spelling too.
    """

    #: Only tools matching one of these are offered and callable (``None``: every tool).
    allowed_tools: tuple[str, ...] | None = attrs.field(default=None, converter=_patterns)
    #: Tools matching one of these are hidden and refused, even if allowed above.
    blocked_tools: tuple[str, ...] = attrs.field(default=(), converter=_patterns)
    #: Tools matching one of these are called without asking by the default consent
    #: (which otherwise asks for every tool not annotated read-only): the user's grant, for
    #: servers whose tools carry no annotations. A ``tool_call`` hook of your own sees it
    #: as :attr:`ToolCallRequest.trusted <trio_mcp.host.ToolCallRequest.trusted>`.
    trusted_tools: tuple[str, ...] = attrs.field(default=(), converter=_patterns)
    #: Only skills whose name or ``SKILL.md`` URI matches one of these are handed to the
    #: model (``None``: every skill; see :func:`trio_mcp.skills.host_skills`).
    allowed_skills: tuple[str, ...] | None = attrs.field(default=None, converter=_patterns)
    #: Skills matching one of these are never handed to the model, even if allowed above.
    blocked_skills: tuple[str, ...] = attrs.field(default=(), converter=_patterns)
    #: The roots this server sees (``roots/list``), and only it. ``None``: the
    #: ``roots`` handler of the host's ``client_options``, if any.
    roots: tuple[Root, ...] | None = attrs.field(default=None, converter=_roots)
    #: Offer this server sampling (only if the host has a sampling handler).
    sampling: bool = True
    #: Offer this server elicitation (only if the host has an elicitation handler).
    elicitation: bool = True
    #: Seconds a tool call may take before the host cancels it (``None``: no limit).
    timeout: float | None = None
    #: Tool calls a second, on average, past which calls are refused (``None``: no limit).
    rate_limit: float | None = None
    #: How many calls may come at once before ``rate_limit`` applies (``None``: one
    #: second's worth, ``rate_limit`` rounded up).
    burst: int | None = None

    def allows_tool(self, name: str) -> bool:
        """Whether the tool ``name`` (the server's own name) may be offered and called."""
        if _matches(name, self.blocked_tools):
            return False
        return self.allowed_tools is None or _matches(name, self.allowed_tools)

    def trusts_tool(self, name: str) -> bool:
        """Whether the user granted calls to the tool ``name`` without asking."""
        return _matches(name, self.trusted_tools)

    def allows_skill(self, name: str, uri: str) -> bool:
        """Whether the skill ``name`` at ``uri`` (its ``SKILL.md``) may reach the model: a
        pattern matches the name or the URI."""
        if _matches(name, self.blocked_skills) or _matches(uri, self.blocked_skills):
            return False
        if self.allowed_skills is None:
            return True
        return _matches(name, self.allowed_skills) or _matches(uri, self.allowed_skills)


def _matches(name: str, patterns: Iterable[str]) -> bool:
    folded = fold(name)
    return any(fnmatchcase(folded, fold(pattern)) for pattern in patterns)


class RateLimiter:
    """A token bucket: ``rate`` tokens a second, at most ``burst`` saved up. Memory is
    constant; :meth:`take` never blocks."""

    def __init__(self, rate: float, burst: int | None = None) -> None:
        self.rate = rate
        self.burst = max(1, math.ceil(rate) if burst is None else burst)
        self._tokens = float(self.burst)
        self._stamp = -math.inf

    def take(self, now: float) -> bool:
        """Take one token at time ``now`` if there is one."""
        if self._stamp == -math.inf:
            self._stamp = now
        self._tokens = min(self.burst, self._tokens + (now - self._stamp) * self.rate)
        self._stamp = now
        if self._tokens >= 1:
            self._tokens -= 1
            return True
        return False


def parse_policy(entry: Mapping[str, Any]) -> ServerPolicy:
    """The policy of an ``mcpServers`` entry: ``allowedTools``, ``blockedTools``,
    ``trustedTools``, ``allowedSkills``, ``blockedSkills`` (lists of globs), ``roots``
    (URIs, or ``{"uri", "name"}`` objects), ``sampling`` and ``elicitation`` (booleans),
    ``timeout`` (seconds), ``rateLimit`` (calls a second) and ``burst``; all optional, each
    checked strictly (see :func:`~trio_mcp.host.parse_config`).

    Raises:
        ConfigError: a key of the wrong type or out of range (named in the message).
    """
    check_policy(entry)
    roots = entry.get("roots")
    return ServerPolicy(
        allowed_tools=entry.get("allowedTools"),
        blocked_tools=entry.get("blockedTools", ()),
        trusted_tools=entry.get("trustedTools", ()),
        allowed_skills=entry.get("allowedSkills"),
        blocked_skills=entry.get("blockedSkills", ()),
        roots=None
        if roots is None
        else [
            Root(uri=str(root["uri"]), name=root.get("name"))
            if isinstance(root, Mapping)
            else str(root)
            for root in roots
        ],
        sampling=bool(entry.get("sampling", True)),
        elicitation=bool(entry.get("elicitation", True)),
        timeout=None if entry.get("timeout") is None else float(entry["timeout"]),
        rate_limit=None if entry.get("rateLimit") is None else float(entry["rateLimit"]),
        burst=None if entry.get("burst") is None else int(entry["burst"]),
    )
