"""One worker's inbox: how a worker of a fleet hands a message to one named other worker
through Redis (a POST that landed on a worker which does not hold its session, forwarded to
the one that does).

Every worker has a random id (:attr:`Inbox.worker_id`), a liveness key ``<prefix>w:<id>``
that lives :attr:`~Inbox.worker_ttl` seconds and that the worker sets again every
:attr:`~Inbox.refresh` seconds, and an inbox, the Redis Stream ``<prefix>in:<id>``.
:meth:`Inbox.send` appends to another worker's inbox only while its liveness key exists
(one Lua script, one round trip), so a message is never left for a worker that is gone.
One reader task per worker reads its own inbox in order and hands each entry to the
handler registered for its ``kind`` with :meth:`Inbox.on`.

Bounds: an inbox holds at most ``size`` unread entries (what was read is trimmed in bulk:
by the reader every :data:`TRIM_EVERY` entries, and the rest every :data:`TRIM_INTERVAL`
by a task of its own, off the reader's path; up to that many read ones may still count).
A handler that waits (a bounded channel that is full) holds back the entries behind it:
they wait in Redis, read in order once it returns; past ``size`` unread entries
:meth:`Inbox.send` raises :class:`InboxFull`, so nothing accepted is dropped and the
sender can say "retry later".
A worker's inbox is dropped :data:`INBOX_KEPT` seconds after its last entry or liveness
refresh (a dead worker's, then; a live one's outlasts any Redis outage shorter than that).

Redis away: the reader and the liveness task retry with backoff (each outage is logged
once); entries accepted before are read when Redis answers again (if Redis kept them: a
Redis without persistence forgets what it held when it restarts).
"""

from __future__ import annotations

import logging
import math
import secrets
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

import trio
from coredis import PureToken

from ._relay import BACKOFF_INITIAL, BACKOFF_MAX

if TYPE_CHECKING:
    import coredis

__all__ = ["INBOX_KEPT", "SEND_LUA", "Handler", "Inbox", "InboxFull", "InboxUnavailable"]

log = logging.getLogger("trio_mcp.fleet")

#: What handles the payload of one entry of a given kind (see :meth:`Inbox.on`).
Handler = Callable[[bytes], Awaitable[None]]

#: How long one XREAD of the reader waits for new entries before asking again.
READ_BLOCK_MS: Final = 5_000
#: Seconds an inbox is kept after its last entry or its worker's last liveness refresh.
INBOX_KEPT: Final = 3600
#: Entries read after which the reader trims them from its inbox (or half the size, if less).
TRIM_EVERY: Final = 64
#: Seconds after which the reader trims what it read, however little.
TRIM_INTERVAL: Final = 1.0
#: Entries the reader takes from Redis at once.
READ_COUNT: Final = 128

#: The body of a Lua function ``send(live, inbox, size, kind, payload, kept)`` that appends
#: to the inbox ``inbox`` of the worker whose liveness key is ``live``: 0, that worker is
#: gone; -1, its inbox is full; 1, appended. For scripts that find the target in Redis
#: first (one round trip for both).
SEND_LUA: Final = """
local function send(live, inbox, size, kind, payload, kept)
  if redis.call('EXISTS', live) == 0 then return 0 end
  if redis.call('XLEN', inbox) >= tonumber(size) then return -1 end
  redis.call('XADD', inbox, '*', 'k', kind, 'p', payload)
  redis.call('EXPIRE', inbox, kept)
  return 1
end
"""

# KEYS: the target's liveness key, its inbox. ARGV: size, kind, payload, inbox kept (s).
_SEND: Final = (
    SEND_LUA
    + """
return send(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4])
"""
)

# KEYS: this worker's liveness key, its inbox. ARGV: the liveness ttl (ms), inbox kept (s).
# 1: the key was there; 0: it was not (first announce, or Redis lost it).
_ALIVE: Final = """
local had = redis.call('EXISTS', KEYS[1])
redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
redis.call('EXPIRE', KEYS[2], ARGV[2])
return had
"""


class InboxUnavailable(Exception):
    """A message could not be handed to Redis (it did not answer in time, or failed): the
    sender may try again later (HTTP 503 with ``Retry-After``)."""


class InboxFull(InboxUnavailable):
    """The target worker has ``size`` unread entries already; nothing was appended."""


class Inbox:
    """This worker's inbox and its way to others' (see the module's text).

    Args:
        redis: the fleet's Redis client (the caller owns it).
        prefix: put before every key.
        size: the most unread entries an inbox holds (10,000), checked by the sender: the
            same on every worker (the fleet's ``RedisState.inbox_size``).
        worker_ttl: seconds a worker's liveness key lives (5); a worker that stops
            refreshing it is taken for gone after that.
        refresh: seconds between two refreshes of the liveness key (1).
        timeout: the longest wait, in seconds, for one Redis answer to :meth:`send` or
            :meth:`alive` (5), inside the caller's cancel scope.
        worker_id: this worker's id (default: 16 random bytes, hex).
    """

    def __init__(
        self,
        redis: coredis.Redis[bytes],
        *,
        prefix: str,
        size: int = 10_000,
        worker_ttl: float = 5.0,
        refresh: float = 1.0,
        timeout: float = 5.0,
        worker_id: str | None = None,
    ) -> None:
        if not (size > 0 and 0 < refresh < worker_ttl < math.inf and 0 < timeout < math.inf):
            raise ValueError(
                "Inbox: size must be positive, 0 < refresh < worker_ttl, timeout finite"
            )
        self._redis = redis
        self.prefix = prefix
        self.size = size
        self.worker_ttl = worker_ttl
        self.refresh = refresh
        self.timeout = timeout
        self.worker_id = worker_id if worker_id is not None else secrets.token_hex(16)
        self._handlers: dict[str, Handler] = {}
        self._send_script: Any = redis.register_script(_SEND)
        self._alive_script: Any = redis.register_script(_ALIVE)
        self._last = "0-0"
        self._reachable = True
        self._announced = False
        self._rejoined = trio.Event()
        #: Times this worker found its liveness key gone when refreshing it: Redis lost its
        #: data (restarted without persistence), or this worker stalled past ``worker_ttl``.
        self.rejoins = 0
        #: Entries handed to a handler.
        self.delivered = 0
        #: Entries of a kind without a handler, or whose handler raised (each logged).
        self.failed = 0

    @property
    def live_prefix(self) -> str:
        """What a worker's liveness key is: this, then the worker's id (for scripts that
        find the worker to send to in Redis: see :data:`SEND_LUA`)."""
        return f"{self.prefix}w:"

    @property
    def inbox_prefix(self) -> str:
        """What a worker's inbox is: this, then the worker's id."""
        return f"{self.prefix}in:"

    def _live_key(self, worker_id: str) -> str:
        return self.live_prefix + worker_id

    def _inbox_key(self, worker_id: str) -> str:
        return self.inbox_prefix + worker_id

    def on(self, kind: str, handler: Handler) -> None:
        """Hand the payload of every entry of ``kind`` to ``handler``, awaited by the
        reader, one entry at a time in the inbox's order. A handler should return quickly
        (hand the payload to a bounded channel, or start a task in a nursery it owns):
        while it waits, the entries behind it wait in Redis (see :class:`InboxFull`).
        An exception it raises is logged and the reader goes on."""
        if kind in self._handlers:
            raise ValueError(f"Inbox.on: {kind!r} has a handler already")
        self._handlers[kind] = handler

    async def send(self, worker_id: str, kind: str, payload: bytes) -> bool:
        """Append ``(kind, payload)`` to the inbox of worker ``worker_id``, if it is alive.
        Blocks for one round trip (at most :attr:`timeout` seconds); cancelling it abandons
        the wait (a script Redis already received still runs whole).

        Returns:
            ``True`` once appended, ``False`` if that worker is gone (its liveness key
            expired).

        Raises:
            InboxFull: that worker has :attr:`size` unread entries.
            InboxUnavailable: Redis did not answer in time, or failed.
        """
        try:
            with trio.fail_after(self.timeout):
                answer = await self._send_script(
                    keys=[self._live_key(worker_id), self._inbox_key(worker_id)],
                    args=[self.size, kind, payload, INBOX_KEPT],
                )
        except trio.TooSlowError as exc:
            raise InboxUnavailable(f"Redis did not answer within {self.timeout}s") from exc
        except Exception as exc:
            raise InboxUnavailable(f"Redis failed: {exc!r}") from exc
        if answer == -1:
            raise InboxFull(f"worker {worker_id}'s inbox holds {self.size} unread entries")
        return bool(answer == 1)

    async def alive(self, worker_id: str) -> bool:
        """Whether worker ``worker_id``'s liveness key exists. One round trip, at most
        :attr:`timeout` seconds.

        Raises:
            InboxUnavailable: Redis did not answer in time, or failed.
        """
        try:
            with trio.fail_after(self.timeout):
                return bool(await self._redis.exists([self._live_key(worker_id)]))
        except trio.TooSlowError as exc:
            raise InboxUnavailable(f"Redis did not answer within {self.timeout}s") from exc
        except Exception as exc:
            raise InboxUnavailable(f"Redis failed: {exc!r}") from exc

    async def announce(self) -> None:
        """Set this worker's liveness key (and keep its inbox). One round trip, at
        most :attr:`timeout` seconds; raises what Redis raised. Finding the key gone after
        the first time wakes :meth:`wait_rejoined`."""
        with trio.fail_after(self.timeout):
            had = await self._alive_script(
                keys=[self._live_key(self.worker_id), self._inbox_key(self.worker_id)],
                args=[math.ceil(self.worker_ttl * 1000), INBOX_KEPT],
            )
        if not had and self._announced:
            log.warning("worker %s: the fleet's Redis had forgotten it: it rejoins", self)
            self.rejoins += 1
            self._rejoined.set()
            self._rejoined = trio.Event()
        self._announced = True

    async def wait_rejoined(self) -> None:
        """Block until this worker next finds that Redis had forgotten it (see
        :attr:`rejoins`): what it keeps in Redis (the sessions it holds) should be written
        again. Cancelling the wait is harmless."""
        await self._rejoined.wait()

    async def run(self) -> None:
        """Keep this worker alive, read its inbox and trim what it read, until cancelled
        (three tasks in a nursery of its own). Redis errors are retried with backoff,
        logged once per outage."""
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._keep_alive)
            nursery.start_soon(self._read)
            nursery.start_soon(self._trim)

    async def _keep_alive(self) -> None:
        while True:
            try:
                await self.announce()
            except Exception as exc:  # noqa: BLE001 - retried, reported once
                self._lost(exc)
                await trio.sleep(min(self.refresh, BACKOFF_INITIAL * 10))
                continue
            await trio.sleep(self.refresh)

    async def _read(self) -> None:
        delay = BACKOFF_INITIAL
        key = self._inbox_key(self.worker_id)
        # Entries read are trimmed in bulk (a round trip saved per entry under load): at
        # most this many read ones (and those of the last TRIM_INTERVAL) count to ``size``.
        trim_every = max(1, min(TRIM_EVERY, self.size // 2))
        untrimmed = 0
        while True:
            try:
                with trio.fail_after(READ_BLOCK_MS / 1000 + self.timeout):
                    found = await self._redis.xread(
                        {key: self._last}, count=READ_COUNT, block=READ_BLOCK_MS
                    )
            except Exception as exc:  # noqa: BLE001 - retried, reported once
                self._lost(exc)
                await trio.sleep(delay)
                delay = min(delay * 2, BACKOFF_MAX)
                continue
            if not self._reachable:
                log.warning("the fleet's Redis answers again: worker %s reads its inbox", self)
                self._reachable = True
            delay = BACKOFF_INITIAL
            entries = [entry for batch in (found or {}).values() for entry in batch]
            for entry in entries:
                self._last = _text(entry.identifier)
                await self._dispatch(entry.field_values)
            untrimmed += len(entries)
            if untrimmed >= trim_every:
                # The bound: trimmed before reading on (one round trip per ``trim_every``
                # entries, under load); what little is read otherwise, by :meth:`_trim`.
                try:
                    with trio.fail_after(self.timeout):
                        await self._redis.xtrim(key, PureToken.MINID, self._last)  # type: ignore[arg-type]
                    untrimmed = 0
                except Exception as exc:  # noqa: BLE001 - trimmed at the next batch
                    self._lost(exc)

    async def _trim(self) -> None:
        """Every :data:`TRIM_INTERVAL` seconds, trim what the reader read (entries below the
        last one read), in a task of its own so that the reader does not wait for it
        between two reads; a failure leaves them a while longer."""
        key = self._inbox_key(self.worker_id)
        trimmed = self._last
        while True:
            await trio.sleep(TRIM_INTERVAL)
            last = self._last
            if last == trimmed:
                continue
            try:
                with trio.fail_after(self.timeout):
                    await self._redis.xtrim(key, PureToken.MINID, last)  # type: ignore[arg-type]
                trimmed = last
            except Exception as exc:  # noqa: BLE001 - trimmed at the next round
                self._lost(exc)

    async def _dispatch(self, fields: Any) -> None:
        kind = _text(fields.get(b"k", b""))
        payload = fields.get(b"p")
        handler = self._handlers.get(kind)
        if handler is None or not isinstance(payload, bytes):
            self.failed += 1
            log.warning("worker %s ignored an inbox entry of unknown kind %r", self, kind)
            return
        try:
            await handler(payload)
        except Exception:
            self.failed += 1
            log.exception("worker %s: the inbox handler of %r raised", self, kind)
            return
        self.delivered += 1

    def _lost(self, exc: BaseException) -> None:
        if self._reachable:
            log.warning(
                "the fleet's Redis does not answer (%r): worker %s reads its inbox when it does",
                exc,
                self,
            )
        self._reachable = False

    def __str__(self) -> str:
        return self.worker_id


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value
