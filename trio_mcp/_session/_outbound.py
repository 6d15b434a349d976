"""Our requests to the peer: sending one, waiting for its answer, and letting go of it.

Every request of ours goes the same way: the connection registers it, a
:class:`~._waiter.Waiter` is filed under its id (:meth:`Outbound.register`), the
message is sent, the caller waits in :meth:`Outbound.await_answer` (or through a
:class:`~._call.Call`, which waits the same way), and :meth:`Outbound.release`
takes the waiter out again. A request let go of before its answer came is
cancelled: the peer hears ``notifications/cancelled``, shielded and bounded by the
session's ``cancel_send_timeout``, and a late answer is dropped.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import trio

from .. import _jsonrpc as rpc
from .._protocol._connection import Connection
from .._protocol._events import OutboundRequest
from .._types._notifications import ProgressNotificationParams
from ._call import Call, read_answer
from ._link import Link, send_quietly
from ._reader import Reader
from ._waiter import Closed, Waiter

#: Called with each progress update of a request.
ProgressCallback = Callable[[ProgressNotificationParams], Awaitable[None] | None]


class Outbound:
    """The session's requests to the peer, from sending each to letting go of it.

    Args:
        session: sends the messages, and says whether the connection is open (the
            :class:`~._link.Link` it is).
        reader: reads the answers (:meth:`Reader.wait_for`).
        waiters: the table of requests waiting for answers, by id, shared with the
            reader that delivers them.
    """

    __slots__ = ("_reader", "_session", "_waiters")

    def __init__(self, session: Link, reader: Reader, waiters: dict[Any, Waiter]) -> None:
        self._session = session
        self._reader = reader
        self._waiters = waiters

    @property
    def connection(self) -> Connection:
        return self._session.connection

    async def wait_for(self, waiter: Waiter) -> None:
        """Block until ``waiter`` has its answer or a progress update (see
        :meth:`Reader.wait_for`)."""
        await self._reader.wait_for(waiter)

    def register(self, pending: OutboundRequest, *, progress: bool) -> Waiter:
        """File a waiter for ``pending``'s answer (and its progress, with ``progress``)."""
        waiter = Waiter(progress=progress)
        self._waiters[pending.id] = waiter
        return waiter

    def release(self, pending: OutboundRequest, waiter: Waiter) -> bool:
        """Take ``pending``'s waiter out; returns whether the peer should hear that the
        request is cancelled (no answer came, and the peer does not know none will)."""
        del self._waiters[pending.id]
        if waiter.dropped_progress:
            # Progress the connection delivered but nobody read in time: it counts with the
            # progress the connection itself dropped (unknown or finished tokens).
            self._session.connection.count_progress_dropped(waiter.dropped_progress)
        answer = waiter.answer
        if answer is None:
            return True
        if type(answer) is Closed:
            if answer.tell_peer:
                return True
            self._session.connection.forget(pending)
        return False

    async def cancel(self, pending: OutboundRequest, reason: str) -> None:
        """Tell the peer we no longer wait for ``pending`` (shielded, bounded by
        ``cancel_send_timeout``; nothing if the session is closed)."""
        session = self._session
        notification = session.connection.cancel(pending, reason)
        if notification is None or session.closed:
            return
        with trio.move_on_after(session.cancel_send_timeout, shield=True):
            await send_quietly(session, notification)

    async def await_answer(self, waiter: Waiter, on_progress: ProgressCallback | None) -> None:
        """Block until ``waiter`` has its answer, calling ``on_progress`` (sync or async)
        with each progress update first; without it, updates are dropped. The one way a
        request of ours waits for its answer."""
        wait_for = self._reader.wait_for
        while waiter.answer is None:
            await wait_for(waiter)
            progress = waiter.progress
            if not progress:
                continue
            if on_progress is None:
                progress.clear()
                continue
            while progress:
                result = on_progress(progress.popleft())
                if result is not None:
                    await result

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None,
        on_progress: ProgressCallback | None,
        model: type[Any] | None,
        related: Any,
    ) -> Any:
        """Send a request and return its answer read as ``model`` (the body of
        :meth:`Session.send_request`; :meth:`track` without the context-manager layers,
        for this is the hot path)."""
        session = self._session
        session.check_open()
        await trio.lowlevel.checkpoint_if_cancelled()
        connection = session.connection
        pending, message = connection.send_request(
            method, params, progress_token=True if on_progress is not None else None
        )
        waiter = self.register(pending, progress=on_progress is not None)
        try:
            # Sent without a scheduling point of its own when the transport takes it at once
            # (the wait that follows is one): a sequential caller passes through the
            # scheduler once per call, not twice.
            sent = False
            if not session.closed:
                try:
                    session.stream.send_nowait(message, related=related)
                    sent = True
                except (trio.WouldBlock, trio.BrokenResourceError, trio.ClosedResourceError):
                    pass  # send_message waits for room, or says in its words why it cannot
            if not sent:
                await session.send_message(message, related=related)
            await self.await_answer(waiter, on_progress)
        finally:
            if self.release(pending, waiter):
                await self.cancel(pending, "the caller stopped waiting")
        answer = waiter.answer
        if type(answer) is rpc.ResultResponse:
            return connection.read_result(pending, answer.result, model)
        return read_answer(connection, pending, answer, model)

    @asynccontextmanager
    async def track(
        self,
        pending: OutboundRequest,
        message: rpc.JsonRpcRequest,
        progress: bool,
        model: Any,
        notify: bool,
    ) -> AsyncIterator[Call[Any]]:
        """Send a request the connection registered and track it for the block (see
        :meth:`Session.track`)."""
        waiter = self.register(pending, progress=progress)
        # The caller waits in the block, perhaps after other work: the loop reads for it.
        self._reader.wake()
        try:
            await self._session.send_message(message)
            yield Call(self, pending, waiter, model)
        finally:
            if self.release(pending, waiter):
                if notify:
                    await self.cancel(pending, "the caller stopped waiting")
                else:
                    self._session.connection.forget(pending)
