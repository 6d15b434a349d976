"""Where a fleet's initialize-era sessions are recorded and their events kept: one
:class:`FleetSessions` per worker, over the fleet's Redis.

A session is *held* by the worker that answered its ``initialize`` (its owner: the engine
and the protocol state live there). The owner registers it in the
:class:`~trio_mcp._http.server._session_registry.RedisSessionRegistry`, keeps the record
fresh while the session is active (one round trip at most every quarter of the idle
timeout, none on most calls), and ends it there when it ends (``DELETE``, idle expiry), so
that every other worker reads it as ended. A worker that does not hold a session looks it
up (one round trip) and forwards the request to the owner (see :mod:`._forward`).

The record outlives its owner's idle expiry by twice that quarter and
:data:`RECORD_MARGIN` (the owner refreshes it that late at most, and looks for idle
sessions as often), so the owner always ends an idle session first, and records its end;
the record's own expiry is for a worker that died (unless another worker takes it over).
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING, Final

import trio

from .._http.server._redis_event_store import RedisEventStore
from .._http.server._session_registry import (
    RedisSessionRegistry,
    SessionRecord,
    SessionState,
    principal_key,
)

if TYPE_CHECKING:
    import coredis

    from ._state import RedisState

__all__ = ["REDIS_TIMEOUT", "FleetSessions"]

log = logging.getLogger("trio_mcp.fleet")

#: The longest wait for one Redis answer about a session (seconds): past it the request
#: that needed the answer gets 503 and ``Retry-After``.
REDIS_TIMEOUT: Final = 5.0
#: The most seconds between two refreshes of an active session's record.
TOUCH_EVERY_MAX: Final = 60.0
#: Seconds a record outlives the owner's idle expiry beyond twice the refresh interval.
RECORD_MARGIN: Final = 5.0
#: Seconds a live session looked up is taken as live without asking Redis again.
LOOKUP_CACHE_TTL: Final = 1.0
#: Live sessions looked up that a worker remembers (all forgotten at once past it).
LOOKUP_CACHE_SIZE: Final = 10_000


class FleetSessions:
    """One worker's view of the fleet's initialize-era sessions.

    Args:
        redis: the fleet's client (owned by the fleet).
        state: the fleet's configuration (its key prefix).
        worker_id: this worker's id (the owner named in the records it registers).
        idle_timeout: the app's ``session_idle_timeout`` (``math.inf``: never).
    """

    def __init__(
        self,
        redis: coredis.Redis[bytes],
        state: RedisState,
        *,
        worker_id: str,
        idle_timeout: float,
    ) -> None:
        self.worker_id = worker_id
        self._redis = redis
        self._prefix = state.prefix
        #: Seconds between two refreshes of an active session's record.
        self.touch_every = (
            min(idle_timeout / 4, TOUCH_EVERY_MAX) if math.isfinite(idle_timeout) else math.inf
        )
        self.registry = RedisSessionRegistry(
            redis,
            prefix=f"{state.prefix}sessions:",
            # Past the owner's own expiry (it looks every quarter of the idle timeout at
            # most, and refreshes the record that late too), whatever the owner's load.
            idle_timeout=idle_timeout + 2 * self.touch_every + RECORD_MARGIN,
            timeout=REDIS_TIMEOUT,
        )
        #: session id -> when (Trio time) this worker last refreshed its record
        self._touched: dict[str, float] = {}
        #: (session id, principal) -> a live record looked up, and when (Trio time)
        self._looked_up: dict[tuple[str, str], tuple[SessionRecord, float]] = {}

    def event_store(self) -> RedisEventStore:
        """The fleet's event store (default bounds), under the fleet's prefix."""
        return RedisEventStore(self._redis, prefix=f"{self._prefix}events:", timeout=REDIS_TIMEOUT)

    async def created(self, record: SessionRecord) -> None:
        """Register a session this worker holds. Blocks for one round trip (at most
        :data:`REDIS_TIMEOUT` seconds); raises what Redis raised."""
        await self.registry.register(record)
        self._touched[record.session_id] = trio.current_time()

    def due(self, session_id: str) -> bool:
        """Whether an active session's record should be refreshed now (no round trip on
        most calls: see :meth:`active`)."""
        touched = self._touched.get(session_id)
        return touched is not None and trio.current_time() - touched >= self.touch_every

    async def active(self, session_id: str) -> None:
        """Refresh the record of a session this worker holds (call when :meth:`due`). A
        Redis that does not answer is logged, not raised: the call goes on, and the record
        has :attr:`touch_every` seconds of slack."""
        self._touched[session_id] = trio.current_time()
        try:
            await self.registry.touch(session_id)
        except Exception as exc:  # noqa: BLE001 - the call it serves goes on
            log.warning("could not refresh session %s... in Redis: %r", session_id[:6], exc)

    async def ended(self, session_id: str) -> None:
        """End a session everywhere (a tombstone for the other workers). Logged, not raised,
        when Redis does not answer: its record then expires by itself."""
        self._touched.pop(session_id, None)
        try:
            await self.registry.end(session_id)
        except Exception as exc:  # noqa: BLE001 - the end it records went through here
            log.warning("could not end session %s... in Redis: %r", session_id[:6], exc)

    def forget(self, session_id: str) -> None:
        """This worker no longer holds the session (it shut down, or the session ended)."""
        self._touched.pop(session_id, None)

    async def lookup(
        self, session_id: str, principal: str | None, *, fresh: bool = False
    ) -> tuple[SessionState, SessionRecord | None]:
        """What ``principal`` may know of a session this worker does not hold. One or two
        round trips, none for a live session looked up by the same principal less than
        :data:`LOOKUP_CACHE_TTL` seconds ago (unless ``fresh``): its owner answers for it
        if it ended meanwhile, and a gone owner sends the caller here again, ``fresh``.
        Raises what Redis raised (the request then gets 503)."""
        key = (session_id, principal_key(principal))
        now = trio.current_time()
        cached = self._looked_up.get(key)
        if not fresh and cached is not None and now - cached[1] < LOOKUP_CACHE_TTL:
            await trio.lowlevel.checkpoint()
            return SessionState.LIVE, cached[0]
        state, record = await self.registry.lookup(*key)
        if record is not None:
            if len(self._looked_up) >= LOOKUP_CACHE_SIZE:
                self._looked_up.clear()
            self._looked_up[key] = (record, now)
        else:
            self._looked_up.pop(key, None)
        return state, record

    async def take_over(self, record: SessionRecord) -> SessionRecord | None:
        """Become the owner of ``record``'s session (its owner is gone); ``None`` if another
        worker was first or it ended meanwhile."""
        taken = await self.registry.take_over(record, self.worker_id)
        if taken is not None:
            self._touched[record.session_id] = trio.current_time()
        return taken
