"""The HTTP+SSE transport of protocol version 2024-11-05 (deprecated, for old clients).

A client opens ``GET /sse``; the first event, ``endpoint``, names the URL to
POST its messages to (``/messages?session_id=...``, under the ASGI ``root_path``
when the app is mounted at a prefix). Every POST is answered
``202 Accepted``; everything the server sends travels on the SSE stream.

Resource handling: the session runs in the task serving the ``GET``, for as
long as the stream is open; the client disconnecting ends it (its running
requests are cancelled), and so does shutdown (it drains first).

In a fleet (``state=``), the worker serving the stream records the session, and a POST
that lands on another worker is forwarded to it (see :mod:`._sse_2024_fleet`).
"""

from __future__ import annotations

import logging
import math
import secrets
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote

import attrs
import trio

from ... import _jsonrpc as rpc
from ..._errors import ErrorCode
from ..._transports._stream import MessageStream, Received
from ..._types._base import Error, RequestId
from . import _lazy
from ._callers import CallerCaps, caller_of
from ._exchange import HttpRequest, ResponseWriter, Scope, cancel_on_disconnect, keep_alive
from ._session_manager import SHUTTING_DOWN
from ._sse import endpoint_event

if TYPE_CHECKING:
    from ..._fleet._caps import FleetCaps
    from ..._fleet._fleet import Fleet
    from ..._server._server import Server
    from ..._session._engine import Session
    from ._sse_2024_fleet import Reply, SseFleet

__all__ = ["SseTransport"]

log = logging.getLogger("trio_mcp.http")


class _SseStream(MessageStream):
    """One 2024-11-05 session: messages POSTed in, the SSE stream out.

    When the client closes the stream (or the session's stream ends otherwise), the
    messages already accepted (answered ``202``) are still received, then
    :exc:`trio.EndOfChannel`; sending raises :exc:`trio.BrokenResourceError`. Only using it
    after :meth:`aclose` raises :exc:`trio.ClosedResourceError`.

    Sending hands the message to the session's writer task (see :func:`_write_events`),
    waiting while it writes the one before (the client reads slowly): a cancelled send
    has sent nothing, never part of an event."""

    __slots__ = ("_closed", "_events", "_inbound", "_writer")

    def __init__(
        self,
        writer: ResponseWriter,
        inbound: trio.MemoryReceiveChannel[Received],
        events: trio.MemorySendChannel[bytes],
    ) -> None:
        self._writer = writer
        self._inbound = inbound
        self._events = events
        self._closed = False

    async def send(self, message: rpc.Message, *, related: RequestId | None = None) -> None:
        if self._closed:
            await trio.lowlevel.checkpoint()
            raise trio.ClosedResourceError("this end of the session's stream was closed")
        if self._writer.state == "done":
            await trio.lowlevel.checkpoint()
            raise trio.BrokenResourceError("the SSE stream ended")
        try:
            await self._events.send(rpc.dumps(message))
        except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            raise trio.BrokenResourceError("the SSE stream ended") from exc

    async def receive(self) -> Received:
        return await self._inbound.receive()

    async def aclose(self) -> None:
        self._closed = True
        self._inbound.close()
        await trio.lowlevel.checkpoint()


@attrs.define(slots=True)
class _Held:
    """A session this worker holds: where POSTed messages go, the principal that opened
    it, its stream, and, in a fleet, where messages other workers forward to it wait (each
    with where to say that the session took it), and where those refused because that
    queue was full wait to be told so."""

    inbound: trio.MemorySendChannel[Received]
    principal: str | None
    stream: _SseStream
    forwarded: trio.MemorySendChannel[tuple[Received, Reply]] | None = None
    refused: trio.MemorySendChannel[Reply] | None = None


class SseTransport:
    """Serves 2024-11-05 HTTP+SSE sessions for a server.

    Args:
        server: the server.
        message_path: the path POSTs go to (the ``endpoint`` event names it).
        inbound_buffer: messages a session queues before a POST waits.
        max_sessions: the most sessions (open event streams) at once; beyond, a GET is
            refused with 503 and ``Retry-After``.
        sessions_per_caller: the sessions each caller holds (shared with legacy
            Streamable HTTP); at its cap, a GET is refused with 429 and ``Retry-After``.
        principal: names a request's caller (else its peer address counts).
        keepalive_interval: seconds between keep-alive comments.
        session_options: options for each :class:`~trio_mcp.session.Session`.
    """

    def __init__(
        self,
        server: Server,
        *,
        message_path: str,
        inbound_buffer: int = 16,
        max_sessions: int = 10_000,
        sessions_per_caller: CallerCaps | None = None,
        principal: Callable[[Scope], str | None] | None = None,
        keepalive_interval: float = 15.0,
        session_options: dict[str, Any] | None = None,
    ) -> None:
        self.server = server
        self.message_path = message_path
        self.inbound_buffer = inbound_buffer
        self.max_sessions = max_sessions
        self.sessions_per_caller = (
            sessions_per_caller
            if sessions_per_caller is not None
            else CallerCaps("sessions", max_sessions)
        )
        self.principal = principal
        self.keepalive_interval = keepalive_interval
        self.session_options = dict(session_options or {})
        #: session id -> the session this worker holds
        self.sessions: dict[str, _Held] = {}
        #: The fleet's part, while the app runs with ``state=`` (see :meth:`join`).
        self.fleet: SseFleet | None = None
        #: Messages forwarded by another worker refused because their session's queue of
        #: forwarded messages was full (each answered 503 by the worker it reached).
        self.forwards_refused = 0
        self.closing = False
        #: When requests still running are cut off and answered with an error (Trio time).
        self.shutdown_deadline = math.inf
        #: Each session's watch for that deadline.
        self._deadlines: dict[str, trio.CancelScope] = {}

    def join(self, fleet: Fleet | None, caps: FleetCaps | None) -> None:
        """Serve as one worker of ``fleet`` from now on, counting each caller's sessions
        across it with ``caps`` (``None``: alone again)."""
        self.fleet = (
            None
            if fleet is None or caps is None
            else _lazy.SseFleet(fleet, caps, self._deliver_forwarded)
        )

    def begin_shutdown(self, deadline: float = math.inf) -> None:
        """End every session's input: they drain their requests and end their streams.
        Requests still running at ``deadline`` (Trio time) are cancelled and answered with
        an error event saying the server is shutting down. Never blocks."""
        self.closing = True
        self.shutdown_deadline = min(self.shutdown_deadline, deadline)
        for held in self.sessions.values():
            held.inbound.close()
        for watch in self._deadlines.values():
            watch.deadline = min(watch.deadline, self.shutdown_deadline)

    async def get(self, http: HttpRequest, principal: str | None = None) -> None:
        """Serve one session of ``principal`` on this SSE stream. Blocks until it ends."""
        if not http.accepts_sse:
            await http.respond_error(
                406, ErrorCode.INVALID_REQUEST, "Not Acceptable: accept text/event-stream"
            )
            return
        if self.closing:
            await http.respond_error(
                503, ErrorCode.INVALID_REQUEST, "Service Unavailable: shutting down"
            )
            return
        if len(self.sessions) >= self.max_sessions:
            await http.respond_error(
                503,
                ErrorCode.INVALID_REQUEST,
                "Service Unavailable: the server is not taking new sessions",
                headers=[(b"retry-after", b"5")],
            )
            return
        caller = caller_of(http.scope, self.principal)
        caps = self.sessions_per_caller
        if not caps.take(caller):
            await http.respond_error(
                429, ErrorCode.INVALID_REQUEST, caps.refusal(), headers=[(b"retry-after", b"5")]
            )
            return
        try:
            await self._serve_session(http, principal, caller)
        finally:
            caps.give_back(caller)

    async def _serve_session(self, http: HttpRequest, principal: str | None, caller: str) -> None:
        session_id = secrets.token_urlsafe(24)
        fleet = self.fleet
        if fleet is not None:
            try:
                held = await fleet.hold(session_id, principal, caller)
            except _lazy.SseFleetUnavailable:
                await http.respond_error(
                    503,
                    ErrorCode.INTERNAL_ERROR,
                    "Service Unavailable: the fleet's Redis does not answer; try again later",
                    data={"retryAfter": 5, "reason": "unavailable"},
                    headers=[(b"retry-after", b"5")],
                )
                return
            if not held:
                await http.respond_error(
                    429,
                    ErrorCode.INVALID_REQUEST,
                    fleet.caps.refusal(),
                    headers=[(b"retry-after", b"5")],
                )
                return
        try:
            await self._serve_held(http, session_id, principal, fleet)
        finally:
            if fleet is not None:
                await fleet.release(session_id, caller)

    async def _serve_held(
        self, http: HttpRequest, session_id: str, principal: str | None, fleet: SseFleet | None
    ) -> None:
        send, receive = trio.open_memory_channel[Received](self.inbound_buffer)
        writer = ResponseWriter(http.send, json_ok=False)
        # The path the client reaches this app's message endpoint by: under the prefix the
        # app is mounted at (``root_path``), percent-encoded again (ASGI paths are decoded).
        where = quote((http.scope.get("root_path") or "").rstrip("/") + self.message_path)
        events, to_write = trio.open_memory_channel[bytes](0)
        stream = _SseStream(writer, receive, events)
        held = self.sessions[session_id] = _Held(send, principal, stream)
        watch = self._deadlines[session_id] = trio.CancelScope(deadline=self.shutdown_deadline)
        serving = trio.CancelScope()
        cut_off: list[RequestId] = []
        try:
            await writer.open_sse()
            await writer.raw(endpoint_event(f"{where}?session_id={session_id}"))
            async with trio.open_nursery() as nursery:
                nursery.start_soon(cancel_on_disconnect, http, nursery.cancel_scope, writer)
                nursery.start_soon(keep_alive, writer, self.keepalive_interval)
                if fleet is not None:
                    nursery.start_soon(fleet.keep, session_id, principal)
                    self._forwarding(nursery, held, fleet)
                written = trio.Event()
                nursery.start_soon(_write_events, to_write, writer, written)
                with serving:
                    async with trio.open_nursery() as running:
                        session = await running.start(
                            partial(
                                self.server.serve,
                                stream,
                                principal=principal,
                                **self.session_options,
                            )
                        )
                        nursery.start_soon(_cut_off_at_deadline, watch, session, serving, cut_off)
                # Requests the deadline cut off: their handlers were cancelled and answered
                # nothing; the stream still carries one error each.
                error = Error(code=ErrorCode.INTERNAL_ERROR, message=SHUTTING_DOWN)
                for request_id in cut_off:  # (the session may have closed its end)
                    await events.send(rpc.dumps(rpc.ErrorResponse(request_id, error)))
                events.close()
                await written.wait()  # every message sent is written
                nursery.cancel_scope.cancel()
        finally:
            self.sessions.pop(session_id, None)
            self._deadlines.pop(session_id, None)
            # Ends the input: what was accepted is still received, then EndOfChannel
            # (a POST still waiting for room is refused with 404: never accepted).
            send.close()
            events.close()
            for channel in (held.forwarded, held.refused):
                if channel is not None:
                    channel.close()
        await writer.close()

    def _forwarding(self, nursery: trio.Nursery, held: _Held, fleet: SseFleet) -> None:
        """Give ``held`` its queues of forwarded messages and refused ones, and start the
        two tasks (in ``nursery``, the session's) that empty them: into the session (which
        may wait for it), each then acknowledged to the worker it reached, and the
        refusals, told to theirs."""
        # (Reply is the fleet module's, loaded only in a fleet: named, not imported.)
        held.forwarded, forwarded = trio.open_memory_channel[tuple[Received, "Reply"]](
            self.inbound_buffer
        )
        held.refused, refused = trio.open_memory_channel["Reply"](self.inbound_buffer)
        nursery.start_soon(_pass_on, forwarded, held.inbound, fleet)
        nursery.start_soon(_refuse, refused, fleet)

    async def post(self, http: HttpRequest, body: bytes, principal: str | None = None) -> None:
        """Deliver one POSTed message (or batch) of ``principal`` to its session: ``202
        Accepted`` once the session's queue took it (blocks while the queue is full);
        ``404`` for an unknown session or
        another principal's. In a fleet, a POST for a session another worker holds is
        forwarded to that worker, and answered once that worker's session took it
        (``503`` with ``Retry-After`` while Redis does not answer)."""
        query = parse_qs(http.scope.get("query_string", b"").decode("latin-1"))
        session_id = (query.get("session_id") or [""])[0]
        entry = self.sessions.get(session_id)
        if entry is not None and entry.principal != principal:
            log.warning(
                "refused HTTP+SSE session %s... of principal %r to principal %r "
                "(answered: not found)",
                session_id[:6],
                entry.principal,
                principal,
            )
            await http.respond_error(404, ErrorCode.INVALID_REQUEST, "Session not found")
            return
        if entry is None:
            if self.fleet is not None and session_id:
                await self.fleet.forward(http, session_id, principal, body)
                return
            await http.respond_error(404, ErrorCode.INVALID_REQUEST, "Session not found")
            return
        inbound = entry.inbound
        message = rpc.parse(body)
        if type(message) is rpc.InvalidMessage and message.reply is not None:
            await http.respond_message(message.reply, 400)
            return
        try:
            await inbound.send(message)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            await http.respond_error(404, ErrorCode.INVALID_REQUEST, "Session not found")
            return
        await http.respond(202, b"Accepted", content_type=b"text/plain")

    async def _deliver_forwarded(
        self, session_id: str, principal: str | None, message: Received, reply: Reply
    ) -> None:
        """Hand ``message``, forwarded by another worker, to the session it is for, as a
        POST here would, without waiting for the session: it joins the session's queue of
        forwarded messages (``inbound_buffer`` long), and the worker it came from is told
        once the session took it (see :func:`_pass_on`). A session whose queue is full
        (its client floods it) has it refused, logged and counted (that worker answers
        503); other sessions never wait for it. Blocks for one Redis round trip only to
        say that the session is not here (ended meanwhile)."""
        fleet = self.fleet
        held = self.sessions.get(session_id)
        if held is None or held.principal != principal or held.forwarded is None:
            # Ended meanwhile (or never here: the registry was out of date).
            if fleet is not None:
                fleet.unclaimed += 1
                await fleet.answer(reply, "gone")
            else:
                await trio.lowlevel.checkpoint()
            return
        try:
            held.forwarded.send_nowait((message, reply))
            await trio.lowlevel.checkpoint()
            return
        except trio.WouldBlock:
            pass
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            if fleet is not None:
                await fleet.answer(reply, "gone")  # the session is ending
            return
        self.forwards_refused += 1
        log.warning(
            "HTTP+SSE session %s... has %d forwarded messages waiting already: one refused",
            session_id[:6],
            self.inbound_buffer,
        )
        if held.refused is not None:
            try:
                held.refused.send_nowait(reply)
            except (trio.WouldBlock, trio.BrokenResourceError, trio.ClosedResourceError):
                pass  # as many refusals wait already: its worker's wait ends it (503)
        await trio.lowlevel.checkpoint()


async def _pass_on(
    forwarded: trio.MemoryReceiveChannel[tuple[Received, Reply]],
    inbound: trio.MemorySendChannel[Received],
    fleet: SseFleet,
) -> None:
    """Hand each forwarded message to the session, waiting while it is busy, in order, and
    then tell the worker it came from that the session took it (one Redis round trip:
    only then is that POST answered 202, so no later POST overtakes it). Returns when
    either side closes."""
    async for message, reply in forwarded:
        try:
            await inbound.send(message)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            await fleet.answer(reply, "gone")  # the session is ending
            return
        await fleet.answer(reply, "taken")


async def _refuse(refused: trio.MemoryReceiveChannel[Reply], fleet: SseFleet) -> None:
    """Tell the worker each refused message came from that its session was busy."""
    async for reply in refused:
        await fleet.answer(reply, "busy")


async def _write_events(
    events: trio.MemoryReceiveChannel[bytes], writer: ResponseWriter, written: trio.Event
) -> None:
    """Write each message sent on a session's stream as an SSE event, whole, in order;
    sets ``written`` once ``events`` is closed and emptied. Blocks while the client does
    not read; cancelled with the session (the client left: nothing more can reach it)."""
    with events:
        async for data in events:
            await writer.event(data)
    written.set()


async def _cut_off_at_deadline(
    watch: trio.CancelScope, session: Session, serving: trio.CancelScope, cut_off: list[RequestId]
) -> None:
    """At the shutdown deadline (``watch``'s), note the requests of ``session`` not yet
    answered and cancel its serving; the session's handlers then answer nothing, and the
    caller sends an error for each noted one. Cancelled otherwise when the session ends."""
    with watch:
        await trio.sleep_forever()
    if watch.cancelled_caught:
        # No checkpoint between the two: no handler can answer in between.
        cut_off.extend(session.connection.in_flight_ids())
        serving.cancel()
