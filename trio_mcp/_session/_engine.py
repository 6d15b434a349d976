"""The Trio session engine: runs a sans-IO :class:`~trio_mcp.protocol.Connection` over a
:class:`~trio_mcp.transports.MessageStream`.

Resource handling
-----------------

A session's tasks live in a nursery its caller owns: :func:`open_session`
opens one for the block, :func:`connect_session` uses yours. The session runs
one receive loop and one notification task there, and one task per inbound
request (each under its own cancel scope, registered by request id). Nothing
outlives the nursery.

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

Who reads
---------

By default the receive loop reads every message the peer sends and acts on it
at once: when ``trio.testing.wait_all_tasks_blocked()`` returns, everything that
had arrived has been handled, which is what Trio users write their tests with.

The *handover* is an opt-in, for a client that calls one tool after another
and counts its CPU: ``Session(handback_delay=HANDBACK_DELAY)`` (also an option
of every client). A caller whose answer the loop delivers is likely to send its
next request at once; so after delivering an answer that nobody else is
waiting for, a client's loop then parks for up to ``handback_delay`` seconds,
and a request sent meanwhile has its caller read the answer itself. (A
server's loop never parks: its input is mostly requests, which must not wait.)
A sequential caller then passes through Trio's scheduler once per call instead
of twice (the loop's wake-up and then the caller's); ``benchmarks/client_cost.py
--handback-delay`` measures what that saves.

A reading caller delivers every answer it reads (to whichever caller it is
for), and nothing else: anything else (a request, a notification, progress, a
batch, bad input, the end of input) goes, in order, to the loop, which is woken
to handle it before it reads on; the caller stops reading there and waits. It
hands the reading back whenever it stops, at once if someone else is waiting,
else after ``handback_delay``. Its receive is cancellable without loss, as
every :class:`~trio_mcp.transports.MessageStream`'s is (``check_transport``
checks it), so cancelling a reading caller loses nothing either. The price,
and the reason it is not the default: a message nobody asked for that arrives
within ``handback_delay`` of an answer may wait that long to be read
(``trio.testing.wait_all_tasks_blocked`` returns in between; a Trio clock that
never advances keeps it waiting). The handover trades that latency of
unsolicited messages for CPU.

Backpressure
------------

At most ``max_concurrent_requests`` inbound handlers run at once, and as many
more requests wait for a turn; a request beyond that is refused at once with
-32603 ("server busy"). The receive loop never waits for a handler slot: the
message that frees one (a cancellation, the answer a handler awaits from the
peer) may be the next one to read. For the same reason it does not wait to send
the answers the protocol gives itself (pings, errors for bad input): each goes
out from its own task, unless more than ``max_concurrent_requests`` are already
waiting to. Notifications for the application queue in a channel of
``notification_buffer`` entries, handled in order by one task; when it is full
the receive loop waits, and a fast peer with it. Progress for one of our
requests keeps the newest :data:`~._waiter.PROGRESS_BUFFER` unread updates.

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
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from typing import Any, Final, Generic, TypeVar, Unpack

import trio

from .. import _jsonrpc as rpc
from .._errors import ConnectionClosed, ErrorCode, McpError, ProtocolError, RequestTimeout
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
from .._transports._stream import MessageStream, Received
from .._types._base import LoggingLevel, Request
from .._types._converter import converter_for
from .._types._notifications import LoggingMessageNotificationParams, ProgressNotificationParams
from .._util import open_nursery_unwrapped
from ._options import SessionOptions
from ._waiter import Waiter

__all__ = [
    "Call",
    "NotificationHandler",
    "RequestHandler",
    "Session",
    "connect_session",
    "open_session",
]

log = logging.getLogger("trio_mcp.session")
#: The name of every inbound request's handler task (a constant: trio would otherwise format
#: one from the function for each task, on the hot path).
_HANDLER_TASK: Final = "trio_mcp: request handler"
#: The delay to opt in to the handover with, ``Session(handback_delay=HANDBACK_DELAY)``
#: (seconds; the default is 0, no handover): how long a client's receive loop leaves the
#: reading to the caller whose answer it has just delivered (see "Who reads" in the module
#: docstring), so at most how long, after a call, a message nobody asked for waits to be
#: read. Not shorter: the caller that reads waits in the kernel with the loop's deadline
#: as its timeout, and a timeout shorter than the kernel's tick costs more to arm than the
#: scheduler pass the handover saves.
HANDBACK_DELAY: Final = 0.01
#: Left in the stash by a reading caller whose receive found the input at its end.
_INPUT_ENDED: Final = object()

R = TypeVar("R")

#: ``await handler(session, request)`` answers one inbound request: return a result model
#: (or a plain dict), or raise :exc:`~trio_mcp.McpError` to answer with an error.
RequestHandler = Callable[["Session", InboundRequest], Awaitable[Any]]
#: ``await handler(session, method, params)`` takes one notification; ``params`` is typed
#: for methods the protocol defines.
NotificationHandler = Callable[["Session", str, Any], Awaitable[None]]
#: ``handler(session, request)`` answers a request *now*, without a task, or returns
#: :data:`LATER` to have it handled by :data:`RequestHandler` in a task of its own. Only for
#: work that never blocks (a plain function): it runs in the receive loop, and cannot be
#: cancelled because it never yields.
ImmediateHandler = Callable[["Session", InboundRequest], Any]
#: What an :data:`ImmediateHandler` returns to decline.
LATER: Any = object()

#: Called with each progress update of a request.
ProgressCallback = Callable[[ProgressNotificationParams], Awaitable[None] | None]


class _Closed:
    """In a waiter: the answer will never come; ``error`` is raised instead. ``tell_peer``:
    the peer does not know (the session stopped running under the request, its nursery
    cancelled, while the stream may still work), so the caller still sends
    ``notifications/cancelled`` when it lets go of the request."""

    __slots__ = ("error", "tell_peer")

    def __init__(self, error: McpError, *, tell_peer: bool = False) -> None:
        self.error = error
        self.tell_peer = tell_peer


def _unanswered(waiter: Waiter) -> bool:
    """Whether the peer should hear that a request is cancelled: no answer came, and the
    peer does not know it never will."""
    answer = waiter.answer
    return answer is None or (type(answer) is _Closed and answer.tell_peer)


async def _no_requests(session: Session, request: InboundRequest) -> Any:
    raise McpError(f"Method not found: {request.method}", code=ErrorCode.METHOD_NOT_FOUND)


async def _no_notifications(session: Session, method: str, params: Any) -> None:
    log.debug("ignored notification %s", method)


class Admission:
    """How many inbound handlers may run at once, and how many more requests may wait
    for a turn before the rest are refused as busy.

    Each session has its own, unless it is given one to share: the stateless HTTP
    endpoint gives every request a session of its own, and bounds them all with one.
    """

    __slots__ = ("backlog", "slots", "waiting")

    def __init__(self, max_concurrent_requests: int) -> None:
        if max_concurrent_requests < 1:
            raise ValueError("max_concurrent_requests must be at least 1")
        self.slots = trio.Semaphore(max_concurrent_requests)
        #: The most requests that may wait for a slot.
        self.backlog = max_concurrent_requests
        #: Requests waiting for a slot now.
        self.waiting = 0


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
            "Who reads"), which saves CPU on sequential calls, and a message nobody
            asked for may wait that long to be read.
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
        self._handler = handler or _no_requests
        self._notification_handler = notification_handler or _no_notifications
        self.request_timeout = request_timeout
        self.cancel_send_timeout = cancel_send_timeout
        self.drain_timeout = drain_timeout
        if admission is None:
            admission = Admission(max_concurrent_requests)
        self._admission = admission
        self._slots = admission.slots
        self._reply_slots = trio.Semaphore(max_concurrent_requests)
        self._notification_buffer = notification_buffer
        self._waiters: dict[Any, Waiter] = {}
        self._scopes: dict[Any, trio.CancelScope] = {}
        self._run_scope = trio.CancelScope()
        self._closed_error: ConnectionClosed | None = None
        self._input_ended = False
        self._finished = trio.Event()
        self._on_input_ended = on_input_ended
        self._immediate = immediate
        # Who reads (see the module docstring): the receive loop, or a caller while the
        # loop is parked in _park_scope.
        self._caller_reading = False
        self._park_scope: trio.CancelScope | None = None
        # Only a client's loop hands the reading over: a server's input is mostly requests,
        # which must not wait for a handler that asked the client something.
        if handback_delay < 0:
            raise ValueError("handback_delay must not be negative")
        self._handback_delay = handback_delay
        self._hands_over = connection.role == "client" and handback_delay > 0
        #: What a reading caller read but is not its to handle (anything but an answer),
        #: for the receive loop, in order, before anything it reads itself.
        self._stash: deque[Received | object] = deque()

    # -- state ------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """Whether nothing more can be sent."""
        return self._closed_error is not None

    @property
    def input_ended(self) -> bool:
        """Whether the peer's input has ended (no more answers or requests will come)."""
        return self._input_ended

    async def wait_finished(self) -> None:
        """Block until the session's tasks have all ended (input over and handlers drained,
        or the session closed)."""
        await self._finished.wait()

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
                                await self._receive_loop(handlers)
                                handlers_scope.deadline = trio.current_time() + self.drain_timeout
                    finally:
                        # Also when the session is closed under us: no channel outlives it.
                        self._notifications_in.close()
        finally:
            # Cancelled from outside (aclose and the end of input answered every waiter
            # already): the callers still tell the peer, as they let go of their requests.
            self._fail_all(self._closure("the connection closed"), tell_peer=True)
            self._finished.set()

    async def _receive_loop(self, handlers: trio.Nursery) -> None:
        stream = self.stream
        process = self._process
        receive_nowait = stream.receive_nowait
        stash = self._stash
        while True:
            while self._caller_reading:
                await self._park(math.inf)
            if stash:
                item = stash.popleft()
                if item is _INPUT_ENDED:
                    break
            else:
                try:
                    item = await stream.receive()
                except trio.EndOfChannel:
                    break
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    break
            answered = False
            while True:
                kind = type(item)
                if kind is rpc.ResultResponse or kind is rpc.ErrorResponse:
                    # The answer to one of our requests: handed over without a coroutine of
                    # its own (it never waits), the commonest message a client reads.
                    self._take_response(item)  # type: ignore[arg-type]
                    answered = True
                elif kind is rpc.Batch:
                    await self._process_batch(item, handlers)  # type: ignore[arg-type]
                else:
                    await process(item, handlers)  # type: ignore[arg-type]
                if stash:
                    break  # what a caller left comes before what is still in the stream
                # Take what already arrived with it before yielding, so the handlers of a
                # burst start together and their answers leave in one write.
                try:
                    item = receive_nowait()
                except trio.WouldBlock:
                    break
            if answered and self._hands_over and not stash and not self._anyone_waiting():
                # The caller just answered is likely to send its next request at once:
                # let it read the answer itself (one trip through the scheduler per call,
                # not two), unless it has not come back within handback_delay.
                await self._park(trio.current_time() + self._handback_delay)
        self._input_ended = True
        self._fail_all(self._closure("the peer closed the connection"))
        if self._on_input_ended is not None:
            self._on_input_ended()

    def _closure(self, message: str) -> ConnectionClosed:
        details = getattr(self.stream, "close_details", None)
        returncode, stderr_tail = details() if details is not None else (None, None)
        return ConnectionClosed(message, returncode=returncode, stderr_tail=stderr_tail)

    async def _process_batch(self, batch: rpc.Batch, handlers: trio.Nursery) -> None:
        # Item by item, each answer on its own: see "Batches" in the module docstring.
        if not self.connection.allows_batches:
            refusal = McpError(
                "Invalid Request: this protocol version has no JSON-RPC batches",
                code=ErrorCode.INVALID_REQUEST,
            )
            await self._reply(rpc.ErrorResponse(None, refusal.error), handlers)
            return
        for item in batch.items:
            await self._process(item, handlers)

    async def _park(self, deadline: float) -> None:
        """Let callers read (see "Who reads"): until ``deadline``, or until a caller stops
        reading with others still waiting, or leaves something in the stash."""
        with trio.CancelScope(deadline=deadline) as scope:
            self._park_scope = scope
            try:
                await trio.sleep_forever()
            finally:
                self._park_scope = None

    def _anyone_waiting(self) -> bool:
        """Whether a request of ours still waits for its answer."""
        waiters = self._waiters
        if len(waiters) == 1:  # the usual case: the caller that was just answered
            (waiter,) = waiters.values()
            return waiter.answer is None
        return any(waiter.answer is None for waiter in waiters.values())

    def _wake_loop(self) -> None:
        """Have the receive loop read, if it is parked and no caller reads."""
        scope = self._park_scope
        if scope is not None and not self._caller_reading:
            scope.cancel()

    async def _read_as_caller(self, waiter: Waiter) -> None:
        """Read for the receive loop, while it is parked, until ``waiter`` has its answer.

        Answers (to anyone) are delivered here; anything else goes to the stash and the
        loop is woken to handle it, and this stops reading, so that what follows is
        handled after it. The receive is cancellable without loss (a
        :class:`~trio_mcp.transports.MessageStream` guarantees it); whatever way this
        ends, the reading goes back to the loop, at once if someone else waits.
        """
        stream = self.stream
        self._caller_reading = True
        try:
            while True:
                if waiter.answer is not None:
                    return
                try:
                    item = await stream.receive()
                except (trio.EndOfChannel, trio.BrokenResourceError, trio.ClosedResourceError):
                    self._stash.append(_INPUT_ENDED)  # the loop ends the session's input
                    return
                while True:
                    kind = type(item)
                    if kind is not rpc.ResultResponse and kind is not rpc.ErrorResponse:
                        self._stash.append(item)
                        return
                    self._take_response(item)  # type: ignore[arg-type]
                    if waiter.answered:
                        # Done. What else is already buffered is read by the next reader,
                        # at the latest the loop, as if it had come just after.
                        break
                    try:
                        item = stream.receive_nowait()
                    except trio.WouldBlock:
                        break
        finally:
            self._caller_reading = False
            scope = self._park_scope
            if scope is not None:
                if self._stash or self._anyone_waiting():
                    scope.cancel()
                else:
                    # The loop reads within handback_delay from now. Its deadline is set
                    # afresh only when it is not between half of that and that (moving
                    # a deadline is work for Trio's deadline heap, at every call else).
                    now = trio.current_time()
                    delay = self._handback_delay
                    deadline = scope.deadline
                    if deadline < now + delay / 2 or deadline > now + delay:
                        scope.deadline = now + delay

    def _take_response(self, message: rpc.ResultResponse | rpc.ErrorResponse) -> None:
        event = self.connection.receive(message)
        if type(event) is ResponseReceived:
            waiter = self._waiters.get(event.request.id)
            if waiter is not None:
                waiter.deliver(event.response)
        else:
            assert type(event) is Dropped
            log.debug("dropped: %s", event.reason)

    async def _process(
        self, message: rpc.Message | rpc.InvalidMessage, handlers: trio.Nursery
    ) -> None:
        event = self.connection.receive(message)
        kind = type(event)
        if kind is Dispatch:
            request: InboundRequest = event.request  # type: ignore[union-attr,assignment]
            if self._immediate is not None and await self._answer_now(request, handlers):
                return
            try:
                self._slots.acquire_nowait()
            except trio.WouldBlock:
                if self._admission.waiting >= self._admission.backlog:
                    busy = McpError("Server busy: too many requests in flight")
                    refusal = self.connection.respond_error(request, busy)
                    if refusal is not None:
                        await self._reply(refusal, handlers, related=request.id)
                    return
                self._admission.waiting += 1
                handlers.start_soon(self._handle, request, False, name=_HANDLER_TASK)
            else:
                handlers.start_soon(self._handle, request, True, name=_HANDLER_TASK)
        elif kind is ResponseReceived:
            waiter = self._waiters.get(event.request.id)  # type: ignore[union-attr]
            if waiter is not None:
                waiter.deliver(event.response)  # type: ignore[union-attr]
        elif kind is Reply:
            await self._reply(event.message, handlers)  # type: ignore[union-attr]
        elif kind is CancelRequested:
            scope = self._scopes.get(event.request.id)  # type: ignore[union-attr]
            if scope is not None:
                log.debug("peer cancelled request %r: %s", event.request.id, event.reason)  # type: ignore[union-attr]
                scope.cancel()
        elif kind is ProgressReceived:
            waiter = self._waiters.get(event.request.id)  # type: ignore[union-attr]
            if waiter is not None:
                waiter.push_progress(event.progress)  # type: ignore[union-attr]
        elif kind is NotificationReceived:
            try:
                await self._notifications_in.send((event.method, event.params))  # type: ignore[union-attr]
            except trio.ClosedResourceError:
                pass
        elif kind is PeerCancelled:
            waiter = self._waiters.get(event.request.id)  # type: ignore[union-attr]
            if waiter is not None:
                reason = event.reason or "no reason given"  # type: ignore[union-attr]
                waiter.deliver(_Closed(ConnectionClosed(f"the peer ended the request: {reason}")))
        else:
            assert kind is Dropped
            log.debug("dropped: %s", event.reason)  # type: ignore[union-attr]

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
        if self._immediate is not None:
            answer = self._immediate_answer(request)
            if answer is not LATER:
                if answer is not None:
                    with suppress(ConnectionClosed):
                        await self._send_answer(request, answer)  # type: ignore[arg-type]
                return
        try:
            self._slots.acquire_nowait()  # the handler checkpoints; no need to yield first
        except trio.WouldBlock:
            if self._admission.waiting >= self._admission.backlog:
                await self._refuse_busy(request)
                return
            self._admission.waiting += 1
            await self._handle(request, False)
        else:
            await self._handle(request, True)

    async def _refuse_busy(self, request: InboundRequest) -> None:
        busy = McpError("Server busy: too many requests in flight")
        refusal = self.connection.respond_error(request, busy)
        if refusal is not None:
            await self._send_quietly(refusal, related=request.id)

    def _immediate_answer(self, request: InboundRequest) -> rpc.Message | object | None:
        """The immediate handler's answer to ``request``: a message, None (nothing to
        send), or LATER (it needs a task of its own)."""
        assert self._immediate is not None
        try:
            result = self._immediate(self, request)
            if result is LATER:
                return LATER  # type: ignore[no-any-return]
            return self.connection.respond(request, result)
        except McpError as exc:
            return self.connection.respond_error(request, exc)
        except Exception:
            log.exception("handler for %s (id %r) failed", request.method, request.id)
            return self.connection.respond_error(
                request, McpError("Internal error", code=ErrorCode.INTERNAL_ERROR)
            )

    async def _answer_now(self, request: InboundRequest, handlers: trio.Nursery) -> bool:
        """Answer ``request`` in the receive loop if the immediate handler can; True if done."""
        answer = self._immediate_answer(request)
        if answer is LATER:
            return False
        if answer is not None:
            await self._reply(answer, handlers, related=request.id)  # type: ignore[arg-type]
        return True

    async def _handle(self, request: InboundRequest, admitted: bool) -> None:
        waiting = not admitted
        try:
            with trio.CancelScope() as scope:
                self._scopes[request.id] = scope
                # A cancellation read before this task got to run (there was no scope to
                # cancel yet), or just as a slot was handed to it (too late to interrupt
                # the wait), means: do not start the handler at all.
                if waiting and not request.cancelled:
                    await self._slots.acquire()
                    waiting, admitted = False, True
                    self._admission.waiting -= 1
                if request.cancelled:
                    return
                try:
                    result = await self._handler(self, request)
                    message: rpc.Message | None = self.connection.respond(request, result)
                except McpError as exc:
                    message = self.connection.respond_error(request, exc)
                except Exception:
                    log.exception("handler for %s (id %r) failed", request.method, request.id)
                    message = self.connection.respond_error(
                        request, McpError("Internal error", code=ErrorCode.INTERNAL_ERROR)
                    )
                if message is not None:
                    await self._send_answer(request, message)
        except ConnectionClosed:
            pass
        finally:
            self._scopes.pop(request.id, None)
            if not request.finished:
                self.connection.abandon(request)
            if waiting:
                self._admission.waiting -= 1
            if admitted:
                self._slots.release()

    async def _send_answer(self, request: InboundRequest, message: rpc.Message) -> None:
        try:
            await self._send(message, related=request.id)
        except TypeError:
            # The result held something JSON cannot carry (a set, an object): the
            # handler's bug, answered like any other handler failure.
            log.exception("answer to %s (id %r) is not JSON", request.method, request.id)
            internal = McpError("Internal error", code=ErrorCode.INTERNAL_ERROR)
            await self._send(rpc.ErrorResponse(request.id, internal.error), related=request.id)

    async def _notification_worker(self) -> None:
        async with self._notifications_out:
            async for method, params in self._notifications_out:
                try:
                    await self._notification_handler(self, method, params)
                except Exception:
                    log.exception("notification handler for %s failed", method)

    def _fail_all(self, error: McpError, *, tell_peer: bool = False) -> None:
        for waiter in self._waiters.values():
            waiter.deliver(_Closed(error, tell_peer=tell_peer))

    # -- sending ----------------------------------------------------------------------------

    async def _send(self, message: rpc.Message, *, related: Any = None) -> None:
        if self._closed_error is not None:
            raise self._closed_error
        try:
            await self.stream.send(message, related=related)
        except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            error = self._closure("the connection is closed")
            self._closed_error = error
            self._fail_all(error)
            raise error from exc

    async def _reply(
        self, message: rpc.Message, handlers: trio.Nursery, *, related: Any = None
    ) -> None:
        """Send an answer given without a handler task (a ping, an error for bad input, a
        plain-function tool's result) without holding up the receive loop: the peer may be
        blocked sending to us at this very moment (a lockstep transport, pings crossing), and
        would never read it. If the transport has room the answer leaves at once; otherwise a
        task sends it, and only a flood of more than ``max_concurrent_requests`` unsent
        answers makes the loop wait."""
        try:
            self.stream.send_nowait(message, related=related)
            return
        except trio.WouldBlock:
            pass
        except TypeError:
            # The answer held something JSON cannot carry: the handler's bug.
            log.exception("answer to request %r is not JSON", related)
            internal = McpError("Internal error", code=ErrorCode.INTERNAL_ERROR)
            message = rpc.ErrorResponse(related, internal.error)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return
        try:
            self._reply_slots.acquire_nowait()
        except trio.WouldBlock:
            await self._send_quietly(message, related=related)
        else:
            handlers.start_soon(self._send_reply, message, related)

    async def _send_reply(self, message: rpc.Message, related: Any) -> None:
        try:
            await self._send_quietly(message, related=related)
        finally:
            self._reply_slots.release()

    async def _send_quietly(self, message: rpc.Message, *, related: Any = None) -> None:
        try:
            await self._send(message, related=related)
        except ConnectionClosed:
            pass

    @asynccontextmanager
    async def open_request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        progress: bool = False,
        model: type[Any] | None = None,
    ) -> AsyncIterator[Call[Any]]:
        """Send a request whose lifetime is the ``async with`` block.

        Inside the block, iterate the :class:`Call` for progress and await
        :meth:`Call.result` for the answer. Leaving the block before the answer
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
        self._check_open()
        pending, message = self.connection.send_request(
            method, params, progress_token=True if progress else None
        )
        async with self.track(pending, message, progress=progress, model=model) as call:
            yield call

    def _check_open(self) -> None:
        if self._closed_error is not None:
            raise self._closed_error
        if self._input_ended:
            raise self._closure("the peer closed the connection")

    @asynccontextmanager
    async def track(
        self,
        pending: OutboundRequest,
        message: rpc.Request,
        *,
        progress: bool = False,
        model: type[Any] | None = None,
        notify_cancel: bool = True,
    ) -> AsyncIterator[Call[Any]]:
        """Send a request the connection already registered (``Connection.send_request`` or
        ``Connection.initialize_request``) and track it for the block, as
        :meth:`open_request` does. With ``notify_cancel=False`` a request abandoned
        unanswered is forgotten without telling the peer (an era probe)."""
        waiter = Waiter(progress=progress)
        self._waiters[pending.id] = waiter
        self._wake_loop()  # this caller waits in the block; the receive loop reads for it
        try:
            await self._send(message)
            yield Call(self, pending, waiter, model)
        finally:
            del self._waiters[pending.id]
            self._count_dropped_progress(waiter)
            if _unanswered(waiter) and notify_cancel:
                await self._cancel(pending, "the caller stopped waiting")
            elif waiter.answer is None or type(waiter.answer) is _Closed:
                self.connection.forget(pending)

    def _count_dropped_progress(self, waiter: Waiter) -> None:
        # Progress the connection delivered but nobody read in time: it counts with the
        # progress the connection itself dropped (unknown or finished tokens).
        if waiter.dropped_progress:
            self.connection._stats.progress_dropped += waiter.dropped_progress

    async def _cancel(self, pending: OutboundRequest, reason: str) -> None:
        notification = self.connection.cancel(pending, reason)
        if notification is None or self._closed_error is not None:
            return
        with trio.move_on_after(self.cancel_send_timeout, shield=True):
            await self._send_quietly(notification)

    async def send_request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        on_progress: ProgressCallback | None = None,
        model: type[Any] | None = None,
        related: InboundRequest | None = None,
    ) -> Any:
        """Send a request and wait for its answer.

        Returns the result read as ``model`` (by default the method's result
        type; a plain dict for methods the protocol does not define). A modern
        ``input_required`` answer is returned as
        :class:`~trio_mcp.types.InputRequiredResult`.

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
        if timeout is None or timeout == math.inf:
            return await self._request(method, params, on_progress, model, related_id)
        try:
            with trio.fail_after(timeout):
                return await self._request(method, params, on_progress, model, related_id)
        except trio.TooSlowError:
            raise RequestTimeout(f"{method} timed out after {timeout} s") from None

    async def _request(
        self,
        method: str,
        params: dict[str, Any] | None,
        on_progress: ProgressCallback | None,
        model: type[Any] | None,
        related: Any = None,
    ) -> Any:
        # open_request() without the context-manager layers: this is the hot path.
        self._check_open()
        await trio.lowlevel.checkpoint_if_cancelled()
        pending, message = self.connection.send_request(
            method, params, progress_token=True if on_progress is not None else None
        )
        waiter = Waiter(progress=on_progress is not None)
        self._waiters[pending.id] = waiter
        try:
            # Sent without a scheduling point of its own when the transport takes it at once
            # (the wait that follows is one): a sequential caller passes through the
            # scheduler once per call, not twice.
            sent = False
            if self._closed_error is None:
                try:
                    self.stream.send_nowait(message, related=related)
                    sent = True
                except (trio.WouldBlock, trio.BrokenResourceError, trio.ClosedResourceError):
                    pass  # _send waits for room, or says in its words why it cannot send
            if not sent:
                await self._send(message, related=related)
            while waiter.answer is None:
                if self._park_scope is not None and not self._caller_reading and not self._stash:
                    await self._read_as_caller(waiter)
                    continue
                self._wake_loop()
                await waiter.wait()
                while waiter.progress:
                    result = on_progress(waiter.progress.popleft())  # type: ignore[misc]
                    if result is not None:
                        await result
        finally:
            del self._waiters[pending.id]
            if waiter.dropped_progress:
                self._count_dropped_progress(waiter)
            if _unanswered(waiter):
                await self._cancel(pending, "the caller stopped waiting")
            elif type(waiter.answer) is _Closed:
                self.connection.forget(pending)
        answer = waiter.answer
        if type(answer) is rpc.ResultResponse:
            return self.connection.read_result(pending, answer.result, model)
        return _read_answer(self.connection, pending, answer, model)

    async def request(
        self,
        request: Request[R],
        *,
        on_progress: ProgressCallback | None = None,
        related: InboundRequest | None = None,
    ) -> R:
        """Send a typed request (``types.CallToolRequest(params=...)``) and return its typed
        result; see :meth:`send_request`."""
        params = getattr(request, "params", None)
        raw = None if params is None else converter_for(self._write_version()).unstructure(params)
        method: str = request.method  # type: ignore[attr-defined]
        return await self.send_request(  # type: ignore[no-any-return]
            method, raw, on_progress=on_progress, model=request.result_model, related=related
        )

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
        await self._send(notification, related=related.id if related is not None else None)

    async def notify(self, notification: Any, *, related: InboundRequest | None = None) -> None:
        """Send a typed notification (``types.ToolListChangedNotification()``)."""
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
            self._closed_error = ConnectionClosed("the session was closed")
            self._fail_all(self._closed_error)
        self.connection.close()
        self._run_scope.cancel()
        await self.stream.aclose()


class Call(Generic[R]):
    """A request in flight (see :meth:`Session.open_request`).

    ``async for update in call`` yields its progress until the answer arrives;
    ``await call.result()`` waits for the answer. Unread progress is kept in a
    bounded buffer (:data:`~trio_mcp.session.PROGRESS_BUFFER` updates) that
    drops the oldest when full; :attr:`dropped_progress` counts what was lost.
    """

    def __init__(
        self, session: Session, pending: OutboundRequest, waiter: Waiter, model: type[Any] | None
    ) -> None:
        self._session = session
        self.request = pending
        self._waiter = waiter
        self._model = model

    @property
    def id(self) -> Any:
        return self.request.id

    @property
    def dropped_progress(self) -> int:
        """How many of this request's progress updates were dropped, unread, because
        more than :data:`~trio_mcp.session.PROGRESS_BUFFER` were waiting."""
        return self._waiter.dropped_progress

    def __aiter__(self) -> Call[R]:
        if self._waiter.progress is None:
            raise RuntimeError("this request was not sent with progress=True")
        return self

    async def __anext__(self) -> ProgressNotificationParams:
        waiter = self._waiter
        await waiter.wait()
        if waiter.progress:
            update: ProgressNotificationParams = waiter.progress.popleft()
            await trio.lowlevel.checkpoint_if_cancelled()
            return update
        raise StopAsyncIteration

    async def answer(self) -> rpc.ResultResponse | rpc.ErrorResponse | rpc.InvalidMessage:
        """Block until the answer; return it as it came (unread).

        Raises:
            ConnectionClosed: the connection ended first.
        """
        waiter = self._waiter
        while waiter.answer is None:
            await waiter.wait()
            if waiter.progress:
                waiter.progress.clear()
        await trio.lowlevel.checkpoint_if_cancelled()
        answer = waiter.answer
        if type(answer) is _Closed:
            raise answer.error
        return answer  # type: ignore[no-any-return]

    async def result(self) -> R:
        """Block until the answer; return it read as the result model.

        Raises:
            McpError: the peer answered with an error.
            ConnectionClosed: the connection ended first.
            ProtocolError: the answer was malformed.
        """
        answer = await self.answer()
        return _read_answer(self._session.connection, self.request, answer, self._model)  # type: ignore[no-any-return]


def _read_answer(
    connection: Connection, pending: OutboundRequest, answer: Any, model: type[Any] | None
) -> Any:
    kind = type(answer)
    if kind is rpc.ResultResponse:
        return connection.read_result(pending, answer.result, model)
    if kind is rpc.ErrorResponse:
        raise McpError.from_error(answer.error)
    if kind is _Closed:
        raise answer.error
    raise ProtocolError(f"malformed answer to {pending.method}: {answer.reason}")


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
