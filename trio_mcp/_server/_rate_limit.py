"""Rate limiting tool calls (the spec: servers MUST rate limit tool invocations): a token
bucket per caller, on the Trio clock (so tests drive it with ``MockClock``).

A bucket holds up to ``calls`` tokens and refills at ``calls / per`` tokens a second;
each call takes one, and a call that finds less than one is refused. A caller that
keeps to the rate is never refused; one that was idle may burst up to ``calls`` at
once.
"""

from __future__ import annotations

import math

import attrs
import trio

from .._types._content import TextContent
from .._types._tools import CallToolResult

__all__ = ["RateLimit", "RateLimiter"]

#: Buckets kept before the first sweep forgets the full ones (a full bucket is the same
#: as none).
_SWEEP_SIZE = 1024


def _positive_int(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{attribute.name} must be a whole number of at least 1, not {value!r}")


def _positive_seconds(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    if not (isinstance(value, (int, float)) and 0 < value < math.inf):
        raise ValueError(f"{attribute.name} must be a positive number of seconds, not {value!r}")


@attrs.frozen(kw_only=True)
class RateLimit:
    """At most ``calls`` tool calls per ``per`` seconds, for each caller (see
    :class:`~trio_mcp.Server`'s ``tool_rate_limit`` for who a caller is).

    A token bucket: ``calls`` is also the largest burst, after a caller was idle for
    ``per`` seconds. ``RateLimit(calls=10, per=60)`` allows ten calls at once, then
    one every six seconds.

    Raises:
        ValueError: ``calls`` is not a whole number of at least 1, or ``per`` not a
            positive, finite number of seconds.
    """

    calls: int = attrs.field(validator=_positive_int)
    per: float = attrs.field(validator=_positive_seconds)


class RateLimiter:
    """The buckets of one :class:`RateLimit`, by caller (``None``: callers nobody named).

    Memory: one small entry per caller seen in the last ``per`` seconds or so; full
    buckets are forgotten whenever the table doubles.
    """

    def __init__(self, limit: RateLimit) -> None:
        self.limit = limit
        self._rate = limit.calls / limit.per
        #: caller -> (tokens left, when they were counted)
        self._buckets: dict[str | None, tuple[float, float]] = {}
        self._sweep_at = _SWEEP_SIZE

    def acquire(self, caller: str | None) -> float:
        """Take a token for one call of ``caller``: returns 0.0 if the call may go ahead,
        else the seconds until it could (and takes nothing). Never blocks."""
        now = trio.current_time()
        capacity = self.limit.calls
        bucket = self._buckets.get(caller)
        if bucket is None:
            tokens = float(capacity)
        else:
            tokens = min(capacity, bucket[0] + (now - bucket[1]) * self._rate)
        if tokens >= 1.0:
            self._buckets[caller] = (tokens - 1.0, now)
            if len(self._buckets) > self._sweep_at:
                self._sweep(now)
            return 0.0
        self._buckets[caller] = (tokens, now)
        return (1.0 - tokens) / self._rate

    def _sweep(self, now: float) -> None:
        capacity, rate = self.limit.calls, self._rate
        for caller in [
            caller
            for caller, (tokens, when) in self._buckets.items()
            if tokens + (now - when) * rate >= capacity
        ]:
            del self._buckets[caller]
        self._sweep_at = max(_SWEEP_SIZE, 2 * len(self._buckets))

    def refusal(self, retry_after: float) -> CallToolResult:
        """The answer to a call over the limit: a tool error result (see
        :class:`~trio_mcp.Server`'s ``tool_rate_limit`` for why not a JSON-RPC error)."""
        limit = self.limit
        return CallToolResult(
            content=[
                TextContent(
                    text=(
                        f"Rate limit exceeded: at most {limit.calls} tool calls per "
                        f"{limit.per:g} s. Try again in {math.ceil(retry_after * 10) / 10:g} s."
                    )
                )
            ],
            is_error=True,
        )
