"""Which shared state a fleet uses: :class:`RedisState`, parsed strictly."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import attrs

__all__ = ["DEFAULT_PREFIX", "RedisState", "parse_state"]

DEFAULT_PREFIX: Final = "trio-mcp:"
_SCHEMES: Final = ("redis://", "rediss://", "unix://")


def _check_url(_: object, __: object, url: str) -> None:
    if not isinstance(url, str) or not url.startswith(_SCHEMES):
        raise ValueError(
            f"state: {url!r:.80} is not a Redis URL (redis://host:port/db, rediss://..., "
            "unix:///path)"
        )


def _of(*types: type) -> Callable[[object, attrs.Attribute[Any], object], None]:
    def check(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
        if type(value) not in types:  # bool is an int: refused too
            names = " or ".join(t.__name__ for t in types)
            raise TypeError(
                f"RedisState: {attribute.name} must be {names}, not {type(value).__name__}"
            )

    return check


def _positive(_: object, attribute: attrs.Attribute[Any], value: float) -> None:
    if not value > 0:
        raise ValueError(f"RedisState: {attribute.name} must be more than 0, not {value!r}")


@attrs.frozen(kw_only=True)
class RedisState:
    """The Redis a fleet of workers shares, so that any worker serves any request: give
    the same one to every worker (``serve(..., state=...)``, ``asgi_app(..., state=...)``,
    ``serve_websocket(..., state=...)``; a URL string means ``RedisState(url=...)``).

    What it shares: the ``requestState`` sealing key (kept in Redis, unless the server
    was given ``secret=``), change notifications (list changes, resource updates, task
    status) for every ``subscriptions/listen`` stream of every worker, for a server
    that runs tasks in the default in-memory store, the task store, and the initialize
    era's Streamable HTTP sessions (any worker serves any of their requests) and the
    events of their resumable streams.

    Needs the ``tasks-redis`` extra (coredis), which also backs the Redis task store.

    Attributes:
        url: ``redis://host:port/db`` (or ``rediss://``, ``unix://``).
        prefix: put before every key, so several servers can share one database.
        key_refresh: seconds between two reads of the ``requestState`` keys (a rotation
            reaches every worker within it; a new key seals only after twice that).
        changes_kept: change notifications kept in the fleet's Redis Stream (older ones are
            trimmed; a worker cut off from Redis for longer misses those).
        relay_queue: change notifications a worker holds for Redis while it is slow; beyond
            that they reach only this worker's listeners (counted, logged).
        inbox_size: unread messages a worker's inbox (a Redis Stream) holds for it, sent by
            other workers (a request forwarded to the worker holding its session); past it
            the sender refuses the request with 503 and ``Retry-After``.
        worker_ttl: seconds after which a worker that stopped saying it is alive (every
            second, or a third of this if less) is taken for gone: nothing more is sent to
            it, and its inbox is dropped.
    """

    url: str = attrs.field(validator=_check_url)
    prefix: str = attrs.field(default=DEFAULT_PREFIX, validator=_of(str))
    key_refresh: float = attrs.field(default=10.0, validator=[_of(int, float), _positive])
    changes_kept: int = attrs.field(default=10_000, validator=[_of(int), _positive])
    relay_queue: int = attrs.field(default=1024, validator=[_of(int), _positive])
    inbox_size: int = attrs.field(default=10_000, validator=[_of(int), _positive])
    worker_ttl: float = attrs.field(default=5.0, validator=[_of(int, float), _positive])


def parse_state(state: str | RedisState | None) -> RedisState | None:
    """``state`` as a :class:`RedisState` (a URL string is one), or ``None``.

    Raises:
        ValueError: a string that is not a Redis URL.
        TypeError: anything else.
    """
    if state is None or isinstance(state, RedisState):
        return state
    if isinstance(state, str):
        return RedisState(url=state)
    raise TypeError(f"state must be a Redis URL or a RedisState, not {type(state).__name__}")
