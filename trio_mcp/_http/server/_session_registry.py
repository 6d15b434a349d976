"""Where a fleet records its initialize-era sessions, so that a worker that does not hold a
session can tell whether it lives on another worker, has ended, or never existed.

A :class:`SessionRegistry` keeps one :class:`SessionRecord` per session. Lookups are bound
to the principal: a session presented by another principal reads as never having existed
("not found"). Ending a session leaves a tombstone for ``tombstone_ttl`` seconds, so a late
request gets "ended" (404, as the spec asks) rather than an ambiguous miss.

:class:`MemorySessionRegistry` is one process's view (today's behaviour);
:class:`RedisSessionRegistry` is shared by every worker.
"""

from __future__ import annotations

import abc
import enum
import math
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs
import orjson
import trio

if TYPE_CHECKING:
    import coredis

__all__ = [
    "MemorySessionRegistry",
    "RedisSessionRegistry",
    "SessionRecord",
    "SessionRegistry",
    "SessionState",
    "principal_key",
]


class SessionState(enum.Enum):
    """What a registry knows of a session id, as seen by one principal."""

    LIVE = "live"
    ENDED = "ended"
    UNKNOWN = "unknown"


@attrs.frozen
class SessionRecord:
    """One session: its id, negotiated protocol version, the client's capabilities, the
    principal it belongs to, the worker that holds it, and when it was last active (wall
    clock seconds)."""

    session_id: str
    protocol_version: str
    principal: str
    owner: str
    capabilities: dict[str, object] = attrs.field(factory=dict)
    last_activity: float = 0.0
    #: The params of the client's ``initialize``: enough to rebuild the session's protocol
    #: state on another worker when its owner died.
    initialize: dict[str, object] = attrs.field(factory=dict)

    def dumps(self) -> bytes:
        return orjson.dumps(attrs.asdict(self))

    @classmethod
    def loads(cls, data: bytes) -> SessionRecord:
        fields = orjson.loads(data)
        return cls(**fields)


def principal_key(principal: str | None) -> str:
    """How a principal is written in a record (``None``, nobody, as the empty string)."""
    return principal if principal is not None else ""


class SessionRegistry(abc.ABC):
    """The sessions of a server or fleet. Every method blocks until the store answers."""

    @abc.abstractmethod
    async def register(self, record: SessionRecord) -> None:
        """Record a new session; it expires ``idle_timeout`` seconds after its last
        activity."""

    @abc.abstractmethod
    async def lookup(
        self, session_id: str, principal: str
    ) -> tuple[SessionState, SessionRecord | None]:
        """What ``principal`` may know of ``session_id``: a live session of its own (with
        its record), one that ended, or none (also for another principal's session)."""

    @abc.abstractmethod
    async def touch(self, session_id: str) -> None:
        """Note activity on a live session (its expiry moves on)."""

    @abc.abstractmethod
    async def end(self, session_id: str) -> bool:
        """End a session everywhere; ``False`` if it was not live."""

    @abc.abstractmethod
    async def take_over(self, record: SessionRecord, new_owner: str) -> SessionRecord | None:
        """Make ``new_owner`` the owner of the live session ``record`` (as looked up) if
        its record is still that one: a compare-and-set, so that of several workers taking
        over one session, one wins. Returns the new record, or ``None`` if it changed."""


class MemorySessionRegistry(SessionRegistry):
    """One process's sessions, bounded to ``max_sessions`` (10,000) live ones and as many
    tombstones (the oldest forgotten first).

    Args:
        idle_timeout: seconds a session lives after its last activity (``math.inf``: ever).
        tombstone_ttl: seconds an ended session still reads as ended (default 3600).
        max_sessions: the most live sessions; past it :meth:`register` raises ``ValueError``.
        clock: wall-clock seconds.
    """

    def __init__(
        self,
        *,
        idle_timeout: float = math.inf,
        tombstone_ttl: float = 3600.0,
        max_sessions: int = 10_000,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.idle_timeout = idle_timeout
        self.tombstone_ttl = tombstone_ttl
        self.max_sessions = max_sessions
        self._clock = clock
        self._live: dict[str, SessionRecord] = {}
        self._ended: OrderedDict[str, tuple[str, float]] = OrderedDict()

    def _expire(self, session_id: str) -> None:
        record = self._live.get(session_id)
        if record is not None and self._clock() - record.last_activity > self.idle_timeout:
            self._bury(record)

    def _bury(self, record: SessionRecord) -> None:
        del self._live[record.session_id]
        self._ended[record.session_id] = (record.principal, self._clock())
        while len(self._ended) > self.max_sessions:
            self._ended.popitem(last=False)

    async def register(self, record: SessionRecord) -> None:
        await trio.lowlevel.checkpoint()
        if len(self._live) >= self.max_sessions:
            raise ValueError(f"at most {self.max_sessions} sessions")
        self._live[record.session_id] = attrs.evolve(record, last_activity=self._clock())

    async def lookup(
        self, session_id: str, principal: str
    ) -> tuple[SessionState, SessionRecord | None]:
        await trio.lowlevel.checkpoint()
        self._expire(session_id)
        record = self._live.get(session_id)
        if record is not None:
            if record.principal != principal:
                return SessionState.UNKNOWN, None
            return SessionState.LIVE, record
        ended = self._ended.get(session_id)
        if (
            ended is not None
            and ended[0] == principal
            and self._clock() - ended[1] <= self.tombstone_ttl
        ):
            return SessionState.ENDED, None
        return SessionState.UNKNOWN, None

    async def touch(self, session_id: str) -> None:
        await trio.lowlevel.checkpoint()
        self._expire(session_id)
        record = self._live.get(session_id)
        if record is not None:
            self._live[session_id] = attrs.evolve(record, last_activity=self._clock())

    async def end(self, session_id: str) -> bool:
        await trio.lowlevel.checkpoint()
        self._expire(session_id)
        record = self._live.get(session_id)
        if record is None:
            return False
        self._bury(record)
        return True

    async def take_over(self, record: SessionRecord, new_owner: str) -> SessionRecord | None:
        await trio.lowlevel.checkpoint()
        self._expire(record.session_id)
        if self._live.get(record.session_id) != record:
            return None
        taken = self._live[record.session_id] = attrs.evolve(record, owner=new_owner)
        return taken


#: Compare-and-set of a live record (the bytes read against those stored), keeping its
#: expiry (KEEPTTL).
_TAKE_OVER = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
return 1
"""


class RedisSessionRegistry(SessionRegistry):
    """Sessions in Redis, shared by a fleet: ``<prefix>live:<id>`` holds the record and
    expires ``idle_timeout`` seconds after the last activity (Redis expiry ends it
    everywhere); ``<prefix>ended:<id>`` holds the principal of an ended session for
    ``tombstone_ttl`` seconds. Every call is one or two round trips, each at most
    ``timeout`` seconds (default 5) inside the caller's cancel scope.

    ``idle_timeout`` may be ``math.inf``: records then never expire by themselves (the
    owner ends them).
    """

    def __init__(
        self,
        client: coredis.Redis[bytes],
        *,
        prefix: str = "trio-mcp:sessions:",
        idle_timeout: float = 3600.0,
        tombstone_ttl: float = 3600.0,
        timeout: float = 5.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not (idle_timeout > 0 and 0 < tombstone_ttl < math.inf and timeout > 0):
            raise ValueError(
                "idle_timeout and timeout must be positive, tombstone_ttl positive and finite"
            )
        self._redis = client
        self.prefix = prefix
        self.idle_timeout = idle_timeout
        self.tombstone_ttl = tombstone_ttl
        self.timeout = timeout
        self._clock = clock
        self._take_over: Any = client.register_script(_TAKE_OVER)

    @property
    def _px(self) -> int | None:
        return math.ceil(self.idle_timeout * 1000) if math.isfinite(self.idle_timeout) else None

    async def register(self, record: SessionRecord) -> None:
        record = attrs.evolve(record, last_activity=self._clock())
        with trio.fail_after(self.timeout):
            await self._redis.set(
                f"{self.prefix}live:{record.session_id}",
                record.dumps(),
                px=self._px,
            )

    async def lookup(
        self, session_id: str, principal: str
    ) -> tuple[SessionState, SessionRecord | None]:
        with trio.fail_after(self.timeout):
            data = await self._redis.get(f"{self.prefix}live:{session_id}")
            if data is not None:
                record = SessionRecord.loads(data)
                if record.principal != principal:
                    return SessionState.UNKNOWN, None
                return SessionState.LIVE, record
            ended = await self._redis.get(f"{self.prefix}ended:{session_id}")
        if ended is not None and ended.decode() == principal:
            return SessionState.ENDED, None
        return SessionState.UNKNOWN, None

    async def touch(self, session_id: str) -> None:
        px = self._px
        if px is None:
            await trio.lowlevel.checkpoint()
            return
        with trio.fail_after(self.timeout):
            await self._redis.pexpire(f"{self.prefix}live:{session_id}", px)

    async def end(self, session_id: str) -> bool:
        with trio.fail_after(self.timeout):
            data = await self._redis.getdel(f"{self.prefix}live:{session_id}")
            if data is None:
                return False
            record = SessionRecord.loads(data)
            await self._redis.set(
                f"{self.prefix}ended:{session_id}",
                record.principal.encode(),
                px=math.ceil(self.tombstone_ttl * 1000),
            )
        return True

    async def take_over(self, record: SessionRecord, new_owner: str) -> SessionRecord | None:
        taken = attrs.evolve(record, owner=new_owner)
        with trio.fail_after(self.timeout):
            done = await self._take_over(
                keys=[f"{self.prefix}live:{record.session_id}"],
                args=[record.dumps(), taken.dumps()],
            )
        return taken if done else None
