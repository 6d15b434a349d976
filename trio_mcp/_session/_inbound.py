"""The peer's requests to us: admission, a handler task each, and sending the answers.

Backpressure
------------

At most ``max_concurrent_requests`` inbound handlers run at once, and as many
more requests wait for a turn; a request beyond that is refused at once with
-32603 ("server busy"). The receive loop never waits for a handler slot: the
message that frees one (a cancellation, the answer a handler awaits from the
peer) may be the next one to read. For the same reason it does not wait to send
the answers the protocol gives itself (pings, errors for bad input): each goes
out from its own task, unless more than ``max_concurrent_requests`` are already
waiting to.

Cancellation
------------

Each handler runs under its own cancel scope, registered by request id: the
peer's ``notifications/cancelled`` cancels it, and a cancelled handler sends
nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from contextlib import suppress
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar

import trio

from .. import _jsonrpc as rpc
from .._errors import ConnectionClosed, ErrorCode, McpError
from .._protocol._events import InboundRequest
from ._link import Link, send_quietly

if TYPE_CHECKING:
    from .._protocol._connection import Connection

log = logging.getLogger("trio_mcp.session")
#: The name of every inbound request's handler task (a constant: trio would otherwise format
#: one from the function for each task, on the hot path).
_HANDLER_TASK: Final = "trio_mcp: request handler"

#: The session the handlers are given (a :class:`~._link.Link`: the session module's
#: :class:`~._engine.Session`, which this module does not import).
S = TypeVar("S", bound=Link)
#: What :func:`respond_now` hands to the function that answers.
T = TypeVar("T")

#: What an immediate handler (:data:`~._engine.ImmediateHandler`) returns to decline.
LATER: Any = object()


class NeedsTask:
    """What :meth:`Inbound._immediate_answer` says when the request needs a task."""

    __slots__ = ()


NEEDS_TASK: Final = NeedsTask()


def respond_now(
    connection: Connection,
    request: InboundRequest,
    answer: Callable[[T, InboundRequest], Any],
    arg: T,
) -> rpc.Message | NeedsTask | None:
    """The answer to ``request`` that ``answer(arg, request)`` gives at once (it never
    blocks): the connection's response to its result or to the :exc:`McpError` it raised
    (an internal error for anything else, logged), ``None`` when there is nothing to send
    (the request was cancelled), or :data:`NEEDS_TASK` when it returns
    :data:`LATER` (the request needs a task of its own; it is still in flight)."""
    try:
        result = answer(arg, request)
        if result is LATER:
            return NEEDS_TASK
        return connection.respond(request, result)
    except McpError as exc:
        return connection.respond_error(request, exc)
    except Exception:
        log.exception("handler for %s (id %r) failed", request.method, request.id)
        return connection.respond_error(
            request, McpError("Internal error", code=ErrorCode.INTERNAL_ERROR)
        )


async def _no_requests(session: Link, request: InboundRequest) -> Any:
    raise McpError(f"Method not found: {request.method}", code=ErrorCode.METHOD_NOT_FOUND)


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


class Inbound(Generic[S]):
    """Answers a session's inbound requests.

    Args:
        session: passed to the handlers; sends the answers (through the
            :class:`~._link.Link` it is).
        handler: answers each request in a task of its own.
        immediate: answers requests that need no task, if it can.
        admission: the handler slots (perhaps shared with other sessions).
        max_concurrent_requests: also the most answers the receive loop leaves to tasks
            to send.
    """

    __slots__ = ("_admission", "_handler", "_immediate", "_reply_slots", "_session", "scopes")

    def __init__(
        self,
        session: S,
        handler: Callable[[S, InboundRequest], Awaitable[Any]] | None,
        immediate: Callable[[S, InboundRequest], Any] | None,
        admission: Admission,
        max_concurrent_requests: int,
    ) -> None:
        self._session = session
        self._handler: Callable[[S, InboundRequest], Awaitable[Any]] = handler or _no_requests
        self._immediate = immediate
        self._admission = admission
        self._reply_slots = trio.Semaphore(max_concurrent_requests)
        #: The cancel scope of each running handler, by request id.
        self.scopes: dict[Any, trio.CancelScope] = {}

    async def admit(self, request: InboundRequest, handlers: trio.Nursery | None) -> None:
        """Answer ``request``: at once if the immediate handler can; else by the handler,
        in a task started in ``handlers``, or without ``handlers`` in this task (blocking
        until its answer is sent); or, with every slot taken and the backlog full, with
        "Server busy". With ``handlers`` (the receive loop), nothing here waits for the
        peer to read."""
        if self._immediate is not None:
            answer = self._immediate_answer(request)
            if not isinstance(answer, NeedsTask):
                if answer is not None:
                    await self._answer(request, answer, handlers)
                return
        admission = self._admission
        try:
            admission.slots.acquire_nowait()  # the handler checkpoints; no need to yield first
            admitted = True
        except trio.WouldBlock:
            if admission.waiting >= admission.backlog:
                busy = McpError("Server busy: too many requests in flight")
                refusal = self._session.connection.respond_error(request, busy)
                if refusal is not None:
                    await self._answer(request, refusal, handlers)
                return
            admission.waiting += 1
            admitted = False
        if handlers is None:
            await self._handle(request, admitted)
        else:
            handlers.start_soon(self._handle, request, admitted, name=_HANDLER_TASK)

    def cancel(self, request_id: Any, reason: str | None) -> None:
        """The peer cancelled a request: cancel its handler, if it runs."""
        scope = self.scopes.get(request_id)
        if scope is not None:
            log.debug("peer cancelled request %r: %s", request_id, reason)
            scope.cancel()

    async def _answer(
        self, request: InboundRequest, message: rpc.Message, handlers: trio.Nursery | None
    ) -> None:
        if handlers is not None:
            await self.reply(message, handlers, related=request.id)
        else:
            with suppress(ConnectionClosed):
                await self._send_answer(request, message)

    def _immediate_answer(self, request: InboundRequest) -> rpc.Message | NeedsTask | None:
        """The immediate handler's answer to ``request``: a message, None (nothing to
        send), or LATER (it needs a task of its own)."""
        assert self._immediate is not None
        session = self._session
        return respond_now(session.connection, request, self._immediate, session)

    async def _handle(self, request: InboundRequest, admitted: bool) -> None:
        session = self._session
        connection = session.connection
        slots = self._admission.slots
        waiting = not admitted
        try:
            with trio.CancelScope() as scope:
                self.scopes[request.id] = scope
                # A cancellation read before this task got to run (there was no scope to
                # cancel yet), or just as a slot was handed to it (too late to interrupt
                # the wait), means: do not start the handler at all.
                if waiting and not request.cancelled:
                    await slots.acquire()
                    waiting, admitted = False, True
                    self._admission.waiting -= 1
                if request.cancelled:
                    return
                try:
                    result = await self._handler(session, request)
                    message: rpc.Message | None = connection.respond(request, result)
                except McpError as exc:
                    message = connection.respond_error(request, exc)
                except Exception:
                    log.exception("handler for %s (id %r) failed", request.method, request.id)
                    message = connection.respond_error(
                        request, McpError("Internal error", code=ErrorCode.INTERNAL_ERROR)
                    )
                if message is not None:
                    await self._send_answer(request, message)
        except ConnectionClosed:
            pass
        finally:
            self.scopes.pop(request.id, None)
            if not request.finished:
                connection.abandon(request)
            if waiting:
                self._admission.waiting -= 1
            if admitted:
                slots.release()

    async def _send_answer(self, request: InboundRequest, message: rpc.Message) -> None:
        send = self._session.send_message
        try:
            await send(message, related=request.id)
        except TypeError:
            # The result held something JSON cannot carry (a set, an object): the
            # handler's bug, answered like any other handler failure.
            log.exception("answer to %s (id %r) is not JSON", request.method, request.id)
            internal = McpError("Internal error", code=ErrorCode.INTERNAL_ERROR)
            await send(rpc.ErrorResponse(request.id, internal.error), related=request.id)

    async def reply(
        self, message: rpc.Message, handlers: trio.Nursery, *, related: Any = None
    ) -> None:
        """Send an answer given without a handler task (a ping, an error for bad input, a
        plain-function tool's result) without holding up the receive loop: the peer may be
        blocked sending to us at this very moment (a lockstep transport, pings crossing), and
        would never read it. If the transport has room the answer leaves at once; otherwise a
        task sends it, and only a flood of more than ``max_concurrent_requests`` unsent
        answers makes the loop wait."""
        session = self._session
        try:
            session.stream.send_nowait(message, related=related)
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
            await send_quietly(session, message, related=related)
        else:
            handlers.start_soon(self._send_reply, message, related)

    async def _send_reply(self, message: rpc.Message, related: Any) -> None:
        try:
            await send_quietly(self._session, message, related=related)
        finally:
            self._reply_slots.release()
