"""One session of legacy Streamable HTTP (2025-03-26 to 2025-11-25): its engine and the
routing of what it sends.

A session keeps its protocol state (a :class:`~trio_mcp.protocol.Connection`:
the negotiated version, the client's capabilities and log level) for its
whole life, but runs its *engine* -- a :class:`~trio_mcp.session.Session`
over a routing stream, plus the task that forwards list changes -- only
while it has work: requests in flight, an open stream, requests of ours
awaiting the client. After ``engine_linger`` idle seconds the engine stops,
and an idle session costs a few kilobytes. Requests the protocol answers by
itself (``initialize``, ``ping``, ``logging/setLevel``) and notifications to
a dormant session need no engine at all.

The engine runs in the session manager's nursery (see :mod:`._session_manager`).

Routing
-------

What the engine sends is routed by the request it belongs to (``related``):
to the channel of the POST that carried that request, else to the
standalone ``GET`` stream; never to several streams. See :mod:`._resumable_streams`
for resumption.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final, Literal

import trio

from ... import _jsonrpc as rpc
from ..._errors import ErrorCode, McpError
from ..._protocol._connection import Connection
from ..._protocol._events import Dispatch, NotificationReceived, Reply
from ..._server._dispatch import Dispatcher, answer_plain_call, calls_rate_limited, plain_call
from ..._server._internals import ServerInternals
from ..._session._engine import Session, connect_session
from ..._session._inbound import NeedsTask, respond_now
from ..._transports._stream import MessageStream, Received
from ..._types._base import RequestId
from . import _store_outage as store_outage
from ._exchange import Header, retry_status
from ._resumable_streams import Channel

if TYPE_CHECKING:
    from ..._server._context import Context
    from ._session_manager import SessionManager

__all__ = ["LegacySession", "SessionClosed", "close_sse_stream"]

log = logging.getLogger("trio_mcp.http")

#: Seconds that ending a session (``DELETE``, idle expiry, shutdown) may spend discarding
#: its events: an event store that does not answer cannot hold the end (which is shielded
#: from cancellation) any longer. At shutdown every session shares one such deadline.
SESSION_END_TIMEOUT: Final = 5.0
#: Requests the protocol connection answers by itself, with no handler.
SELF_ANSWERED: Final = frozenset({"initialize", "ping", "logging/setLevel"})


class SessionClosed(Exception):
    """The session ended while a message was being delivered."""


class _SessionStream(MessageStream):
    """The engine's message stream: receives what POSTs deliver, routes what it sends."""

    __slots__ = ("inbound", "session")

    def __init__(self, session: LegacySession) -> None:
        self.session = session
        self.inbound: trio.MemoryReceiveChannel[Received] | None = None

    async def send(self, message: rpc.Message, *, related: RequestId | None = None) -> None:
        if self.session.closed:
            await trio.lowlevel.checkpoint()
            raise trio.BrokenResourceError("the session ended")
        await self.session.send_answer(message, related)

    async def receive(self) -> Received:
        inbound = self.inbound
        if inbound is None:
            await trio.lowlevel.checkpoint()
            raise trio.EndOfChannel
        message = await inbound.receive()
        # The engine's receive loop hands it to the connection before its next checkpoint.
        self.session.taken += 1
        return message

    async def aclose(self) -> None:
        if self.inbound is not None:
            self.inbound.close()
        await trio.lowlevel.checkpoint()


class LegacySession:
    """One MCP session of legacy Streamable HTTP (see the module notes)."""

    __slots__ = (
        "__weakref__",  # (tests check that ended sessions are freed)
        "_engine_done",
        "_engine_scope",
        "_inbound",
        "busy",
        "channels",
        "closed",
        "connection",
        "delivered",
        "id",
        "last_seen",
        "manager",
        "principal",
        "routes",
        "standalone",
        "stream",
        "subscribed_uris",
        "taken",
    )

    def __init__(
        self,
        manager: SessionManager,
        session_id: str,
        connection: Connection,
        *,
        principal: str | None = None,
    ) -> None:
        self.manager = manager
        self.id = session_id
        self.connection = connection
        #: Who initialized the session (the app's ``principal`` hook): only they may use it.
        self.principal = principal
        #: ``resources/subscribe`` URIs: kept across engine runs.
        self.subscribed_uris: set[str] = set()
        self.stream = _SessionStream(self)
        #: request id -> the channel that carries its answer
        self.routes: dict[RequestId, Channel] = {}
        #: stream id -> channel, for every channel that is still carrying something (or
        #: carried nothing yet) and that a client may resume; a finished one whose client
        #: left is forgotten, and its events are resumed from the store alone
        self.channels: dict[str, Channel] = {}
        self.standalone: Channel | None = None
        #: HTTP requests in flight and streams attached: while non-zero the session is
        #: neither idle nor dormant.
        self.busy = 0
        self.last_seen = trio.current_time()
        self.closed = False
        self._inbound: trio.MemorySendChannel[Received] | None = None
        self._engine_done: trio.Event | None = None
        self._engine_scope: trio.CancelScope | None = None
        #: Messages handed to the engine, and taken by its receive loop (which hands each
        #: to the connection before it yields): while they differ, something sent earlier
        #: is still on its way to the connection.
        self.delivered = 0
        self.taken = 0

    def __repr__(self) -> str:
        state = "running" if self._inbound is not None else "dormant"
        return f"<LegacySession {self.id[:8]}... {state}, busy={self.busy}>"

    @property
    def running(self) -> bool:
        """Whether the engine runs (or is finishing)."""
        return self._engine_done is not None

    @property
    def resumable(self) -> bool:
        return self.manager.store is not None

    # -- delivering what the client sent ----------------------------------------------------

    async def deliver(self, message: Received) -> None:
        """Hand one message from the client to the session.

        Blocks while the engine's inbound queue is full (backpressure on the client).

        Raises:
            SessionClosed: the session ended.
        """
        if isinstance(message, rpc.JsonRpcRequest) and message.method in SELF_ANSWERED:
            event = self.connection.receive(message)
            if type(event) is Reply:
                await self.route(event.message, message.id)
            else:
                await trio.lowlevel.checkpoint()
            return
        if isinstance(message, rpc.JsonRpcRequest) and await self._answer_now(message):
            return
        if (
            isinstance(message, rpc.JsonRpcNotification)
            and message.method == "notifications/cancelled"
        ):
            await self._cancelled((message.params or {}).get("requestId"))
        if self._inbound is None and not isinstance(message, rpc.JsonRpcRequest):
            # Dormant: no handler runs and none of our requests waits for an answer, so the
            # connection alone deals with it.
            event = self.connection.receive(message)  # type: ignore[arg-type]
            if type(event) is NotificationReceived:
                await self._notify(event)
            elif type(event) is Reply:
                await self.route(event.message, None)
            else:
                await trio.lowlevel.checkpoint()
            return
        inbound = await self._engine_inbound()
        # Counted before the send: the send hands the message over and then yields, and
        # until the engine takes it, no plain call may overtake it (see answer_now).
        self.delivered += 1
        try:
            await inbound.send(message)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self.delivered -= 1
            raise SessionClosed from None
        except BaseException:  # (cancelled before it was sent)
            self.delivered -= 1
            raise

    @property
    def caught_up(self) -> bool:
        """Whether everything delivered to the engine has reached the connection (then a
        request answered now is seen in the order it came)."""
        return self.delivered == self.taken

    def answer_now(
        self, message: rpc.JsonRpcRequest
    ) -> tuple[rpc.Message, bytes] | Literal[False] | None:
        """Answer a call of a plain-function tool now, in the calling task (the POST's),
        without the engine: what the engine's receive loop would do with it (see
        :meth:`Dispatcher.immediate <trio_mcp._server._dispatch.Dispatcher.immediate>`), with
        no task, no channel hop, and no engine started for it. Only when :attr:`caught_up`,
        so that the connection sees the session's messages in order.

        Returns the answer and its JSON; ``None`` if the message was taken and nothing is
        to be sent; ``False`` if it was not taken (it is left untouched, for the engine).
        Never blocks."""
        manager = self.manager
        if self.closed or not self.caught_up:
            return False  # (delivering raises SessionClosed, or queues it behind the rest)
        if calls_rate_limited(manager.server, manager.rate_limiter):
            return False  # (the engine's dispatcher takes from the caller's bucket)
        spec = plain_call(ServerInternals(manager.server).tools, message.method, message.params)
        if spec is None:
            return False
        connection = self.connection
        event = connection.receive(message)
        if type(event) is Reply:  # refused by the protocol (bad params, say)
            answer: rpc.Message | None = event.message
        elif type(event) is Dispatch:
            result = respond_now(connection, event.request, answer_plain_call, spec)
            if isinstance(result, NeedsTask):
                # It needs the long way after all (it may ask the client for input): the
                # engine takes the message afresh (the connection counts it twice).
                connection.abandon(event.request)
                return False
            answer = result
        else:  # dropped: the engine would send nothing either
            return None
        if answer is None:
            return None
        try:
            return answer, rpc.dumps(answer)
        except TypeError:
            # The result held something JSON cannot carry: the tool's bug, answered as the
            # engine answers it.
            log.exception("answer to %s (id %r) is not JSON", message.method, message.id)
            internal = McpError("Internal error", code=ErrorCode.INTERNAL_ERROR)
            answer = rpc.ErrorResponse(message.id, internal.error)
            return answer, rpc.dumps(answer)

    async def _answer_now(self, message: rpc.JsonRpcRequest) -> bool:
        """:meth:`answer_now`, the answer routed as the engine's would be. Returns whether
        the message was taken. Blocks while the answer is written."""
        taken = self.answer_now(message)
        if taken is False:
            return False
        if taken is None:
            await trio.lowlevel.checkpoint()
        else:
            await self.send_answer(taken[0], message.id)
        return True

    def _dispatcher(self) -> Dispatcher:
        """The handlers of this session's requests, for one run of the engine."""
        manager = self.manager
        dispatcher = Dispatcher(
            manager.server,
            principal=self.principal,
            rate_limiter=manager.rate_limiter,
            caller=manager.callers.get(self.id),
        )
        dispatcher.subscribed_uris = self.subscribed_uris
        # The app's tasks (2025-11-25's core tasks), which outlive the session.
        dispatcher.tasks = manager.tasks
        return dispatcher

    async def send_answer(self, message: rpc.Message, related: RequestId | None) -> None:
        """Route ``message``, sent by the server in this session (see :meth:`route`); an
        error that says to come back later answers 503 or 429 with ``Retry-After``."""
        if type(message) is rpc.ErrorResponse:
            refused = retry_status(message.error)
            if refused is not None:  # busy, a quota, a store away: 503/429 + Retry-After
                await self.route(message, related, status=refused[0], headers=refused[1])
                return
        await self.route(message, related)

    async def _cancelled(self, request_id: object) -> None:
        """The client cancelled ``request_id``: no answer will come for it, so a channel
        left with nothing pending ends its response now (rather than at session end)."""
        if not isinstance(request_id, (str, int)):
            return
        channel = self.routes.pop(request_id, None)
        if channel is None:
            return
        channel.pending.discard(request_id)
        if not channel.pending:
            await channel.abandon()
            await self._forget(channel)

    async def _notify(self, event: NotificationReceived) -> None:
        # A client's notifications are few (roots changed, initialized): the view is made
        # for each.
        callback = ServerInternals(self.manager.server).notification_callbacks.get(event.method)
        if callback is None:
            await trio.lowlevel.checkpoint()
            return
        try:
            await callback(event.params)
        except Exception:
            log.exception("notification handler for %s failed", event.method)

    # -- the engine -------------------------------------------------------------------------

    async def ensure_running(self) -> None:
        """Start the engine if it is not running (an open stream needs it)."""
        await self._engine_inbound()
        await trio.lowlevel.checkpoint()

    async def _engine_inbound(self) -> trio.MemorySendChannel[Received]:
        """The engine's inbound channel, once it runs. Not a checkpoint when it runs already:
        the caller sends on the channel next, and that is one (a trip through the scheduler
        fewer per message)."""
        while self._inbound is None:
            if self.closed:
                raise SessionClosed
            done = self._engine_done
            if done is not None:
                await done.wait()  # the previous run is finishing
                continue
            self._start_engine()
        return self._inbound

    def _start_engine(self) -> None:
        manager = self.manager
        send, receive = trio.open_memory_channel[Received](manager.inbound_buffer)
        self._inbound = send
        self.stream.inbound = receive
        self._engine_done = trio.Event()
        self._engine_scope = trio.CancelScope()
        manager.nursery.start_soon(self._engine, send, self._engine_scope, self._engine_done)

    async def _engine(
        self,
        inbound: trio.MemorySendChannel[Received],
        scope: trio.CancelScope,
        done: trio.Event,
    ) -> None:
        manager = self.manager
        try:
            with scope:
                dispatcher = self._dispatcher()
                changes = trio.CancelScope()
                async with trio.open_nursery() as nursery:
                    session = await connect_session(
                        nursery,
                        self.stream,
                        self.connection,
                        handler=dispatcher.handle,
                        immediate=dispatcher.immediate,
                        notification_handler=dispatcher.on_notification,
                        on_input_ended=changes.cancel,
                        **manager.session_options,
                    )
                    nursery.start_soon(_forward_changes, dispatcher, session, changes)
                    await self._until_idle(inbound)
                    await session.wait_finished()
                    changes.cancel()
        except Exception:
            # A bug in one session must not take the others (and the app) down with it.
            log.exception("session %s failed; ending it", self.id)
            await self.end()  # shielded, and bounded by SESSION_END_TIMEOUT
        finally:
            inbound.close()
            if self._inbound is inbound:
                self._inbound = None
            self.stream.inbound = None
            self._engine_done = None
            self._engine_scope = None
            done.set()

    async def _until_idle(self, inbound: trio.MemorySendChannel[Received]) -> None:
        """Return once the session has had nothing to do for ``engine_linger`` seconds; no
        message can arrive for the engine after that."""
        linger = self.manager.engine_linger
        connection = self.connection
        while True:
            await trio.sleep(linger)
            if (
                self.busy == 0
                and connection.in_flight == 0
                and connection.outstanding == 0
                and trio.current_time() - self.last_seen >= linger
            ):
                self._inbound = None
                inbound.close()  # the engine's session sees the end of its input and ends
                return

    # -- routing what the engine sends ------------------------------------------------------

    async def route(
        self,
        message: rpc.Message,
        related: RequestId | None,
        *,
        status: int = 200,
        headers: Sequence[Header] = (),
    ) -> None:
        """Send one message to the channel it belongs to (see the module notes); an answer
        that goes out alone as JSON has ``status`` and ``headers``."""
        answer = isinstance(message, (rpc.ResultResponse, rpc.ErrorResponse))
        if answer and related is None:
            related = message.id  # type: ignore[union-attr]
        channel = self.routes.get(related) if related is not None else None
        if channel is not None and not answer:
            writer = channel.writer
            if writer is not None and writer.state == "new" and not writer.sse_ok:
                channel = None  # a JSON-only response cannot carry it; try the standalone
        last = False
        if channel is None:
            channel = self.standalone
            if channel is None or (answer and related is not None):
                # No stream for it: the client never opened the standalone stream (so it
                # could not resume it either), or an answer to a request we do not know.
                log.debug("dropped %s: no stream carries it", type(message).__name__)
                await trio.lowlevel.checkpoint()
                return
        elif answer:
            del self.routes[related]  # type: ignore[arg-type]
            channel.pending.discard(related)
            last = not channel.pending
        delivered = await channel.emit(
            rpc.dumps(message), answer=answer, last=last, status=status, headers=headers
        )
        if last and (delivered or channel.store is None):
            await self._forget(channel)
        elif last:
            # Its client is gone: the events wait in the store for a resumption, and the
            # store's bounds alone decide how long (no channel is kept for them).
            self.channels.pop(channel.stream_id, None)

    def _standalone(self) -> Channel:
        channel = self.standalone
        if channel is None:
            channel = self.standalone = Channel(
                set(), self.manager.store, self.channels, session=self.id
            )
        return channel

    async def _forget(self, channel: Channel) -> None:
        if not channel.has_events:
            return  # (the caller checkpointed)
        if self.channels.pop(channel.stream_id, None) is not None and channel.store is not None:
            await store_outage.discard(channel.store, channel.stream_id)
        else:
            await trio.lowlevel.checkpoint()

    def open_channel(self, request_ids: list[RequestId]) -> Channel | None:
        """A channel for the answers to ``request_ids``; ``None`` if one of them is already
        in flight in this session."""
        if any(id in self.routes for id in request_ids):
            return None
        channel = Channel(set(request_ids), self.manager.store, self.channels, session=self.id)
        for id in request_ids:
            self.routes[id] = channel
        return channel

    async def close_request_stream(self, request_id: RequestId) -> bool:
        """End the response carrying ``request_id``'s messages early (see
        :func:`~trio_mcp.http.close_sse_stream`)."""
        channel = self.routes.get(request_id)
        if channel is None:
            await trio.lowlevel.checkpoint()
            return False
        return await channel.close_early()

    # -- ending -----------------------------------------------------------------------------

    def touch(self) -> None:
        self.last_seen = trio.current_time()

    async def end(self, *, deadline: float | None = None) -> None:
        """End the session: cancel its engine, let go of its responses, discard its events,
        and remove it from the manager. Idempotent.

        The responses let go are completed by their own exchanges' tasks (a POST still
        unanswered gets ``404``, a stream its end), never here: the engine hands its
        writes over to those tasks (see :meth:`ResponseWriter.carry`), so
        cancelling it cuts no write under way, and a client that does not read holds
        only its own exchange.

        Blocks, shielded from cancellation, while the events are discarded, until
        ``deadline`` (Trio time) at the latest: by default :data:`SESSION_END_TIMEOUT`
        seconds from now."""
        if self.closed:
            await trio.lowlevel.checkpoint()
            return
        self.closed = True
        self.manager.forget(self.id)
        if self._engine_scope is not None:
            self._engine_scope.cancel()
        if self._inbound is not None:
            self._inbound.close()
            self._inbound = None
        channels = {*self.channels.values(), *self.routes.values()}
        if self.standalone is not None:
            channels.add(self.standalone)
        self.routes.clear()
        self.channels.clear()
        self.standalone = None
        for channel in channels:
            channel.finished = True
            channel.let_go()  # (its exchange completes the response)
        store = self.manager.store
        if deadline is None:
            deadline = trio.current_time() + SESSION_END_TIMEOUT
        with trio.move_on_at(deadline, shield=True) as bounded:
            if store is not None:
                await store_outage.discard_session(store, self.id)
            else:
                await trio.lowlevel.checkpoint()
        if bounded.cancelled_caught:
            log.warning(
                "session %s: discarding its events took too long (the event store is not "
                "answering); the rest was left to the store's bounds",
                self.id[:6],
            )
        self.connection.close()


async def _forward_changes(
    dispatcher: Dispatcher, session: Session, scope: trio.CancelScope
) -> None:
    with scope:
        await dispatcher.forward_changes(session)


async def close_sse_stream(ctx: Context) -> bool:
    """End the SSE stream that carries ``ctx``'s request now (SEP-1699 polling).

    Legacy Streamable HTTP only, with an event store: the client reconnects
    with ``GET`` and ``Last-Event-ID`` after the ``retry`` delay, and gets what
    the handler sent meanwhile, its answer included. Use it for long
    operations, so that no connection stays open while nothing happens.

    Returns whether a stream was closed (``False`` over other transports, in
    the stateless era, or when the request's stream is already gone).
    """
    stream = ctx.session.stream
    if not isinstance(stream, _SessionStream):
        await trio.lowlevel.checkpoint()
        return False
    return await stream.session.close_request_stream(ctx.request.id)
