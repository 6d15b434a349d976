"""Where the events of resumable SSE streams wait for a client that reconnects.

Legacy Streamable HTTP (2025-03-26 to 2025-11-25) lets a client that lost an
SSE stream reconnect with ``GET`` and ``Last-Event-ID``; the server replays
what the client missed and goes on. An :class:`EventStore` keeps those events.
:class:`MemoryEventStore` is the bounded in-process default; a server fleet
behind a load balancer needs a shared one (Redis, with coredis) implementing
the same methods.

Memory
------

:class:`MemoryEventStore` charges every stream and every event against three
byte budgets: per stream, per session, and in total (see its docstring for
what a byte is). Past a budget the oldest goes first: the oldest events of a
stream over its own budget, else the stream written least recently (of the
session, or of the whole store). A client that resumes from an event whose
successors were evicted cannot resume: the server answers ``410 Gone``.
"""

from __future__ import annotations

import abc
import re
from collections import OrderedDict, deque
from typing import Final

import attrs
import trio

__all__ = ["EVENT_OVERHEAD", "STREAM_OVERHEAD", "EventStore", "MemoryEventStore", "Replay"]

#: What :class:`MemoryEventStore` charges for one event on top of its data: about what
#: CPython spends on the event's tuple, sequence number and ``bytes`` header, and its slot
#: in the stream's deque (measured: ``benchmarks/event_store_memory.py``).
EVENT_OVERHEAD: Final = 128
#: What :class:`MemoryEventStore` charges for one stream (its record, deque and index
#: entries), whatever its events.
STREAM_OVERHEAD: Final = 1280

#: The event ids :class:`MemoryEventStore` issues: ``<stream id>/<sequence number>``,
#: ASCII only, of bounded length (so ``int()`` of the number is cheap and cannot fail).
_EVENT_ID = re.compile(r"([A-Za-z0-9_-]{1,64})/([1-9][0-9]{0,17})")


@attrs.frozen
class Replay:
    """What a reconnecting client missed: the stream its ``Last-Event-ID`` belongs to, and
    the events after it as ``(event_id, data)`` pairs, oldest first; ``session`` is the
    session the stream was stored for (a server refuses to replay it to another)."""

    stream_id: str
    events: list[tuple[str, bytes]]
    session: str = ""


class EventStore(abc.ABC):
    """Storage for the events of resumable SSE streams.

    Event ids must be unique within the store and free of line breaks; ``data``
    is one serialized JSON-RPC message (empty for a priming event). A store must
    bound its memory (evicting what it cannot keep) and remember which session
    each stream belongs to.
    """

    @abc.abstractmethod
    async def append(self, stream_id: str, data: bytes, *, session: str = "") -> str:
        """Store one event of ``stream_id`` (a stream of ``session``) and return its id."""

    @abc.abstractmethod
    async def replay_after(self, event_id: str) -> Replay | None:
        """The events of ``event_id``'s stream that came after it, or ``None`` when the
        stream cannot be resumed from there: the id is malformed or was never issued, its
        stream was discarded, or events after it were evicted."""

    @abc.abstractmethod
    async def discard(self, stream_id: str) -> None:
        """Forget a stream and its events (it was replayed to its end, or it ended)."""

    @abc.abstractmethod
    async def discard_session(self, session: str) -> None:
        """Forget every stream of ``session`` (it ended)."""


@attrs.define(slots=True)
class _Stream:
    session: str
    #: No event after this sequence number was dropped: a client may resume from here on
    #: (at first, the last number issued before the stream began).
    dropped_through: int
    #: The bytes charged for the stream (see :class:`MemoryEventStore`).
    charged: int = 0
    events: deque[tuple[int, bytes]] = attrs.field(factory=deque)


def check_bounds(
    *,
    max_stream_bytes: int,
    max_session_bytes: int,
    max_bytes: int,
    max_events_per_stream: int,
    max_streams: int,
) -> None:
    """The bounds every event store takes, checked.

    Raises:
        ValueError: a count below 1, or byte budgets that do not nest.
    """
    if max_events_per_stream < 1 or max_streams < 1:
        raise ValueError("the bounds must be at least 1")
    if not STREAM_OVERHEAD <= max_stream_bytes <= max_session_bytes <= max_bytes:
        raise ValueError(
            "the byte budgets must satisfy "
            f"{STREAM_OVERHEAD} <= max_stream_bytes <= max_session_bytes <= max_bytes"
        )


class MemoryEventStore(EventStore):
    """An in-memory :class:`EventStore` with bounded memory.

    Each stream is charged :data:`STREAM_OVERHEAD` (1280 bytes) and each event its data plus
    :data:`EVENT_OVERHEAD` (128 bytes), so empty events (priming events) count too.

    Args:
        max_stream_bytes: the most bytes one stream keeps (4 MiB); past it its oldest
            events are dropped. An event larger than this on its own is sent to a
            connected client but not kept.
        max_session_bytes: the most bytes the streams of one session keep together
            (16 MiB); past it the session's stream written least recently is evicted.
        max_bytes: the most bytes the whole store keeps (256 MiB); past it the stream
            written least recently (of any session) is evicted.
        max_events_per_stream: the most events one stream keeps (256); past it its
            oldest events are dropped.
        max_streams: the most streams kept (10,000); past it the stream written least
            recently is evicted.

    A client that resumes from an event whose successors were dropped or evicted gets
    ``None`` from :meth:`replay_after`, i.e. cannot resume. The bounds must satisfy
    ``max_stream_bytes <= max_session_bytes <= max_bytes``.
    """

    def __init__(
        self,
        *,
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
        self.max_stream_bytes = max_stream_bytes
        self.max_session_bytes = max_session_bytes
        self.max_bytes = max_bytes
        self.max_events_per_stream = max_events_per_stream
        self.max_streams = max_streams
        #: Every stream, least recently written first.
        self._streams: OrderedDict[str, _Stream] = OrderedDict()
        #: session -> its streams' ids, least recently written first
        self._sessions: dict[str, OrderedDict[str, None]] = {}
        #: session -> the bytes its streams are charged
        self._session_bytes: dict[str, int] = {}
        self._bytes = 0
        #: The sequence number of the last event (of any stream).
        self._last_seq = 0

    def __len__(self) -> int:
        """How many streams are stored."""
        return len(self._streams)

    def statistics(self) -> dict[str, int]:
        """What the store holds: ``streams``, ``events``, ``sessions`` and ``bytes`` (the
        bytes charged, see the class notes)."""
        return {
            "streams": len(self._streams),
            "events": sum(len(s.events) for s in self._streams.values()),
            "sessions": len(self._sessions),
            "bytes": self._bytes,
        }

    def session_bytes(self, session: str) -> int:
        """The bytes charged for the streams of ``session``."""
        return self._session_bytes.get(session, 0)

    async def append(self, stream_id: str, data: bytes, *, session: str = "") -> str:
        await trio.lowlevel.checkpoint()
        stream = self._streams.get(stream_id)
        if stream is None:
            if len(self._streams) >= self.max_streams:
                self._evict(next(iter(self._streams)))
            stream = self._streams[stream_id] = _Stream(session, self._last_seq)
            self._sessions.setdefault(session, OrderedDict())[stream_id] = None
            self._charge(stream, STREAM_OVERHEAD)
        else:
            self._streams.move_to_end(stream_id)
            self._sessions[stream.session].move_to_end(stream_id)
        # One sequence for the whole store: an id is never issued twice, not even for a
        # stream that was evicted and is written again (its old ids stay unresumable).
        seq = self._last_seq = self._last_seq + 1
        cost = len(data) + EVENT_OVERHEAD
        if STREAM_OVERHEAD + cost > self.max_stream_bytes:
            # Too large to keep at all: what came before it cannot be resumed past it.
            self._drop_events(stream, len(stream.events))
            stream.dropped_through = seq
            return f"{stream_id}/{seq}"
        if data:
            # A copy of exactly its size: orjson leaves a message in a block larger than it
            # (at least 4 KiB; 8 MiB for 1 MB), and this one is kept.
            data = bytes(memoryview(data))
        stream.events.append((seq, data))
        self._charge(stream, cost)
        excess = len(stream.events) - self.max_events_per_stream
        while excess > 0 or stream.charged > self.max_stream_bytes:
            self._drop_events(stream, 1)
            excess -= 1
        own = self._sessions[stream.session]
        while self._session_bytes[stream.session] > self.max_session_bytes:
            self._evict(next(iter(own)))  # never this stream: it fits the session alone
        while self._bytes > self.max_bytes:
            self._evict(next(iter(self._streams)))
        return f"{stream_id}/{seq}"

    def _charge(self, stream: _Stream, amount: int) -> None:
        stream.charged += amount
        self._session_bytes[stream.session] = self._session_bytes.get(stream.session, 0) + amount
        self._bytes += amount

    def _drop_events(self, stream: _Stream, count: int) -> None:
        """Drop the ``count`` oldest events of ``stream``."""
        freed = 0
        for _ in range(count):
            seq, data = stream.events.popleft()
            stream.dropped_through = seq
            freed += len(data) + EVENT_OVERHEAD
        stream.charged -= freed
        self._session_bytes[stream.session] -= freed
        self._bytes -= freed

    def _evict(self, stream_id: str) -> None:
        """Forget a stream whole."""
        stream = self._streams.pop(stream_id)
        own = self._sessions[stream.session]
        del own[stream_id]
        self._bytes -= stream.charged
        if own:
            self._session_bytes[stream.session] -= stream.charged
        else:
            del self._sessions[stream.session]
            del self._session_bytes[stream.session]

    async def replay_after(self, event_id: str) -> Replay | None:
        await trio.lowlevel.checkpoint()
        match = _EVENT_ID.fullmatch(event_id)
        if match is None:
            return None
        stream_id, seq_text = match.groups()
        stream = self._streams.get(stream_id)
        if stream is None:
            return None
        seq = int(seq_text)
        if seq > self._last_seq or seq < stream.dropped_through:
            return None  # never issued, or events after it were dropped: cannot resume
        events = [(f"{stream_id}/{n}", data) for n, data in stream.events if n > seq]
        return Replay(stream_id, events, stream.session)

    async def discard(self, stream_id: str) -> None:
        await trio.lowlevel.checkpoint()
        if stream_id in self._streams:
            self._evict(stream_id)

    async def discard_session(self, session: str) -> None:
        await trio.lowlevel.checkpoint()
        for stream_id in list(self._sessions.get(session, ())):
            self._evict(stream_id)
