"""The ``requestState`` sealing keys of a fleet, kept in one Redis hash, so that a round
sealed by one worker opens on every other, and the key can change without refusing the
rounds in flight.

The hash ``<prefix>request-state`` holds ``current`` (the key states are sealed with),
maybe ``next`` (a key a rotation added, with ``next_since``) and ``previous`` (keys
rotated out, with when). Every worker reads it every ``key_refresh`` seconds and opens
states sealed with any of them. A rotation only adds ``next``: it is sealed with once it is
older than twice ``key_refresh`` (by then every worker opens it), when the first worker to
read it promotes it; a previous key is dropped once no state it sealed can still be valid.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any, Final

import attrs
import orjson

if TYPE_CHECKING:
    import coredis

__all__ = ["FleetKeys", "read_keys", "rotate_keys"]

#: Creates the first key if there is none, promotes ``next`` once it is old enough,
#: drops previous keys past the states' lifetime; returns the hash.
_READ: Final = """
local h = KEYS[1]
local now = tonumber(ARGV[1])
redis.call('HSETNX', h, 'current', ARGV[2])
local nxt = redis.call('HGET', h, 'next')
local previous = cjson.decode(redis.call('HGET', h, 'previous') or '[]')
if nxt and now - tonumber(redis.call('HGET', h, 'next_since')) >= tonumber(ARGV[3]) then
  table.insert(previous, 1, {redis.call('HGET', h, 'current'), now})
  redis.call('HSET', h, 'current', nxt)
  redis.call('HDEL', h, 'next', 'next_since')
end
local kept = {}
for _, entry in ipairs(previous) do
  if now - entry[2] < tonumber(ARGV[4]) then table.insert(kept, entry) end
end
if #kept == 0 then
  redis.call('HSET', h, 'previous', '[]')
else
  redis.call('HSET', h, 'previous', cjson.encode(kept))
end
return redis.call('HGETALL', h)
"""


@attrs.frozen
class FleetKeys:
    """The keys as one read found them: seal with ``current``; open with any of
    ``accepted`` (``current`` first)."""

    current: bytes
    accepted: tuple[bytes, ...]


def _key_name(prefix: str) -> str:
    return f"{prefix}request-state"


async def read_keys(
    redis: coredis.Redis[bytes],
    prefix: str,
    *,
    key_refresh: float,
    state_ttl: float,
    seed: bytes | None = None,
    clock: Any = time.time,
) -> FleetKeys:
    """Read the fleet's keys (creating the first, promoting a rotation that is old enough,
    dropping keys past ``state_ttl``), atomically. Blocks for one Redis round trip.

    ``seed``: the key this worker seals with, written as the fleet's if Redis has none
    (it lost its data in a restart), so that rounds in flight still open; a fresh random
    key when the worker has none yet."""
    first = seed if seed is not None else os.urandom(32)
    reply = await redis.eval(
        _READ,
        keys=[_key_name(prefix)],
        args=[clock(), first.hex(), 2 * key_refresh, state_ttl + key_refresh],
    )
    if not isinstance(reply, list):
        raise TypeError(f"the fleet's key script answered a {type(reply).__name__}, not a list")
    flat = list(reply)
    fields = {_text(k): _text(v) for k, v in zip(flat[::2], flat[1::2], strict=True)}
    current = bytes.fromhex(fields["current"])
    accepted = [current]
    if "next" in fields:
        accepted.append(bytes.fromhex(fields["next"]))
    for key, _retired in orjson.loads(fields.get("previous", "[]")):
        accepted.append(bytes.fromhex(key))
    return FleetKeys(current, tuple(accepted))


async def rotate_keys(redis: coredis.Redis[bytes], prefix: str, *, clock: Any = time.time) -> None:
    """Add a new key to the fleet's (see the module docstring for when it starts sealing).
    Blocks for one Redis round trip."""
    await redis.hset(
        _key_name(prefix), {"next": os.urandom(32).hex(), "next_since": repr(float(clock()))}
    )


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
