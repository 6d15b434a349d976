"""Who is calling, and how much of the server each caller may hold at once (fairness).

A *caller* is the principal an app's ``principal`` function names for a request, or,
when it names none, the peer's network: its IP address (``scope["client"]``) with the
host part of the address cut off. An IPv6 host usually holds a whole ``/64`` (SLAAC,
privacy addresses), so counting exact IPv6 addresses would give one machine 2^64
allowances: by default IPv6 peers are grouped by ``/64`` and IPv4 peers counted by
address (``/32``); :class:`PeerPrefixes` changes both. Behind a reverse proxy every
request comes from the proxy's address: name principals there (say, from the header
your proxy sets), or every client shares one caller's allowance.

The app puts its :class:`PeerPrefixes` in each request's scope (under
:data:`PEER_PREFIXES_KEY`), so that every part of it that names callers groups peers
alike.

A :class:`CallerCaps` counts what each caller holds (sessions, requests in flight) and
refuses the one past the cap, so that one client can never take everything a total
bound allows while others are locked out. Counting costs one dictionary update when
something is taken and one when it is given back; callers holding nothing are
forgotten, so the table holds only callers that hold something.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from functools import lru_cache
from typing import Final

import attrs

from ._exchange import Scope

__all__ = [
    "PEER_PREFIXES_KEY",
    "CallerCaps",
    "PeerPrefixes",
    "caller_of",
    "peer_network",
    "principal_of",
]

#: The caller of requests whose peer address the ASGI server does not report.
UNKNOWN_PEER: Final = "peer:unknown"
_PRINCIPAL: Final = "principal:"
#: Where the app puts its :class:`PeerPrefixes` in a request's ASGI scope.
PEER_PREFIXES_KEY: Final = "trio_mcp.peer_prefixes"


def _prefix(value: object, name: str, bits: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= bits:
        raise ValueError(f"{name} must be an int from 0 to {bits}, not {value!r}")


@attrs.frozen
class PeerPrefixes:
    """How many leading bits of a peer's address name it as a caller (see the module
    notes): ``ipv4`` (default 32: each address) and ``ipv6`` (default 64: each ``/64``,
    what one host or one home network usually holds).

    Raises:
        ValueError: a prefix length that is not an int from 0 to 32 (IPv4) or 128 (IPv6).
    """

    ipv4: int = attrs.field(default=32)
    ipv6: int = attrs.field(default=64)

    def __attrs_post_init__(self) -> None:
        _prefix(self.ipv4, "ipv4", 32)
        _prefix(self.ipv6, "ipv6", 128)


DEFAULT_PEER_PREFIXES: Final = PeerPrefixes()


@lru_cache(maxsize=4096)
def peer_network(address: str, prefixes: PeerPrefixes = DEFAULT_PEER_PREFIXES) -> str:
    """The network that names the peer at ``address`` as a caller: the address itself for a
    full-length prefix (``192.0.2.7``), else the network in CIDR form
    (``2001:db8:1:2::/64``). An IPv4 address mapped into IPv6 (``::ffff:192.0.2.7``)
    counts as IPv4, an IPv6 zone (``%eth0``) is left out, and what is not an IP address
    (a Unix socket's path) is taken as it is. (Cached: 4,096 addresses.)"""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        elif ip.scope_id is not None:
            ip = ipaddress.IPv6Address(address.split("%", 1)[0])
    prefix = prefixes.ipv4 if ip.version == 4 else prefixes.ipv6
    if prefix == ip.max_prefixlen:
        return str(ip)
    return str(ipaddress.ip_network(f"{ip}/{prefix}", strict=False))


def caller_of(scope: Scope, principal: Callable[[Scope], str | None] | None) -> str:
    """The caller of the request in ``scope``: ``principal:<name>`` when ``principal``
    names one, else ``peer:<network>`` (see :func:`peer_network`; the prefixes are the
    app's, from the scope)."""
    if principal is not None:
        name = principal(scope)
        if name is not None:
            return _PRINCIPAL + name
    client = scope.get("client")
    if client:
        prefixes = scope.get(PEER_PREFIXES_KEY, DEFAULT_PEER_PREFIXES)
        return "peer:" + peer_network(str(client[0]), prefixes)
    return UNKNOWN_PEER


def principal_of(caller: str) -> str | None:
    """The principal a caller names, or ``None`` for a peer address."""
    return caller[len(_PRINCIPAL) :] if caller.startswith(_PRINCIPAL) else None


class CallerCaps:
    """At most ``cap`` of something held by each caller at once.

    Args:
        what: what is counted, for error messages ("sessions", "requests in flight").
        cap: the most each caller may hold.

    Raises:
        ValueError: ``cap`` is less than 1.
    """

    __slots__ = ("cap", "counts", "what")

    def __init__(self, what: str, cap: int) -> None:
        if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
            raise ValueError(f"the cap on {what} per caller must be at least 1, not {cap!r}")
        self.what = what
        self.cap = cap
        #: caller -> how many it holds now (never 0: those are removed)
        self.counts: dict[str, int] = {}

    def take(self, caller: str) -> bool:
        """Count one more for ``caller``; ``False`` (and nothing counted) at the cap."""
        counts = self.counts
        held = counts.get(caller, 0)
        if held >= self.cap:
            return False
        counts[caller] = held + 1
        return True

    def give_back(self, caller: str) -> None:
        """Count one fewer for ``caller`` (one :meth:`take` that succeeded)."""
        counts = self.counts
        held = counts[caller] - 1
        if held:
            counts[caller] = held
        else:
            del counts[caller]

    def refusal(self) -> str:
        """The error message for a caller at the cap."""
        return f"Too Many Requests: at most {self.cap} {self.what} per client; try again later"
