"""The Trio session engine: :class:`Session` runs a sans-IO
:class:`~trio_mcp.protocol.Connection` over a :class:`~trio_mcp.transports.MessageStream`.

It is put together from parts, one idea each: who reads the stream
(:mod:`._reader`, with the opt-in handover), the peer's requests to us
(:mod:`._inbound`: admission, handler tasks, backpressure), our requests to the peer
(:mod:`._outbound`, and :mod:`._call` for :class:`Call`). This module routes what the
connection says about each message to them, delivers notifications, sends, and closes.

Resource handling
-----------------

A session's tasks live in a nursery its caller owns: :func:`open_session`
opens one for the block, :func:`connect_session` uses yours. The session runs
one receive loop and one notification task there, and one task per inbound
request (each under its own cancel scope, registered by request id). Nothing
outlives the nursery. Notifications for the application queue in a channel of
``notification_buffer`` entries, handled in order by one task; when it is full
the receive loop waits, and a fast peer with it. Progress for one of our
requests keeps the newest :data:`~._waiter.PROGRESS_BUFFER` unread updates.

Cancellation
------------

* The peer's ``notifications/cancelled`` cancels that request's scope; a
  cancelled handler sends nothing.
* When *your* wait for an answer is cancelled (a ``trio.move_on_after``, a
  failing sibling task), the session tells the peer with
  ``notifications/cancelled``, shielded and bounded by
  ``cancel_send_timeout``, and forgets the request: a late answer is dropped.
* Closing the session (:meth:`Session.aclose`, or leaving :func:`open_session`)
  cancels every handler and fails every waiting request with
  :exc:`~trio_mcp.ConnectionClosed`.
* If the session's nursery is cancelled instead (the stream was not closed), the
  waiting requests fail with :exc:`~trio_mcp.ConnectionClosed` too, and each
  caller still tells the peer with ``notifications/cancelled`` as it lets go.

When the peer goes away
-----------------------

End of input fails every outstanding request at once with
:exc:`~trio_mcp.ConnectionClosed`: no answer can come any more. Handlers
already running may finish and send their answers for ``drain_timeout``
seconds (the output side may still work: ``printf ... | server`` gets every
answer), then they are cancelled.

Batches
-------

Where the negotiated revision allows JSON-RPC batches (2024-11-05 and
2025-03-26), each item is taken as if it had come alone: each request gets its
own handler task and its answer leaves, in a message of its own, as soon as it
is ready; notifications get nothing, so a batch of notifications alone gets no
answer. JSON-RPC 2.0 says the answers to a batch SHOULD come back as one array;
we do not do that here, deliberately:

* An array could leave only once the slowest item finished: a quick ``ping``
  would wait for a long tool call, and one stuck item would hold back every
  answer of its batch.
* A :class:`~trio_mcp.transports.MessageStream` sends one message at a time,
  routed by ``related`` request id (Streamable HTTP picks the response that
  carries it by that id); an array answers several requests at once, so every
  transport would need a second way to send.
* The peer loses nothing: on a two-way stream it matches answers by id anyway,
  among the notifications and requests that interleave with them.

Over Streamable HTTP (2025-03-26), where a batch arrives as one POST, the HTTP
layer does gather the answers into one JSON array body when the client did not
ask for an event stream.
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, TypeVar, Unpack, assert_never, overload

import trio

from .. import _jsonrpc as rpc
from .._errors import ConnectionClosed, ErrorCode, McpError, RequestTimeout
from .._protocol._connection import Connection
from .._protocol._events import (
    CancelRequested,
    Dispatch,
    Dropped,
    InboundRequest,
    NotificationReceived,
    OutboundRequest,
    PeerCancelled,
    ProgressReceived,
    Reply,
    ResponseReceived,
)
from .._transports._stream import MessageStream, MessageTooLarge
from .._types._base import LoggingLevel, Notification, Request, RequestId
from .._types._converter import converter_for
from .._types._mrtr import InputRequiredResult
from .._types._notifications import LoggingMessageNotificationParams, ProgressNotificationParams
from .._util import open_nursery_unwrapped
from ._call import Call
from ._inbound import Admission, Inbound
from ._link import send_quietly
from ._options import SessionOptions
from ._outbound import Outbound, ProgressCallback
from ._reader import Reader
from ._waiter import Closed, Waiter

__all__ = [
    "ImmediateHandler",
    "NotificationHandler",
    "RequestHandler",
    "Session",
    "connect_session",
    "open_session",
]

log = logging.getLogger("trio_mcp.session")

R = TypeVar("R")

#: ``await handler(session, method, params)`` takes one notification; ``params`` is typed
#: for methods the protocol defines.
NotificationHandler = Callable[["Session", str, Any], Awaitable[None]]
#: ``await handler(session, request)`` answers one inbound request: return a result model
#: (or a plain dict), or raise :exc:`~trio_mcp.McpError` to answer with an error.
RequestHandler = Callable[["Session", InboundRequest], Awaitable[Any]]
#: ``handler(session, request)`` answers a request *now*, without a task, or returns
#: :data:`~._inbound.LATER` to have it handled by :data:`RequestHandler` in a task of its
#: own. Only for work that never blocks (a plain function): it runs in the receive loop, and
#: cannot be cancelled because it never yields.
ImmediateHandler = Callable[["Session", InboundRequest], Any]


async def _no_notifications(session: Session, method: str, params: Any) -> None:
    log.debug("ignored notification %s", method)


class Session:
    """One MCP conversation: a protocol connection driven over a message stream.

    Create it with :func:`open_session` or :func:`connect_session`.

    Args:
        stream: the transport.
        connection: the protocol state (role, our info and capabilities).
        handler: answers the peer's requests.
        notification_handler: takes the peer's notifications (other than
            cancellation and progress, which the session routes itself).
        request_timeout: a default deadline in seconds for our requests
            (``None``: only the caller's cancel scopes). Expiry raises
            :exc:`~trio_mcp.RequestTimeout` after telling the peer to cancel.
        cancel_send_timeout: how long telling the peer about a cancellation
            may take (it runs shielded).
        drain_timeout: after the peer's input ends, how long running handlers
            may go on to send their answers.
        max_concurrent_requests: the most inbound handlers at once; as many more
            requests may wait for a turn, and the rest are refused as busy.
        admission: an :class:`Admission` shared with other sessions, instead of one
            of ``max_concurrent_requests`` for this session alone.
        notification_buffer: notifications queued for ``notification_handler``.
        immediate: answers requests that need no task (see :data:`ImmediateHandler`);
            such a request skips the task and cancel scope a handler would get.
        on_input_ended: called (synchronously) when the peer's input ends, before
            running handlers drain; a server uses it to end long-lived requests
            such as subscriptions.
        handback_delay: (client) ``0`` (the default): the receive loop reads
            everything, at once, at two trips through the scheduler per call. Above 0
            (:data:`HANDBACK_DELAY` is a good value) turns the handover on: the loop
            leaves the reading to the caller it has just answered for that long (see
            "Who reads" in :mod:`._reader`), which saves CPU on sequential calls, and a
            message nobody asked for may wait that long to be read.
    """

    def __init__(
        self,
        stream: MessageStream,
        connection: Connection,
        *,
        handler: RequestHandler | None = None,
        notification_handler: NotificationHandler | None = None,
        request_timeout: float | None = None,
        cancel_send_timeout: float = 2.0,
        drain_timeout: float = 10.0,
        max_concurrent_requests: int = 256,
        notification_buffer: int = 64,
        on_input_ended: Callable[[], None] | None = None,
        immediate: ImmediateHandler | None = None,
        admission: Admission | None = None,
        handback_delay: float = 0.0,
    ) -> None:
        self.stream = stream
        self.connection = connection
        self._notification_handler = notification_handler or _no_notifications
        self.request_timeout = request_timeout
        self.cancel_send_timeout = cancel_send_timeout
        self.drain_timeout = drain_timeout
        if admission is None:
            admission = Admission(max_concurrent_requests)
        self._inbound: Inbound[Session] = Inbound(
            self, handler, immediate, admission, max_concurrent_requests
        )
        self._notification_buffer = notification_buffer
        #: Our requests waiting for answers, by id: filed by _outbound, answered by _reader.
        self._waiters: dict[Any, Waiter] = {}
        if handback_delay < 0:
            raise ValueError("handback_delay must not be negative")
        self._reader = Reader(
            stream,
            connection,
            self._waiters,
            self._process,
            self._process_batch,
            handback_delay=handback_delay,
        )
        self._outbound = Outbound(self, self._reader, self._waiters)
        self._run_scope = trio.CancelScope()
        self._closed_error: ConnectionClosed | None = None
        self._input_ended = False
        self._end_reason: ConnectionClosed | None = None
        self._finished = trio.Event()
        self._on_input_ended = on_input_ended

    # -- state ------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """Whether nothing more can be sent."""
        return self._closed_error is not None

    @property
    def input_ended(self) -> bool:
        """Whether the peer's input has ended (no more answers or requests will come)."""
        return self._input_ended

    @property
    def end_reason(self) -> ConnectionClosed | None:
        """Why no answer can come any more (what every waiting request failed with): the
        peer closed the connection, its input broke (a message over ``max_message_size``
        says so), or the session was closed; ``None`` while it runs."""
        return self._closed_error if self._end_reason is None else self._end_reason

    async def wait_finished(self) -> None:
        """Block until the session's tasks have all ended (input over and handlers drained,
        or the session closed)."""
        await self._finished.wait()

    def check_open(self) -> None:
        """Raise if no answer can come any more; does not block. For a request the caller
        registers before it is sent (:meth:`track`).

        Raises:
            ConnectionClosed: the session was closed, or the peer's input ended.
        """
        if self._closed_error is not None:
            raise self._closed_error
        if self._input_ended:
            # A fresh exception each time (one raised again and again grows its traceback).
            reason = self._end_reason
            raise self._closure(
                "the peer closed the connection" if reason is None else reason.message
            )

    # -- running ----------------------------------------------------------------------------

    async def _run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        # Made here, not in __init__: a session that only answers single requests
        # (handle_request) never needs them.
        self._notifications_in, self._notifications_out = trio.open_memory_channel[tuple[str, Any]](
            self._notification_buffer
        )
        try:
            with self._run_scope:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._notification_worker)
                    try:
                        with trio.CancelScope() as handlers_scope:
                            async with trio.open_nursery() as handlers:
                                task_status.started()
                                await self._reader.receive_loop(handlers)
                                await self._end_of_input(self._reader.broken)
                                handlers_scope.deadline = trio.current_time() + self.drain_timeout
                    finally:
                        # Also when the session is closed under us: no channel outlives it.
                        self._notifications_in.close()
        finally:
            # Cancelled from outside (aclose and the end of input answered every waiter
            # already): the callers still tell the peer, as they let go of their requests.
            self._fail_all(self._closure("the connection closed"), tell_peer=True)
            self._finished.set()

    async def _end_of_input(self, broken: trio.BrokenResourceError | None) -> None:
        """No more input: fail every waiting request at once (with why the input broke, if
        it did). A message over the size limit is logged, and the peer is told with a
        -32600 error (``cancel_send_timeout`` at most: it may not be reading)."""
        self._input_ended = True
        if broken is None:
            self._end_reason = self._closure("the peer closed the connection")
        else:
            self._end_reason = self._closure(f"the connection failed: {broken}")
            log.warning("%s", self._end_reason.message)
        self._fail_all(self._end_reason)
        if self._on_input_ended is not None:
            self._on_input_ended()
        if isinstance(broken, MessageTooLarge):
            with trio.move_on_after(self.cancel_send_timeout):
                await send_quietly(self, broken.reply)

    def _closure(self, message: str) -> ConnectionClosed:
        details = getattr(self.stream, "close_details", None)
        returncode, stderr_tail = details() if details is not None else (None, None)
        return ConnectionClosed(message, returncode=returncode, stderr_tail=stderr_tail)

    async def _process(
        self, message: rpc.Message | rpc.InvalidMessage, handlers: trio.Nursery
    ) -> None:
        """Act on one message other than an answer the reader delivered itself."""
        event = self.connection.receive(message)
        match event:
            case Dispatch():
                await self._inbound.admit(event.request, handlers)
            case ResponseReceived():
                waiter = self._waiters.get(event.request.id)
                if waiter is not None:
                    waiter.deliver(event.response)
            case Reply():
                await self._inbound.reply(event.message, handlers)
            case CancelRequested():
                self._inbound.cancel(event.request.id, event.reason)
            case ProgressReceived():
                waiter = self._waiters.get(event.request.id)
                if waiter is not None:
                    waiter.push_progress(event.progress)
            case NotificationReceived():
                try:
                    await self._notifications_in.send((event.method, event.params))
                except trio.ClosedResourceError:
                    pass
            case PeerCancelled():
                waiter = self._waiters.get(event.request.id)
                if waiter is not None:
                    reason = event.reason or "no reason given"
                    ended = ConnectionClosed(f"the peer ended the request: {reason}")
                    waiter.deliver(Closed(ended))
            case Dropped():
                log.debug("dropped: %s", event.reason)
            case _:
                assert_never(event)

    async def _process_batch(self, batch: rpc.Batch, handlers: trio.Nursery) -> None:
        # Item by item, each answer on its own: see "Batches" in the module docstring.
        if not self.connection.allows_batches:
            refusal = McpError(
                "Invalid Request: this protocol version has no JSON-RPC batches",
                code=ErrorCode.INVALID_REQUEST,
            )
            await self._inbound.reply(rpc.ErrorResponse(None, refusal.error), handlers)
            return
        for item in batch.items:
            await self._process(item, handlers)

    async def handle_request(self, request: InboundRequest) -> None:
        """Run the handler for ``request`` in the calling task and send its answer.

        For transports that carry each request on an exchange of its own (stateless
        HTTP): they feed the message to :attr:`connection` themselves, and when it says
        :class:`~trio_mcp.protocol.Dispatch`, answer here instead of in a receive loop
        (the session need not be running). Blocks until the handler finished and its
        answer was sent; cancelling the call cancels the handler, which then sends
        nothing. Beyond ``max_concurrent_requests`` running and as many waiting, the
        request is refused at once with "Server busy".
        """
        await self._inbound.admit(request, None)

    async def _notification_worker(self) -> None:
        async with self._notifications_out:
            async for method, params in self._notifications_out:
                try:
                    await self._notification_handler(self, method, params)
                except Exception:
                    log.exception("notification handler for %s failed", method)

    def _fail_all(self, error: McpError, *, tell_peer: bool = False) -> None:
        for waiter in self._waiters.values():
            waiter.deliver(Closed(error, tell_peer=tell_peer))

    # -- sending ----------------------------------------------------------------------------

    async def send_message(self, message: rpc.Message, *, related: RequestId | None = None) -> None:
        """Send a message: the session's own, and one the connection made that the session
        does not send itself (the ``notifications/initialized`` of
        :meth:`Connection.complete_initialize`). ``related``: the id of the inbound request
        it belongs to, for transports that route by request.

        Blocks until the transport takes it.

        Raises:
            ConnectionClosed: the connection is gone (then every waiting request fails too).
        """
        if self._closed_error is not None:
            raise self._closed_error
        try:
            await self.stream.send(message, related=related)
        except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            error = self._closure("the connection is closed")
            self._closed_error = error
            self._fail_all(error)
            raise error from exc

    @overload
    def open_request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        progress: bool = False,
        model: type[R],
    ) -> AbstractAsyncContextManager[Call[R]]: ...
    @overload
    def open_request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        progress: bool = False,
        model: None = None,
    ) -> AbstractAsyncContextManager[Call[Any]]: ...
    @asynccontextmanager
    async def open_request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        progress: bool = False,
        model: type[R] | None = None,
    ) -> AsyncIterator[Call[R] | Call[Any]]:
        """Send a request whose lifetime is the ``async with`` block.

        Inside the block, iterate the :class:`Call` for progress and await
        :meth:`Call.result` for the answer: read as ``model`` when one is given (a
        ``Call[model]``), else as the method's result type. Leaving the block before the answer
        came (an exception, a cancel scope, a ``break``) tells the peer to
        cancel the request.

        Progress waits for you in a bounded buffer of
        :data:`~trio_mcp.session.PROGRESS_BUFFER` updates: when you read more
        slowly than the peer reports, the oldest unread update is dropped (the
        receive loop never waits for you), and :attr:`Call.dropped_progress`
        counts them. The answer is never dropped.

        Blocks while sending. Raises :exc:`~trio_mcp.McpError` at once if the
        request may not be sent (phase, era, or the peer's capabilities), and
        :exc:`~trio_mcp.ConnectionClosed` if the connection is gone.
        """
        self.check_open()
        pending, message = self.connection.send_request(
            method, params, progress_token=True if progress else None
        )
        async with self._outbound.track(pending, message, progress, model, notify=True) as call:
            yield call

    @overload
    def track(
        self,
        pending: OutboundRequest,
        message: rpc.JsonRpcRequest,
        *,
        progress: bool = False,
        model: type[R],
        notify_cancel: bool = True,
    ) -> AbstractAsyncContextManager[Call[R]]: ...
    @overload
    def track(
        self,
        pending: OutboundRequest,
        message: rpc.JsonRpcRequest,
        *,
        progress: bool = False,
        model: None = None,
        notify_cancel: bool = True,
    ) -> AbstractAsyncContextManager[Call[Any]]: ...
    def track(
        self,
        pending: OutboundRequest,
        message: rpc.JsonRpcRequest,
        *,
        progress: bool = False,
        model: type[R] | None = None,
        notify_cancel: bool = True,
    ) -> AbstractAsyncContextManager[Call[R]] | AbstractAsyncContextManager[Call[Any]]:
        """Send a request the connection already registered (``Connection.send_request`` or
        ``Connection.initialize_request``) and track it for the block, as
        :meth:`open_request` does. With ``notify_cancel=False`` a request abandoned
        unanswered is forgotten without telling the peer (an era probe)."""
        return self._outbound.track(pending, message, progress, model, notify=notify_cancel)

    @overload
    async def send_request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        on_progress: ProgressCallback | None = None,
        model: type[R],
        related: InboundRequest | None = None,
    ) -> R | InputRequiredResult: ...
    @overload
    async def send_request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        on_progress: ProgressCallback | None = None,
        model: None = None,
        related: InboundRequest | None = None,
    ) -> Any: ...
    async def send_request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        on_progress: ProgressCallback | None = None,
        model: type[R] | None = None,
        related: InboundRequest | None = None,
    ) -> Any:
        """Send a request and wait for its answer.

        Returns the result read as ``model``, typed so (``model=types.ListToolsResult``
        returns a ``ListToolsResult``), or by default as the method's result type (a plain
        dict for methods the protocol does not define). A modern ``input_required`` answer
        is returned as :class:`~trio_mcp.types.InputRequiredResult`, which the return type
        with a ``model`` says.

        Blocks until the answer. Cancelling the wait (put it in a
        ``trio.fail_after`` for a deadline) tells the peer to cancel.
        ``on_progress`` (sync or async) is called with each progress update,
        in this task, before the answer is returned; while it runs, updates wait
        in a bounded buffer of :data:`~trio_mcp.session.PROGRESS_BUFFER`, which
        drops the oldest when a slow callback lets it fill (counted in
        ``connection.statistics().progress_dropped``). ``related`` is the inbound request
        this one is part of (a server asking the client something while it handles a
        call), for transports that route by request.

        Raises:
            McpError: the peer answered with an error, or the request may not be sent.
            RequestTimeout: the session's ``request_timeout`` passed.
            ConnectionClosed: the connection ended before the answer.
            ProtocolError: the answer was malformed.
        """
        timeout = self.request_timeout
        related_id = related.id if related is not None else None
        request = self._outbound.request
        if timeout is None or timeout == math.inf:
            return await request(method, params, on_progress, model, related_id)
        try:
            with trio.fail_after(timeout):
                return await request(method, params, on_progress, model, related_id)
        except trio.TooSlowError:
            raise RequestTimeout(f"{method} timed out after {timeout} s") from None

    async def request(
        self,
        request: Request[R],
        *,
        on_progress: ProgressCallback | None = None,
        related: InboundRequest | None = None,
    ) -> R | InputRequiredResult:
        """Send a typed request (``types.CallToolRequest(params=...)``) and return its typed
        result (or a modern peer's :class:`~trio_mcp.types.InputRequiredResult`); see
        :meth:`send_request`."""
        params = getattr(request, "params", None)
        raw = None if params is None else converter_for(self._write_version()).unstructure(params)
        result: R | InputRequiredResult = await self.send_request(
            request.method,
            raw,
            on_progress=on_progress,
            model=request.result_model,
            related=related,
        )
        return result

    def _write_version(self) -> str:
        return self.connection._write_version()

    async def send_notification(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        related: InboundRequest | None = None,
    ) -> None:
        """Send a notification (``related``: the inbound request it belongs to, if any).

        Raises:
            McpError: it may not be sent now (phase, revision, our capabilities).
            ConnectionClosed: the connection is gone.
        """
        version = related.version if related is not None else None
        notification = self.connection.send_notification(method, params, version=version)
        await self.send_message(notification, related=related.id if related is not None else None)

    async def notify(
        self, notification: Notification, *, related: InboundRequest | None = None
    ) -> None:
        """Send a typed notification (``types.ToolListChangedNotification()``): its
        ``params`` written for the peer's protocol version. Blocks until it is written."""
        version = related.version if related is not None else self._write_version()
        params = getattr(notification, "params", None)
        raw = None if params is None else converter_for(version).unstructure(params)
        await self.send_notification(notification.method, raw, related=related)

    async def send_progress(
        self,
        request: InboundRequest,
        progress: float,
        total: float | None = None,
        message: str | None = None,
    ) -> bool:
        """Report progress on ``request`` if its sender asked for progress and it is still
        running. Returns whether a notification was sent."""
        token = request.progress_token
        if token is None or request.finished or request.cancelled or self.closed:
            await trio.lowlevel.checkpoint()
            return False
        params = converter_for(request.version).unstructure(
            ProgressNotificationParams(
                progress_token=token, progress=progress, total=total, message=message
            )
        )
        await self.send_notification("notifications/progress", params, related=request)
        return True

    async def log(
        self,
        level: LoggingLevel,
        data: Any,
        *,
        logger: str | None = None,
        related: InboundRequest | None = None,
    ) -> bool:
        """(server) Send a log message if the client wants this level (see
        :meth:`Connection.wants_log`). Returns whether it was sent."""
        if not self.connection.wants_log(level, related) or self.closed:
            await trio.lowlevel.checkpoint()
            return False
        params = converter_for(related.version if related else self._write_version()).unstructure(
            LoggingMessageNotificationParams(level=level, data=data, logger=logger)
        )
        await self.send_notification("notifications/message", params, related=related)
        return True

    # -- closing ----------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Close the stream, cancel every handler, and fail every waiting request with
        :exc:`~trio_mcp.ConnectionClosed`. Idempotent; closes even when cancelled."""
        if self._closed_error is None:
            # After the input broke, what a later call fails with says why.
            self._closed_error = self._end_reason or ConnectionClosed("the session was closed")
            self._fail_all(self._closed_error)
        self.connection.close()
        self._run_scope.cancel()
        await self.stream.aclose()

    # -- for the layers built on a session (the client) ---------------------------------------

    def notifications_pending(self) -> int:
        """How many of the notifications received so far the notification handler has not
        finished: those queued for it, and the one it is handling now. Does not block.

        A layer that counts the handler's returns waits for this many more to know that
        everything received before a given moment (an answer, which does not queue) was
        handled. Once running, the handler's task waits on the queue whenever it holds no
        notification, so a task not waiting there holds one. 0 when the session handles no
        more (it stopped, or it runs no notification task).
        """
        queue: trio.MemorySendChannel[tuple[str, Any]] | None
        queue = getattr(self, "_notifications_in", None)
        if queue is None:
            return 0
        stats = queue.statistics()
        if stats.open_receive_channels == 0:
            return 0
        pending: int = stats.current_buffer_used + (stats.tasks_waiting_receive == 0)
        return pending


async def connect_session(
    nursery: trio.Nursery,
    stream: MessageStream,
    connection: Connection,
    **options: Unpack[SessionOptions],
) -> Session:
    """Start a :class:`Session` whose tasks run in ``nursery`` (yours to own).

    Returns once the session is receiving. Close it with :meth:`Session.aclose`;
    until then the nursery will not exit. Options are :class:`Session`'s
    (:class:`~trio_mcp.session.SessionOptions`).
    """
    session = Session(stream, connection, **options)
    await nursery.start(session._run)
    return session


@asynccontextmanager
async def open_session(
    stream: MessageStream, connection: Connection, **options: Unpack[SessionOptions]
) -> AsyncIterator[Session]:
    """Run a :class:`Session` for the duration of the block.

    Entering blocks until the session receives; leaving closes it (cancelling
    its handlers and failing waiting requests). Options are :class:`Session`'s
    (:class:`~trio_mcp.session.SessionOptions`).
    """
    async with open_nursery_unwrapped() as nursery:
        session = await connect_session(nursery, stream, connection, **options)
        try:
            yield session
        finally:
            await session.aclose()
