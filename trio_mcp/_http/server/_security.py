"""DNS-rebinding protection: which ``Host`` and ``Origin`` headers a server accepts.

A web page on ``evil.example`` can make a browser send requests to
``127.0.0.1`` by pointing its own name at that address (DNS rebinding). The
browser then sends ``Host: evil.example`` and ``Origin: http://evil.example``;
a local server that checks both refuses such requests with 403.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final
from urllib.parse import urlsplit

import attrs

__all__ = ["LOOPBACK_HOSTS", "OriginPolicy", "is_loopback"]

#: The names of the local machine: what a server bound to localhost answers to.
LOOPBACK_HOSTS: Final = ("localhost", "127.0.0.1", "[::1]")


def is_loopback(host: str) -> bool:
    """Whether a bind address or host name is the local machine."""
    host = host.strip("[]").lower()
    return host in ("localhost", "::1") or host.startswith("127.")


def _split_host(value: str) -> tuple[str, str | None]:
    """``host[:port]`` (with IPv6 in brackets) as (host, port)."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return value, None
        host, rest = value[: end + 1], value[end + 1 :]
        return host, rest[1:] if rest.startswith(":") else None
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit():
        return value, None
    return host, port


def _normalize(patterns: Iterable[str]) -> frozenset[str]:
    return frozenset(p.strip().lower().rstrip("/") for p in patterns)


def _patterns(value: Iterable[str] | None) -> frozenset[str] | None:
    return None if value is None else _normalize(value)


@attrs.frozen
class OriginPolicy:
    """The ``Host`` and ``Origin`` values a server accepts.

    Args:
        allowed_hosts: ``Host`` header values. A bare name (``localhost``,
            ``127.0.0.1``, ``[::1]``, ``mcp.example.com``) accepts any port;
            ``name:port`` only that port; ``*`` anything. ``None`` turns the
            ``Host`` check off.
        allowed_origins: ``Origin`` header values (``scheme://host[:port]``);
            ``http://localhost`` accepts any port, ``*`` anything. Requests
            without an ``Origin`` (non-browser clients) are always accepted.
            ``None`` turns the ``Origin`` check off.
    """

    allowed_hosts: frozenset[str] | None = attrs.field(
        default=_normalize(LOOPBACK_HOSTS), converter=_patterns
    )
    allowed_origins: frozenset[str] | None = attrs.field(
        default=_normalize(
            f"{scheme}://{host}" for scheme in ("http", "https") for host in LOOPBACK_HOSTS
        ),
        converter=_patterns,
    )

    @classmethod
    def loopback(cls) -> OriginPolicy:
        """Accept only the local machine's names (the default for servers bound to it)."""
        return cls()

    @classmethod
    def off(cls) -> OriginPolicy:
        """Accept every ``Host`` and ``Origin`` (behind a proxy that checks them, say)."""
        return cls(None, None)

    def refusal(self, headers: Mapping[str, str]) -> str | None:
        """Why a request with these (lower-case) headers must be refused, or ``None``."""
        if self.allowed_hosts is not None and "*" not in self.allowed_hosts:
            host = headers.get("host")
            if host is None:
                return "the Host header is missing"
            if not self._host_allowed(host):
                return f"Host {host!r} is not allowed"
        if self.allowed_origins is not None and "*" not in self.allowed_origins:
            origin = headers.get("origin")
            if origin is not None and not self._origin_allowed(origin):
                return f"Origin {origin!r} is not allowed"
        return None

    def _host_allowed(self, value: str) -> bool:
        allowed = self.allowed_hosts
        assert allowed is not None
        value = value.strip().lower()
        if value in allowed:
            return True
        host, _ = _split_host(value)
        return host in allowed

    def _origin_allowed(self, value: str) -> bool:
        allowed = self.allowed_origins
        assert allowed is not None
        value = value.strip().lower().rstrip("/")
        if value in allowed:
            return True
        try:
            parts = urlsplit(value)
        except ValueError:
            return False
        if not parts.scheme or not parts.netloc:
            return False
        host, _ = _split_host(parts.netloc)
        return f"{parts.scheme}://{host}" in allowed
