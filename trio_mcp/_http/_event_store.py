"""Where the events of resumable SSE streams wait for a client that reconnects.

Legacy Streamable HTTP (2025-03-26 to 2025-11-25) lets a client that lost an
SSE stream reconnect with ``GET`` and ``Last-Event-ID``; the server replays
what the client missed and goes on. An :class:`EventStore` keeps those events.
:class:`MemoryEventStore` is the bounded in-process default; a server fleet
behind a load balancer needs a shared one (Redis, with coredis) implementing
the same three methods.
"""

from __future__ import annotations

import abc
from collections import OrderedDict, deque

import attrs
import trio

__all__ = ["EventStore", "MemoryEventStore", "Replay"]


@attrs.frozen
class Replay:
    """What a reconnecting client missed: the stream its ``Last-Event-ID`` belongs to, and
    the events after it as ``(event_id, data)`` pairs, oldest first."""

    stream_id: str
    events: list[tuple[str, bytes]]


class EventStore(abc.ABC):
    """Storage for the events of resumable SSE streams.

    Event ids must be unique within the store and free of line breaks; ``data``
    is one serialized JSON-RPC message (empty for a priming event).
    """

    @abc.abstractmethod
    async def append(self, stream_id: str, data: bytes) -> str:
        """Store one event of ``stream_id`` and return its id."""

    @abc.abstractmethod
    async def replay_after(self, event_id: str) -> Replay | None:
        """The events of ``event_id``'s stream that came after it, or ``None`` when the id is
        unknown (never issued, or its stream was discarded or evicted)."""

    @abc.abstractmethod
    async def discard(self, stream_id: str) -> None:
        """Forget a stream and its events (it ended, or its session did)."""


class MemoryEventStore(EventStore):
    """An in-memory :class:`EventStore` with bounded memory.

    Args:
        max_events_per_stream: events kept per stream; older ones are dropped (a client
            that resumes from a dropped id gets ``None``, i.e. cannot resume).
        max_streams: streams kept; when full, the stream least recently written is
            evicted.

    Memory is bounded by ``max_streams * max_events_per_stream`` events.
    """

    def __init__(self, *, max_events_per_stream: int = 256, max_streams: int = 10_000) -> None:
        if max_events_per_stream < 1 or max_streams < 1:
            raise ValueError("the bounds must be at least 1")
        self.max_events_per_stream = max_events_per_stream
        self.max_streams = max_streams
        #: stream id -> [sequence number of the next event, the newest events]
        self._streams: OrderedDict[str, tuple[list[int], deque[tuple[int, bytes]]]] = OrderedDict()

    def __len__(self) -> int:
        """How many streams are stored."""
        return len(self._streams)

    async def append(self, stream_id: str, data: bytes) -> str:
        await trio.lowlevel.checkpoint()
        stream = self._streams.get(stream_id)
        if stream is None:
            if len(self._streams) >= self.max_streams:
                self._streams.popitem(last=False)
            stream = self._streams[stream_id] = ([1], deque(maxlen=self.max_events_per_stream))
        else:
            self._streams.move_to_end(stream_id)
        counter, events = stream
        seq = counter[0]
        counter[0] = seq + 1
        events.append((seq, data))
        return f"{stream_id}/{seq}"

    async def replay_after(self, event_id: str) -> Replay | None:
        await trio.lowlevel.checkpoint()
        stream_id, _, seq_text = event_id.rpartition("/")
        stream = self._streams.get(stream_id)
        if stream is None or not seq_text.isdigit():
            return None
        (next_seq,), events = stream
        seq = int(seq_text)
        if seq >= next_seq or (events and events[0][0] > seq + 1):
            return None  # never issued, or events after it were dropped: cannot resume
        return Replay(stream_id, [(f"{stream_id}/{n}", data) for n, data in events if n > seq])

    async def discard(self, stream_id: str) -> None:
        await trio.lowlevel.checkpoint()
        self._streams.pop(stream_id, None)
