"""Rotating a fleet's ``requestState`` key from outside the fleet (an operator's script)."""

from __future__ import annotations

from .._extras import require_extra
from ._keys import rotate_keys
from ._state import RedisState, parse_state

__all__ = ["rotate_request_state_key"]


async def rotate_request_state_key(state: str | RedisState) -> None:
    """Give the fleet sharing ``state`` a new ``requestState`` key. Every worker opens
    states sealed with it within ``key_refresh`` seconds, and seals with it after twice
    that; the old key still opens the states it sealed for ``request_state_ttl``, then is
    dropped. Blocks for one Redis round trip (cancelling it may leave the key unchanged).

    Raises:
        ValueError: ``state`` is not a Redis URL.
        Exception: what Redis raised (it does not answer).
    """
    require_extra("tasks-redis", "rotate_request_state_key")
    from coredis import Redis

    parsed = parse_state(state)
    assert parsed is not None
    async with Redis.from_url(parsed.url) as redis:
        await rotate_keys(redis, parsed.prefix)
