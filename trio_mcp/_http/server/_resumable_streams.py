"""The logical SSE streams of a legacy HTTP session, and resuming them.

A *channel* is what one POST's response carries (the answers to its requests
and what belongs to them: progress, log messages, the server's own requests
to the client), or the session's standalone stream (opened with ``GET``,
carrying everything unrelated to a request). A channel outlives the HTTP
response that carries it: when the client loses the response, the channel's
events go on into the :class:`~trio_mcp.http.EventStore`, and a ``GET`` with
``Last-Event-ID`` attaches a new response that replays what was missed and
carries the rest.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence

import trio

from ..._types._base import RequestId
from . import _store_outage as store_outage
from ._event_store import EventStore
from ._exchange import Header, ResponseWriter

__all__ = ["Channel", "replay"]


class Channel:
    """One logical stream of a session.

    Args:
        pending: the ids of the requests whose answers end the channel (empty for the
            standalone stream, which never ends by itself).
        store: where events go for resumption, or ``None`` (not resumable).
        registry: where the channel enters itself, by stream id, once it has events a
            client could resume (most answers go out as plain JSON and never do).
        session: the id of the session it belongs to (the store records it with the
            events, so that no other session can resume them).
    """

    __slots__ = (
        "__weakref__",  # (tests check that ended sessions are freed)
        "_lock",
        "_registry",
        "_stream_id",
        "collected",
        "finished",
        "pending",
        "released",
        "session",
        "store",
        "writer",
    )

    def __init__(
        self,
        pending: set[RequestId],
        store: EventStore | None,
        registry: dict[str, Channel] | None = None,
        *,
        session: str = "",
    ) -> None:
        self._stream_id: str | None = None
        self.session = session
        self._registry = registry
        self.pending = pending
        self.store = store
        #: The HTTP response carrying the channel now, if any.
        self.writer: ResponseWriter | None = None
        #: Set when the current writer is let go (the channel finished, the stream was
        #: closed early, or the session ended).
        self.released: trio.Event | None = None
        self.finished = False
        #: Answers collected for a JSON array (a batch to a client without SSE).
        self.collected: list[bytes] | None = None
        self._lock: trio.Lock | None = None

    @property
    def stream_id(self) -> str:
        """The id of the channel's events (made, and registered, on first use)."""
        if self._stream_id is None:
            self._stream_id = secrets.token_urlsafe(9)
            if self._registry is not None:
                self._registry[self._stream_id] = self
        return self._stream_id

    @property
    def has_events(self) -> bool:
        """Whether the channel ever had a stream id (and so maybe stored events)."""
        return self._stream_id is not None

    @property
    def lock(self) -> trio.Lock:
        if self._lock is None:
            self._lock = trio.Lock()
        return self._lock

    async def _acquire(self) -> None:
        # Most channels carry one answer: take a free lock without a trip to the scheduler.
        lock = self.lock
        try:
            lock.acquire_nowait()
        except trio.WouldBlock:
            await lock.acquire()

    def attach(self, writer: ResponseWriter) -> trio.Event:
        """Carry the channel on ``writer`` from now on; returns the event set when it is
        let go."""
        self.let_go()
        self.writer = writer
        released = self.released = trio.Event()
        return released

    def let_go(self) -> None:
        """Stop using the current writer (its client went away, or it is being ended): its
        exchange completes the response (see :meth:`ResponseWriter.carry`)."""
        if self.writer is not None:
            self.writer.stop()
        self.writer = None
        if self.released is not None:
            self.released.set()
            self.released = None

    async def emit(
        self,
        data: bytes,
        *,
        answer: bool = False,
        last: bool = False,
        status: int = 200,
        headers: Sequence[Header] = (),
    ) -> bool:
        """Send one message on the channel: ``answer`` says it answers a request, ``last``
        that it answers the last pending one, which ends the channel. ``status`` and
        ``headers`` are those of a JSON response that carries this answer alone (an SSE
        stream has started with 200 already).

        Returns whether a response carried it (else it is only in the store, if any).
        Blocks while the client reads slowly (and, with a shared event store, while the
        store writes).
        """
        await self._acquire()
        try:
            writer = self.writer
            if last:
                self.finished = True
            if writer is not None and writer.state == "new" and not writer.sse_ok:
                # A client that takes only JSON: answers only, as one body.
                if self.collected is None:
                    self.collected = []
                if answer:
                    self.collected.append(data)
                if last:
                    if len(self.collected) == 1:
                        await writer.json(self.collected[0], status, headers=headers)
                    else:
                        await writer.json(b"[" + b",".join(self.collected) + b"]")
            elif writer is not None and writer.state == "new" and last and writer.json_ok:
                # The exchange's only message is its answer: plain JSON.
                await writer.json(data, status, headers=headers)
            else:
                event_id = None
                if writer is not None and writer.state == "new":
                    await writer.open_sse()  # first, so that a priming event comes first
                if self.store is not None:
                    event_id = await store_outage.append(
                        self.store, self.stream_id, data, session=self.session
                    )
                if writer is not None:
                    await writer.event(data, event_id)
            if last:
                if writer is not None:
                    await writer.close()  # (a JSON answer is complete already)
                self.let_go()  # (after the writes: letting go ends the exchange)
            return writer is not None
        finally:
            self.lock.release()

    async def release(self, writer: ResponseWriter) -> None:
        """The exchange of ``writer`` is over: stop using it, and wait until no write to it
        is in progress (the caller is about to return from the ASGI app)."""
        await self._acquire()
        try:
            if self.writer is writer:
                self.let_go()
            writer.gone = True
        finally:
            self.lock.release()

    async def abandon(self) -> None:
        """Nothing more will come (the client cancelled what was pending): end the current
        response. One that sent nothing yet still answers a request, so it cannot be a
        bare ``202``: it is an SSE stream that ends at once, without a priming event (there
        is nothing to resume)."""
        await self._acquire()
        try:
            self.finished = True
            writer = self.writer
            if writer is not None:
                if writer.state == "new":
                    writer.preamble = None
                    await writer.open_sse()
                await writer.close()
            self.let_go()  # (after the writes: letting go ends the exchange)
        finally:
            self.lock.release()

    async def close_early(self) -> bool:
        """End the current response now, leaving the rest for a resumption (SEP-1699).
        Returns whether there was a response to end."""
        if self.store is None:
            await trio.lowlevel.checkpoint()
            return False
        async with self.lock:
            writer = self.writer
            if writer is None:
                return False
            await writer.open_sse()  # the priming event tells the client where to resume
            await writer.close()
            self.let_go()
            return True

    async def resume(
        self, writer: ResponseWriter, events: list[tuple[str, bytes]]
    ) -> trio.Event | None:
        """Replay ``events`` on ``writer``, then carry the channel on it; returns the event
        set when ``writer`` is let go, or ``None`` when the channel already finished and
        the replay was all of it."""
        async with self.lock:
            await replay(writer, events)
            if self.finished:
                await writer.close()
                return None
            return self.attach(writer)


async def replay(writer: ResponseWriter, events: list[tuple[str, bytes]]) -> None:
    """Open ``writer``'s SSE stream and write ``events`` on it (the empty data of priming
    events is left out: their ids are what the client has already)."""
    await writer.open_sse()
    for event_id, data in events:
        if data:
            await writer.event(data, event_id)
