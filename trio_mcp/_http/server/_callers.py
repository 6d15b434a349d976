"""Who is calling, and how much of the server each caller may hold at once (fairness).

A *caller* is the principal an app's ``principal`` function names for a request, or,
when it names none, the peer's IP address (``scope["client"]``). Behind a reverse
proxy every request comes from the proxy's address: name principals there (say, from
the header your proxy sets), or every client shares one caller's allowance.

A :class:`CallerCaps` counts what each caller holds (sessions, requests in flight) and
refuses the one past the cap, so that one client can never take everything a total
bound allows while others are locked out. Counting costs one dictionary update when
something is taken and one when it is given back; callers holding nothing are
forgotten, so the table holds only callers that hold something.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from ._exchange import Scope

__all__ = ["CallerCaps", "caller_of", "principal_of"]

#: The caller of requests whose peer address the ASGI server does not report.
UNKNOWN_PEER: Final = "peer:unknown"
_PRINCIPAL: Final = "principal:"


def caller_of(scope: Scope, principal: Callable[[Scope], str | None] | None) -> str:
    """The caller of the request in ``scope``: ``principal:<name>`` when ``principal``
    names one, else ``peer:<IP address>``."""
    if principal is not None:
        name = principal(scope)
        if name is not None:
            return _PRINCIPAL + name
    client = scope.get("client")
    if client:
        return f"peer:{client[0]}"
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
