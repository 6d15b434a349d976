"""The legacy Streamable HTTP sessions (2025-03-26 to 2025-11-25) of one app, and the HTTP
requests that act on them.

Resource handling
-----------------

The :class:`SessionManager` lives in a nursery its owner opened (the ASGI
lifespan task, or :func:`~trio_mcp.http.open_asgi_app`); every session's
engine runs there (see :mod:`._session_engine`), so none outlives it.

A session ends on ``DELETE``, after ``idle_timeout`` seconds without HTTP
traffic, and at shutdown: its engine is cancelled, its waiting responses are
ended, its events are discarded and its entry is removed.
"""

from __future__ import annotations

import logging
import math
import re
import secrets
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, Final

import trio

from ... import _jsonrpc as rpc
from ..._errors import ErrorCode
from ..._fleet._caps import CapsUnavailable
from ..._protocol._events import Reply
from ..._transports._stream import Received
from ..._types._base import Error
from .._headers import LAST_EVENT_ID, MCP_SESSION_ID
from . import _store_outage as store_outage
from ._callers import CallerCaps
from ._event_store import EventStore
from ._exchange import (
    Header,
    HttpRequest,
    ResponseWriter,
    error_body,
    keep_alive,
    retry_status,
)
from ._resumable_streams import Channel, replay as replay_events
from ._session_engine import SELF_ANSWERED, SESSION_END_TIMEOUT, LegacySession, SessionClosed
from ._session_registry import SessionRecord, principal_key
from ._sse import priming_event

if TYPE_CHECKING:
    from ..._fleet._caps import FleetCaps
    from ..._fleet._sessions import FleetSessions
    from ..._server._rate_limit import RateLimiter
    from ..._server._server import Server
    from ..._server._tasks import TaskRunner

__all__ = ["SessionManager"]

log = logging.getLogger("trio_mcp.http")

#: The first revision whose clients expect priming events (SEP-1699).
PRIMING_SINCE: Final = "2025-11-25"
#: The longest ``Last-Event-ID`` looked up (ours are about 30 characters).
MAX_EVENT_ID_LENGTH: Final = 128
_EVENT_ID: Final = re.compile(rf"[\x21-\x7e]{{1,{MAX_EVENT_ID_LENGTH}}}")
_CANNOT_RESUME: Final = (
    "Gone: this stream cannot be resumed from that event (the id is unknown to this "
    "session, or the events after it are no longer stored); what it carried is lost, "
    "and the session goes on"
)
#: What a request still unanswered at the shutdown deadline is answered.
SHUTTING_DOWN: Final = "Service Unavailable: the server is shutting down"
#: Seconds a client answered :data:`SHUTTING_DOWN` is told to wait (another instance, or
#: this one restarted, may serve it then).
SHUTDOWN_RETRY_AFTER: Final = 5
#: The headers of a JSON answer :data:`SHUTTING_DOWN` (status 503): when to try again,
#: and that the connection closes with the server.
_SHUTDOWN_HEADERS: Final = (
    (b"retry-after", b"%d" % SHUTDOWN_RETRY_AFTER),
    (b"connection", b"close"),
)
#: Seconds a client refused a session is told to wait.
SESSIONS_RETRY_AFTER: Final = 5


class SessionManager:
    """Owns the legacy sessions of one app (see the module notes).

    Runs in ``nursery``: one task that expires idle sessions, each running
    session's engine, and after :meth:`begin_shutdown` with a deadline, one task
    that answers at that deadline what is still unanswered.
    """

    def __init__(
        self,
        server: Server,
        nursery: trio.Nursery,
        *,
        store: EventStore | None,
        max_sessions: int = 10_000,
        sessions_per_caller: CallerCaps | None = None,
        rate_limiter: RateLimiter | None = None,
        idle_timeout: float = 600.0,
        engine_linger: float = 2.0,
        retry_ms: int | None = 1000,
        inbound_buffer: int = 16,
        keepalive_interval: float = 15.0,
        session_options: dict[str, Any] | None = None,
    ) -> None:
        self.server = server
        self.nursery = nursery
        #: The app's task runner (set by the app while it runs tasks), for the sessions.
        self.tasks: TaskRunner | None = None
        self.store = store
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self.engine_linger = engine_linger
        self.retry_ms = retry_ms
        self.inbound_buffer = inbound_buffer
        self.keepalive_interval = keepalive_interval
        self.session_options = dict(session_options or {})
        self.sessions: dict[str, LegacySession] = {}
        #: The sessions each caller holds (shared with the HTTP+SSE transport).
        self.sessions_per_caller = (
            sessions_per_caller
            if sessions_per_caller is not None
            else CallerCaps("sessions", max_sessions)
        )
        #: The sessions each caller holds across the fleet (set by the app with ``state=``).
        self.fleet_caps: FleetCaps | None = None
        #: Sessions ended by this worker's shutdown, left in the fleet for takeover.
        self._left_for_takeover: set[str] = set()
        #: session id -> the caller that opened it
        self.callers: dict[str, str] = {}
        #: The tool-call buckets by caller, shared by every session.
        self.rate_limiter = rate_limiter
        #: Where a fleet records the sessions this worker holds (``None``: no fleet).
        self.fleet: FleetSessions | None = None
        #: When requests still awaiting answers on POSTs are answered (shutdown).
        self.shutdown_deadline = math.inf
        #: The wait of the task that answers them (started by begin_shutdown).
        self._deadline_scope: trio.CancelScope | None = None
        #: No new sessions (shutdown began).
        self.closing = False
        self._reaper_scope = trio.CancelScope()
        nursery.start_soon(self._reap)

    def statistics(self) -> dict[str, int]:
        """How many sessions exist, and how many run their engine."""
        return {
            "sessions": len(self.sessions),
            "running": sum(1 for s in self.sessions.values() if s.running),
        }

    async def _reap(self) -> None:
        with self._reaper_scope:
            period = max(0.05, min(self.idle_timeout / 4, 30.0))
            while True:
                await trio.sleep(period)
                if self.idle_timeout == math.inf:
                    continue
                await self._expire(trio.current_time())

    async def _expire(self, now: float) -> None:
        """End the sessions idle for longer than ``idle_timeout`` (a function of its own, so
        that no local of the reaper keeps an ended session alive while it sleeps)."""
        for session in list(self.sessions.values()):
            if session.busy == 0 and now - session.last_seen > self.idle_timeout:
                log.debug("session %s expired", session.id)
                if self.fleet is not None:
                    # First, so that another worker never finds it live but gone from here.
                    await self.fleet.ended(session.id)  # (logged, not raised)
                await session.end()

    def forget(self, session_id: str) -> None:
        """Remove an ended session (it gives its caller's count back)."""
        self.sessions.pop(session_id, None)
        if self.fleet is not None:
            self.fleet.forget(session_id)
        caller = self.callers.pop(session_id, None)
        if caller is not None:
            self.sessions_per_caller.give_back(caller)
            if self.fleet_caps is not None and session_id not in self._left_for_takeover:
                # (shielded and bounded: it runs even in a nursery being cancelled)
                self.nursery.start_soon(self.fleet_caps.give_back, caller, session_id)

    def begin_shutdown(self, deadline: float = math.inf) -> None:
        """Refuse new sessions and let go of the standalone streams (they would keep their
        connections open until the graceful deadline). POSTs whose requests are still
        unanswered at ``deadline`` (Trio time) are answered with an error."""
        self.closing = True
        if deadline < self.shutdown_deadline:
            self.shutdown_deadline = deadline
            if self._deadline_scope is None:
                # One task for the whole app, rather than a deadline on every POST.
                self._deadline_scope = trio.CancelScope(deadline=deadline)
                self.nursery.start_soon(self._answer_at_deadline, self._deadline_scope)
            else:
                self._deadline_scope.deadline = deadline

    async def _answer_at_deadline(self, scope: trio.CancelScope) -> None:
        """At the shutdown deadline, answer every request still unanswered with an error
        saying the server is shutting down (the last answer of a POST ends its response):
        503 with ``Retry-After`` as JSON, or the last event of an SSE stream."""
        with scope:
            await trio.sleep_forever()
        error = Error(code=ErrorCode.INTERNAL_ERROR, message=SHUTTING_DOWN)
        for session in list(self.sessions.values()):
            for request_id, channel in list(session.routes.items()):
                if session.routes.get(request_id) is channel:
                    await session.route(
                        rpc.ErrorResponse(request_id, error),
                        request_id,
                        status=503,
                        headers=_SHUTDOWN_HEADERS,
                    )
        for session in self.sessions.values():
            if session.standalone is not None:
                session.standalone.let_go()

    async def aclose(self) -> None:
        """End every session (shutdown).

        Blocks, shielded from cancellation, for at most :data:`SESSION_END_TIMEOUT`
        seconds in all: every session ends, and they share that deadline for completing
        their open responses and discarding their events."""
        self.closing = True
        self._reaper_scope.cancel()
        deadline = trio.current_time() + SESSION_END_TIMEOUT
        for session in list(self.sessions.values()):
            if not session.closed:  # (a DELETE may end one meanwhile)
                if self.fleet is not None:
                    # Its record stays in Redis for another worker to take over, and its
                    # slot in the fleet's caps with it (moved by the worker that does).
                    self._left_for_takeover.add(session.id)
                await session.end(deadline=deadline)

    # -- HTTP -------------------------------------------------------------------------------

    def new_session_id(self) -> str:
        """A cryptographically random session id of visible ASCII (URL-safe Base64)."""
        return secrets.token_urlsafe(24)

    def session_for(self, http: HttpRequest, principal: str | None = None) -> LegacySession | None:
        """The session the request names, if it exists and belongs to ``principal`` (the
        caller, as the app's ``principal`` hook names it). Another principal's session is
        ``None``, as if it did not exist, and the refusal is logged."""
        session_id = http.headers.get(MCP_SESSION_ID)
        if session_id is None:
            return None
        session = self.sessions.get(session_id.strip())
        if session is not None and session.principal != principal:
            log.warning(
                "refused session %s... of principal %r to principal %r (answered: not found)",
                session.id[:6],
                session.principal,
                principal,
            )
            return None
        return session

    async def initialize(
        self,
        http: HttpRequest,
        request: rpc.JsonRpcRequest,
        caller: str,
        *,
        principal: str | None = None,
    ) -> None:
        """Answer a session-less ``initialize`` from ``caller``: create the session, bound
        to ``principal``."""
        if self.closing or len(self.sessions) >= self.max_sessions:
            await http.respond_error(
                503,
                ErrorCode.INVALID_REQUEST,
                "Service Unavailable: the server is not taking new sessions",
                id=request.id,
                headers=[(b"retry-after", b"%d" % SESSIONS_RETRY_AFTER)],
            )
            return
        caps = self.sessions_per_caller
        if not caps.take(caller):
            await http.respond_error(
                429,
                ErrorCode.INVALID_REQUEST,
                caps.refusal(),
                id=request.id,
                headers=[(b"retry-after", b"%d" % SESSIONS_RETRY_AFTER)],
            )
            return
        connection = self.server.connection()
        event = connection.receive(request)
        assert type(event) is Reply
        response = event.message
        if type(response) is not rpc.ResultResponse:
            caps.give_back(caller)
            await http.respond_message(response, 400)
            return
        session_id = self.new_session_id()
        if self.fleet_caps is not None and not await self._take_fleet_slot(
            http, request, caller, session_id
        ):
            caps.give_back(caller)
            return
        self.callers[session_id] = caller
        session = LegacySession(self, session_id, connection, principal=principal)
        self.sessions[session_id] = session
        if self.fleet is not None and not await self._register(http, session, request):
            return
        header = [(b"mcp-session-id", session_id.encode("ascii"))]
        data = rpc.dumps(response)
        if http.accepts_json:
            await http.respond(200, data, headers=header)
        else:
            writer = ResponseWriter(http.send, json_ok=False, headers=header)
            await writer.event(data)
            await writer.close()

    async def _register(
        self, http: HttpRequest, session: LegacySession, request: rpc.JsonRpcRequest
    ) -> bool:
        """Record a new session in the fleet; if Redis does not answer, it ends and the
        client gets 503 (with ``Retry-After``): a session no other worker could find would
        break as soon as a request reached another worker."""
        fleet = self.fleet
        assert fleet is not None
        record = SessionRecord(
            session_id=session.id,
            protocol_version=session.connection.version or "",
            principal=principal_key(session.principal),
            owner=fleet.worker_id,
            initialize=dict(request.params or {}),
        )
        try:
            await fleet.created(record)
        except Exception as exc:  # noqa: BLE001 - refused with 503, the worker goes on
            log.warning("could not record a new session in Redis: %r", exc)
            await session.end()
            await http.respond_error(
                503,
                ErrorCode.INTERNAL_ERROR,
                "Service Unavailable: the fleet's shared state (Redis) does not answer; try again",
                id=request.id,
                headers=[(b"retry-after", b"%d" % SESSIONS_RETRY_AFTER)],
            )
            return False
        return True

    async def adopt(
        self, record: SessionRecord, caller: str, *, previous_owner: str
    ) -> LegacySession:
        """Hold a session of the fleet whose owner (``previous_owner``) is gone (this worker
        took its record over): its protocol state is rebuilt from the client's
        ``initialize`` params, as if the client had initialized here, and it counts among
        its caller's sessions here and, best effort, across the fleet (its slot there
        moves from the gone owner to this worker: see :meth:`FleetCaps.move`). What the
        dead worker held in memory (requests in flight, the log level, resource
        subscriptions) is lost; events in the shared store are not."""
        connection = self.server.connection()
        connection.receive(rpc.JsonRpcRequest(0, "initialize", dict(record.initialize)))
        connection.receive(rpc.JsonRpcNotification("notifications/initialized"))
        principal = record.principal or None  # (see principal_key)
        session = LegacySession(self, record.session_id, connection, principal=principal)
        self.sessions[record.session_id] = session
        if self.sessions_per_caller.take(caller):
            self.callers[record.session_id] = caller
        log.info("took over session %s... (its worker is gone)", record.session_id[:6])
        if self.fleet_caps is not None:
            try:
                # (its slot lapsed and the caller is at the cap: kept, uncounted)
                await self.fleet_caps.move(caller, record.session_id, previous_owner)
            except CapsUnavailable as exc:
                log.warning("could not count a session taken over: %r", exc)
        else:
            await trio.lowlevel.checkpoint()
        return session

    async def _take_fleet_slot(
        self, http: HttpRequest, request: rpc.JsonRpcRequest, caller: str, session_id: str
    ) -> bool:
        """Count ``session_id`` among ``caller``'s sessions across the fleet; else answer
        429 (at the cap) or 503 (Redis away), with ``Retry-After``, and return ``False``."""
        assert self.fleet_caps is not None
        try:
            if await self.fleet_caps.take(caller, session_id):
                return True
        except CapsUnavailable:
            await http.respond_error(
                503,
                ErrorCode.INTERNAL_ERROR,
                "Service Unavailable: the fleet's Redis does not answer; try again later",
                id=request.id,
                data={"retryAfter": SESSIONS_RETRY_AFTER, "reason": "unavailable"},
                headers=[(b"retry-after", b"%d" % SESSIONS_RETRY_AFTER)],
            )
            return False
        await http.respond_error(
            429,
            ErrorCode.INVALID_REQUEST,
            self.fleet_caps.refusal(),
            id=request.id,
            headers=[(b"retry-after", b"%d" % SESSIONS_RETRY_AFTER)],
        )
        return False

    async def post(
        self, http: HttpRequest, session: LegacySession, messages: list[Received]
    ) -> None:
        """Answer a POST of ``messages`` in ``session``. Blocks until the answers were sent,
        the client went away, or the session ended."""
        session.busy += 1
        session.touch()
        fleet = self.fleet
        if fleet is not None and fleet.due(session.id):
            await fleet.active(session.id)
        try:
            await self._post(http, session, messages)
        finally:
            session.busy -= 1
            session.touch()

    async def _post(
        self, http: HttpRequest, session: LegacySession, messages: list[Received]
    ) -> None:
        ids = [m.id for m in messages if type(m) is rpc.JsonRpcRequest]
        if not ids:
            try:
                for message in messages:
                    await session.deliver(message)
            except SessionClosed:
                await _session_gone(http)
            else:
                await http.respond(202)
            return
        if session.closed:
            await _session_gone(http)
            return
        if (
            len(messages) == 1
            and http.accepts_json
            and await self._answer_now(http, session, messages[0])
        ):
            return
        channel = session.open_channel(ids)
        if channel is None:
            await http.respond_error(
                400,
                ErrorCode.INVALID_REQUEST,
                "Invalid Request: a request with this id is already in flight",
                id=ids[0],
            )
            return
        # The session's engine writes the answers, but hands the writes over to this task
        # (an owned writer): a session that ends cancels its engine, never a write under
        # way, and this task completes the response (the session ended unanswered: 404).
        writer = ResponseWriter(
            http.send, json_ok=http.accepts_json, sse_ok=http.accepts_sse, owned=True
        )
        self._prime(session, channel, writer)
        channel.attach(writer)
        # Until the end of the exchange: the response completes (the channel finished,
        # closed early, or the session ended and let it go), or the client leaves. At the
        # shutdown deadline, what is still unanswered is answered with an error (see
        # _answer_at_deadline), which completes the response.
        carry = partial(writer.carry, http.wait_disconnect, unanswered=(404, _SESSION_ENDED))
        if len(messages) == 1:
            await _deliver(session, channel, messages)
            await carry()
        else:
            # A batch is delivered beside the writes: its self-answered requests (ping)
            # are written while the engine may wait, holding the channel, for this task
            # to take its writes.
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_deliver, session, channel, messages)
                await carry()
        # If the client left early, what follows waits in the store (legacy: no cancel).
        await channel.release(writer)

    async def _answer_now(
        self, http: HttpRequest, session: LegacySession, message: Received
    ) -> bool:
        """Answer a lone request that the session can answer now, in this task, as plain
        JSON (the client takes it): the answer the engine would give, with no channel, no
        writer to hand over to, and nothing in the event store (a JSON answer carries no
        event id, so no client could resume it). Returns whether it answered."""
        if (
            type(message) is not rpc.JsonRpcRequest
            or message.method in SELF_ANSWERED
            or message.id in session.routes  # (the long way refuses it)
        ):
            return False
        taken = session.answer_now(message)
        if taken is False:
            return False
        if taken is None:  # (the session ended meanwhile: nothing will answer it)
            await _session_gone(http)
            return True
        answer, data = taken
        status: int = 200
        headers: Sequence[Header] = ()
        if type(answer) is rpc.ErrorResponse:
            refused = retry_status(answer.error)
            if refused is not None:
                status, headers = refused
        await http.respond(status, data, headers=[(b"content-length", b"%d" % len(data)), *headers])
        return True

    def _prime(self, session: LegacySession, channel: Channel, writer: ResponseWriter) -> None:
        store = channel.store
        if store is None or (session.connection.version or "") < PRIMING_SINCE:
            return
        retry_ms = self.retry_ms

        async def priming() -> bytes:
            event_id = await store_outage.append(
                store, channel.stream_id, b"", session=channel.session
            )
            return priming_event(event_id, retry_ms) if event_id is not None else b""

        writer.preamble = priming

    async def get(self, http: HttpRequest, session: LegacySession) -> None:
        """A GET: the standalone stream, or the resumption of a stream (``Last-Event-ID``).
        Blocks while the stream is open."""
        if not http.accepts_sse:
            await http.respond_error(
                406, ErrorCode.INVALID_REQUEST, "Not Acceptable: accept text/event-stream"
            )
            return
        session.busy += 1
        session.touch()
        fleet = self.fleet
        if fleet is not None and fleet.due(session.id):
            await fleet.active(session.id)
        try:
            last_event_id = http.headers.get(LAST_EVENT_ID)
            if last_event_id is not None and session.resumable:
                await self._resume(http, session, last_event_id.strip(" \t"))
            else:
                await self._standalone(http, session)
        finally:
            session.busy -= 1
            session.touch()

    async def _resume(self, http: HttpRequest, session: LegacySession, last_event_id: str) -> None:
        """Resume a stream of ``session`` after ``last_event_id``: 400 for a malformed id,
        410 for one no stream of this session can be resumed from (never issued, another
        session's, replayed to its end, or evicted from the store), never 404 (which
        would tell the client that its session ended)."""
        store = self.store
        assert store is not None
        if _EVENT_ID.fullmatch(last_event_id) is None:
            await http.respond_error(
                400,
                ErrorCode.INVALID_REQUEST,
                "Bad Request: Last-Event-ID must be 1 to "
                f"{MAX_EVENT_ID_LENGTH} visible ASCII characters",
            )
            return
        try:
            replay = await store_outage.replay_after(store, last_event_id)
        except store_outage.StoreUnavailable:
            await http.respond_error(
                503,
                ErrorCode.INTERNAL_ERROR,
                "Service Unavailable: the event store does not answer; try again",
                headers=[(b"retry-after", b"%d" % store_outage.STORE_RETRY_AFTER)],
            )
            return
        if replay is None or replay.session != session.id:
            await http.respond_error(
                410, ErrorCode.INVALID_REQUEST, _CANNOT_RESUME, data={"lastEventId": last_event_id}
            )
            return
        writer = ResponseWriter(http.send, json_ok=False, owned=True)
        channel = session.channels.get(replay.stream_id)
        if channel is None:
            # It finished while no client carried it: the store has the rest, to the end.
            await replay_events(writer, replay.events)
            await writer.close()
            await store_outage.discard(store, replay.stream_id)
            return
        if await channel.resume(writer, replay.events) is None:
            await session._forget(channel)  # (the replay was all of it)
            return
        await self._carry(http, channel, writer)

    async def _standalone(self, http: HttpRequest, session: LegacySession) -> None:
        channel = session._standalone()
        if channel.writer is not None:
            await http.respond_error(
                409,
                ErrorCode.INVALID_REQUEST,
                "Conflict: this session already has a standalone stream",
            )
            return
        if self.closing:
            await http.respond_error(
                503, ErrorCode.INVALID_REQUEST, "Service Unavailable: shutting down"
            )
            return
        await session.ensure_running()
        writer = ResponseWriter(http.send, json_ok=False, owned=True)
        self._prime(session, channel, writer)
        # Opened before it is attached, so that nothing is handed over meanwhile (the
        # engine would wait for this task, holding the writer, while it opens).
        await writer.open_sse()
        if session.closed or channel.writer is not None:
            await writer.close()  # it ended, or another stream took it, meanwhile
            return
        channel.attach(writer)
        await self._carry(http, channel, writer)

    async def _carry(self, http: HttpRequest, channel: Channel, writer: ResponseWriter) -> None:
        """Carry ``channel``'s events on ``writer`` (owned by this task), with keep-alive
        comments, until the channel lets it go (then the stream ends) or the client
        leaves (then the channel lets it go)."""
        async with trio.open_nursery() as nursery:
            nursery.start_soon(keep_alive, writer, self.keepalive_interval)
            await writer.carry(http.wait_disconnect)
            nursery.cancel_scope.cancel()
        if channel.writer is writer:
            channel.let_go()
        await channel.release(writer)

    async def delete(self, http: HttpRequest, session: LegacySession) -> None:
        """End ``session`` at the client's request (in a fleet: on every worker)."""
        if self.fleet is not None:
            # First, so that another worker never finds it live but gone from here.
            await self.fleet.ended(session.id)  # (logged, not raised)
        await session.end()
        await http.respond(200)


async def _deliver(session: LegacySession, channel: Channel, messages: list[Received]) -> None:
    """Deliver a POST's ``messages`` to ``session``; if it ended, let the POST's response
    go (its exchange answers 404)."""
    try:
        for message in messages:
            await session.deliver(message)
    except SessionClosed:
        channel.let_go()


_SESSION_ENDED: Final = error_body(None, ErrorCode.INVALID_REQUEST, "Session not found (it ended)")


async def _session_gone(http: HttpRequest) -> None:
    await http.respond_error(404, ErrorCode.INVALID_REQUEST, "Session not found (it ended)")
