"""The events of resumable SSE streams kept in Redis Streams, so that a client's
``Last-Event-ID`` resumes on any worker of a fleet, also after the worker that wrote the
events died.

Layout (every key under ``prefix``): ``seq`` is the one sequence of the whole store (so an
event id is never issued twice, as in :class:`MemoryEventStore`); ``s:<stream>`` is the Redis
Stream of a stream's events, each entry ``<seq>-0`` with field ``d``; ``m:<stream>`` a hash of
the stream's session, the bytes charged for it and ``dropped`` (no event after this number
was dropped); ``lru`` a sorted set of the streams by last write; ``sess:<session>`` the same
for one session's streams; ``bytes`` the bytes charged in total; ``sb`` the bytes per session.

Every change is one Lua script, so two workers appending at once, or one appending while
another replays, see the store whole: nothing lost, nothing duplicated. The bounds and the
charges are :class:`MemoryEventStore`'s (same defaults, same eviction order).

The scripts name keys they compute from the prefix, so the store needs one Redis server
(or one cluster slot: use a prefix with a ``{hash tag}``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import trio

from ._event_store import (
    _EVENT_ID,
    EVENT_OVERHEAD,
    STREAM_OVERHEAD,
    EventStore,
    Replay,
    check_bounds,
)

if TYPE_CHECKING:
    import coredis

__all__ = ["RedisEventStore"]

_EVICT = """
local function evict(p, s)
  local m = p .. 'm:' .. s
  local charged = tonumber(redis.call('HGET', m, 'bytes') or '0')
  local sess = redis.call('HGET', m, 'session')
  redis.call('DEL', m, p .. 's:' .. s)
  redis.call('ZREM', p .. 'lru', s)
  if sess then
    redis.call('ZREM', p .. 'sess:' .. sess, s)
    if redis.call('HINCRBY', p .. 'sb', sess, -charged) <= 0 then
      redis.call('HDEL', p .. 'sb', sess)
    end
  end
  redis.call('DECRBY', p .. 'bytes', charged)
end
local function charge(p, m, sess, amount)
  redis.call('HINCRBY', m, 'bytes', amount)
  redis.call('HINCRBY', p .. 'sb', sess, amount)
  redis.call('INCRBY', p .. 'bytes', amount)
end
"""

_APPEND = (
    _EVICT
    + """
local p, sid, session, data = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local max_events, max_stream_bytes = tonumber(ARGV[5]), tonumber(ARGV[6])
local max_session_bytes, max_bytes = tonumber(ARGV[7]), tonumber(ARGV[8])
local max_streams, EO, SO = tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11])
local seq = redis.call('INCR', p .. 'seq')
local m, sk = p .. 'm:' .. sid, p .. 's:' .. sid
if redis.call('EXISTS', m) == 0 then
  if redis.call('ZCARD', p .. 'lru') >= max_streams then
    evict(p, redis.call('ZRANGE', p .. 'lru', 0, 0)[1])
  end
  redis.call('HSET', m, 'session', session, 'dropped', seq - 1, 'bytes', 0)
  charge(p, m, session, SO)
else
  session = redis.call('HGET', m, 'session')
end
redis.call('ZADD', p .. 'lru', seq, sid)
redis.call('ZADD', p .. 'sess:' .. session, seq, sid)
local cost = #data + EO
if SO + cost > max_stream_bytes then
  local charged = tonumber(redis.call('HGET', m, 'bytes'))
  redis.call('DEL', sk)
  redis.call('HSET', m, 'dropped', seq)
  charge(p, m, session, SO - charged)
  return seq
end
redis.call('XADD', sk, seq .. '-0', 'd', data)
charge(p, m, session, cost)
while redis.call('XLEN', sk) > max_events
    or tonumber(redis.call('HGET', m, 'bytes')) > max_stream_bytes do
  local first = redis.call('XRANGE', sk, '-', '+', 'COUNT', 1)[1]
  redis.call('XDEL', sk, first[1])
  redis.call('HSET', m, 'dropped', string.match(first[1], '^(%d+)'))
  charge(p, m, session, -(#first[2][2] + EO))
end
while tonumber(redis.call('HGET', p .. 'sb', session)) > max_session_bytes do
  evict(p, redis.call('ZRANGE', p .. 'sess:' .. session, 0, 0)[1])
end
while tonumber(redis.call('GET', p .. 'bytes')) > max_bytes do
  evict(p, redis.call('ZRANGE', p .. 'lru', 0, 0)[1])
end
return seq
"""
)

_REPLAY = """
local p, sid, after = ARGV[1], ARGV[2], tonumber(ARGV[3])
local m = p .. 'm:' .. sid
local meta = redis.call('HMGET', m, 'session', 'dropped')
if not meta[1] then return false end
local last = tonumber(redis.call('GET', p .. 'seq') or '0')
if after > last or after < tonumber(meta[2]) then return false end
local out = {meta[1]}
for _, entry in ipairs(redis.call('XRANGE', p .. 's:' .. sid, '(' .. after .. '-0', '+')) do
  table.insert(out, string.match(entry[1], '^(%d+)'))
  table.insert(out, entry[2][2])
end
return out
"""

_DISCARD = (
    _EVICT
    + """
local p = ARGV[1]
for i = 2, #ARGV do
  if redis.call('EXISTS', p .. 'm:' .. ARGV[i]) == 1 then evict(p, ARGV[i]) end
end
return 0
"""
)

_DISCARD_SESSION = (
    _EVICT
    + """
local p, session = ARGV[1], ARGV[2]
for _, s in ipairs(redis.call('ZRANGE', p .. 'sess:' .. session, 0, -1)) do evict(p, s) end
redis.call('DEL', p .. 'sess:' .. session)
return 0
"""
)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class RedisEventStore(EventStore):
    """An :class:`EventStore` in Redis Streams that every worker of a fleet shares.

    Same bounds, charges and defaults as :class:`MemoryEventStore` (each stream charged
    :data:`STREAM_OVERHEAD`, each event its data plus :data:`EVENT_OVERHEAD`), kept for
    the whole fleet: past a bound the oldest events of the stream, else the stream of the
    session or of the store written least recently, are evicted. A client resuming from
    an evicted event gets ``None`` from :meth:`replay_after` (``410 Gone``).

    Every method is one Redis round trip (one Lua script). It blocks until Redis answers,
    at most ``timeout`` seconds (default 5) inside the caller's cancel scope; past that it
    raises :class:`trio.TooSlowError`, and a lost connection raises coredis's
    ``ConnectionError`` (the client reconnects on the next call). Cancelling the call
    abandons the wait; a script Redis already received still runs whole.

    Args:
        client: a ``coredis.Redis`` client the caller owns (opened and closed by it).
        prefix: put before every key, so several stores can share one database.
        timeout: the longest wait for one Redis answer, in seconds (``math.inf``: none).
        max_stream_bytes, max_session_bytes, max_bytes, max_events_per_stream,
        max_streams: as for :class:`MemoryEventStore`.
    """

    def __init__(
        self,
        client: coredis.Redis[bytes],
        *,
        prefix: str = "trio-mcp:events:",
        timeout: float = 5.0,
        max_stream_bytes: int = 4 * 1024 * 1024,
        max_session_bytes: int = 16 * 1024 * 1024,
        max_bytes: int = 256 * 1024 * 1024,
        max_events_per_stream: int = 256,
        max_streams: int = 10_000,
    ) -> None:
        check_bounds(
            max_stream_bytes=max_stream_bytes,
            max_session_bytes=max_session_bytes,
            max_bytes=max_bytes,
            max_events_per_stream=max_events_per_stream,
            max_streams=max_streams,
        )
        if not timeout > 0:
            raise ValueError(f"timeout must be positive, got {timeout!r}")
        self.prefix = prefix
        self.timeout = timeout
        self.max_stream_bytes = max_stream_bytes
        self.max_session_bytes = max_session_bytes
        self.max_bytes = max_bytes
        self.max_events_per_stream = max_events_per_stream
        self.max_streams = max_streams
        self._client = client
        self._append: Any = client.register_script(_APPEND)
        self._replay: Any = client.register_script(_REPLAY)
        self._discard: Any = client.register_script(_DISCARD)
        self._discard_session: Any = client.register_script(_DISCARD_SESSION)

    async def _run(self, script: Any, *args: str | bytes | int) -> Any:
        """Run one script, at most :attr:`timeout` seconds."""
        with trio.fail_after(self.timeout) if math.isfinite(self.timeout) else trio.CancelScope():
            return await script(keys=[], args=[self.prefix, *args])

    async def append(self, stream_id: str, data: bytes, *, session: str = "") -> str:
        seq = await self._run(
            self._append,
            stream_id,
            session,
            data,
            self.max_events_per_stream,
            self.max_stream_bytes,
            self.max_session_bytes,
            self.max_bytes,
            self.max_streams,
            EVENT_OVERHEAD,
            STREAM_OVERHEAD,
        )
        return f"{stream_id}/{int(seq)}"

    async def replay_after(self, event_id: str) -> Replay | None:
        match = _EVENT_ID.fullmatch(event_id)
        if match is None:
            await trio.lowlevel.checkpoint()
            return None
        stream_id, seq_text = match.groups()
        found = await self._run(self._replay, stream_id, seq_text)
        if not found:
            return None
        session, *rest = found
        events = [
            (f"{stream_id}/{_text(rest[i])}", bytes(rest[i + 1])) for i in range(0, len(rest), 2)
        ]
        return Replay(stream_id, events, _text(session))

    async def discard(self, stream_id: str) -> None:
        await self._run(self._discard, stream_id)

    async def discard_session(self, session: str) -> None:
        await self._run(self._discard_session, session)

    async def statistics(self) -> dict[str, int]:
        """What the store holds in Redis: ``streams``, ``sessions`` and ``bytes`` charged."""
        client = self._client
        streams = await client.zcard(f"{self.prefix}lru")
        sessions = await client.hlen(f"{self.prefix}sb")
        charged = await client.get(f"{self.prefix}bytes")
        return {"streams": streams, "sessions": sessions, "bytes": int(charged or 0)}
