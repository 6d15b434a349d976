"""The ASGI application: Streamable HTTP in both eras on one endpoint, plus the 2024-11-05
HTTP+SSE transport, for a :class:`~trio_mcp.Server`.

Resource handling
-----------------

Stateless (2026-07-28) requests need nothing beyond the task that serves
them. Legacy sessions live in a nursery: the ASGI *lifespan* task opens it at
startup and closes it at shutdown (Hypercorn's Trio worker runs the lifespan
on its own nursery), or, for servers without lifespan support, the block of
:func:`open_asgi_app`. Without either, legacy requests get ``503``.

Era per request
---------------

A POST is legacy when its ``MCP-Protocol-Version`` header is absent or names
a legacy revision *and* its ``_meta`` carries no protocol version; anything
else is stateless, even an ``initialize`` (which a stateless server does not
know: 404). ``GET`` and ``DELETE`` belong to legacy sessions; with a modern
version header they get ``405``.

Error handling
--------------

Bad requests get the status the spec gives and a JSON-RPC error body: 403
for a refused ``Host``/``Origin``, 413 for a body over the limit, 408 for a
body slower than ``body_timeout``, 415 for a body that is not JSON, 406 when
the client accepts neither JSON nor SSE, 400
for malformed or mismatched requests, 404 for unknown sessions (and another
principal's) and methods, 405 for unsupported HTTP methods, 410 for a
``Last-Event-ID`` no stream of the session can be resumed from, 503 while
not taking sessions. With ``auth`` (see :mod:`trio_mcp._auth._resource_server`),
401 for a missing or refused access token, 403 for missing scopes, 400 for a
token in the query string.

Fairness
--------

Each caller (a principal, else a peer address: see :mod:`._callers`) may hold at
most ``max_sessions_per_principal`` legacy sessions and
``max_requests_per_principal`` POSTs carrying requests at once; past either it
gets ``429`` with ``Retry-After`` and a JSON-RPC error, so one client cannot take
the slots the totals (``max_sessions``, ``max_concurrent_requests``) allow while
others are locked out. Past a total, ``503`` with ``Retry-After``.

Shutdown
--------

:meth:`McpAsgiApp.begin_shutdown` takes a ``grace``: requests still running that
many seconds later are cancelled and answered with a JSON-RPC error ("the server
is shutting down": ``503`` as JSON, or the last event of their SSE stream) rather
than cut off by the ASGI server. :func:`serve` passes its ``graceful_timeout``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from typing import TYPE_CHECKING, Any, Final, TypedDict, Unpack

import trio

from ... import _jsonrpc as rpc
from ..._auth._verifier import ACCESS_TOKEN_KEY
from ..._errors import ErrorCode
from ..._fleet import _lazy as _fleet_lazy
from ..._fleet._running import running_fleet, task_store_url
from ..._fleet._state import RedisState, parse_state
from ..._protocol._envelope import declares_modern_version
from ..._server._rate_limit import RateLimit, RateLimiter
from ..._session._options import SessionSettings
from ..._transports._stream import Received
from ..._versions import LEGACY_VERSIONS, allows_batches
from .._headers import MCP_PROTOCOL_VERSION, MCP_SESSION_ID
from . import _lazy
from ._callers import PEER_PREFIXES_KEY, CallerCaps, PeerPrefixes, caller_of
from ._event_store import EventStore, MemoryEventStore
from ._exchange import Disconnected, HttpRequest, Receive, Scope, Send, TooLarge, error_body
from ._modern import ModernEndpoint
from ._security import OriginPolicy
from ._session_engine import LegacySession
from ._session_manager import SessionManager
from ._session_registry import SessionState
from ._sse_2024 import SseTransport

if TYPE_CHECKING:
    from ..._auth._resource_server import ProtectedResource
    from ..._cards._model import ServerCard
    from ..._cards._serving import CardEndpoints
    from ..._fleet._caps import FleetCaps
    from ..._fleet._fleet import Fleet
    from ..._fleet._forward import Forwarder
    from ..._fleet._sessions import FleetSessions
    from ..._server._server import Server

__all__ = ["AppOptions", "McpAsgiApp", "asgi_app", "open_asgi_app"]

log = logging.getLogger("trio_mcp.http")

_DEFAULT_STORE: Any = object()
_ALLOW_MCP = [(b"allow", b"GET, POST, DELETE")]
_ALLOW_POST = [(b"allow", b"POST")]
_ALLOW_GET = [(b"allow", b"GET")]
#: Seconds a caller over its cap of requests in flight is told to wait.
REQUESTS_RETRY_AFTER: Final = 1
#: Seconds a request that needs the fleet's Redis while it does not answer is told to wait.
REDIS_RETRY_AFTER: Final = 2
#: The scope key of a request another worker forwarded here (see ``_fleet/_forward.py``):
#: the principal that worker named.
FORWARDED_PRINCIPAL: Final = "trio_mcp.forwarded_principal"


class McpAsgiApp:
    """An ASGI 3 application serving ``server`` (see :func:`asgi_app` for the options).

    ``app.manager`` is the legacy session manager while the app runs (``None``
    otherwise).
    """

    def __init__(
        self,
        server: Server,
        *,
        path: str = "/mcp",
        sse_path: str | None = "/sse",
        message_path: str = "/messages",
        origin_policy: OriginPolicy | None = None,
        max_body_bytes: int = 4 * 1024 * 1024,
        body_timeout: float = 30.0,
        max_sessions: int = 10_000,
        max_sessions_per_principal: int = 2_000,
        max_requests_per_principal: int = 64,
        session_idle_timeout: float = 600.0,
        event_store: EventStore | None = _DEFAULT_STORE,
        retry_ms: int | None = 1000,
        keepalive_interval: float = 15.0,
        engine_linger: float = 2.0,
        session_options: SessionSettings | None = None,
        principal: Callable[[Scope], str | None] | None = None,
        auth: ProtectedResource | None = None,
        tool_rate_limit: RateLimit | None = None,
        peer_prefixes: PeerPrefixes | None = None,
        card: ServerCard | None = None,
        card_catalog: bool = False,
        state: str | RedisState | None = None,
    ) -> None:
        if peer_prefixes is not None and not isinstance(peer_prefixes, PeerPrefixes):
            raise TypeError(
                f"peer_prefixes must be a PeerPrefixes, not {type(peer_prefixes).__name__}"
            )
        #: How peers without a principal are grouped into callers (see :mod:`._callers`).
        self.peer_prefixes = peer_prefixes if peer_prefixes is not None else PeerPrefixes()
        self.server = server
        self.auth = auth
        if auth is not None and principal is None:
            principal = _token_subject
        #: Names the caller of a request from its ASGI scope (``None``: nobody).
        self.principal = principal
        self.path = path
        self.sse_path = sse_path
        self.message_path = message_path
        self.origin_policy = origin_policy if origin_policy is not None else OriginPolicy.loopback()
        self.max_body_bytes = max_body_bytes
        self.body_timeout = body_timeout
        self.max_sessions = max_sessions
        self.session_idle_timeout = session_idle_timeout
        self.event_store: EventStore | None = (
            MemoryEventStore() if event_store is _DEFAULT_STORE else event_store
        )
        #: A fleet keeps the events of the default store in Redis.
        self._default_event_store = event_store is _DEFAULT_STORE
        self.retry_ms = retry_ms
        self.keepalive_interval = keepalive_interval
        self.engine_linger = engine_linger
        self.session_options = dict(session_options or {})
        self.principal = principal
        #: Sessions each caller holds (legacy Streamable HTTP and HTTP+SSE together).
        self.sessions_per_caller = CallerCaps("sessions", max_sessions_per_principal)
        #: POSTs carrying requests that each caller has in flight (both eras).
        self.requests_per_caller = CallerCaps("requests in flight", max_requests_per_principal)
        limit = tool_rate_limit if tool_rate_limit is not None else server.tool_rate_limit
        #: One token bucket per caller for every session and request of this app.
        self.rate_limiter = RateLimiter(limit) if limit is not None else None
        self.modern = ModernEndpoint(
            server,
            keepalive_interval=keepalive_interval,
            session_options=self.session_options,
            principal=principal,
            rate_limiter=self.rate_limiter,
        )
        self.sse = (
            SseTransport(
                server,
                message_path=message_path,
                max_sessions=max_sessions,
                sessions_per_caller=self.sessions_per_caller,
                principal=principal,
                keepalive_interval=keepalive_interval,
                session_options=self.session_options,
            )
            if sse_path is not None
            else None
        )
        self.manager: SessionManager | None = None
        #: The fleet's shared state (``None``: this process alone).
        self.state: RedisState | None = parse_state(state)
        #: This worker's part of the fleet while the app runs (``None`` otherwise).
        self.fleet: Fleet | None = None
        #: The fleet's sessions and the forwarding to their owners, while the app runs in a
        #: fleet (``None`` otherwise).
        self.fleet_sessions: FleetSessions | None = None
        self.forwarder: Forwarder | None = None
        if card_catalog and card is None:
            raise ValueError("card_catalog=True lists the server's card: pass card=... too")
        if card is not None:
            if not isinstance(card, _lazy.ServerCard):
                raise TypeError(
                    f"card must be a ServerCard (see trio_mcp.cards.server_card), "
                    f"not {type(card).__name__}"
                )
            _lazy.check_card(card)  # a card its schema refuses is not served
        #: The server card endpoints (``None`` without ``card``).
        self.cards: CardEndpoints | None = (
            _lazy.CardEndpoints(
                card,
                mcp_path=path,
                sse_path=sse_path,
                versions=server.versions,
                auth=auth,
                catalog=card_catalog,
            )
            if card is not None
            else None
        )

    def __repr__(self) -> str:
        return f"<McpAsgiApp {self.server.name!r} at {self.path!r}>"

    # -- running ----------------------------------------------------------------------------

    @asynccontextmanager
    async def running(self) -> AsyncIterator[McpAsgiApp]:
        """Run the legacy session manager for the block (the lifespan does this for you).

        Entering opens its nursery (and the server's task nursery, when it runs tasks);
        leaving ends every session (cancelling what runs in them), cancels the tasks still
        running, and waits for them.
        """
        if self.manager is not None:
            raise RuntimeError("this app is already running")
        async with running_fleet(self.server, self.state) as fleet:
            self.fleet = fleet
            default_store = task_store_url(fleet.state) if fleet is not None else None
            event_store = self.event_store
            if fleet is not None:
                self.fleet_sessions = _fleet_lazy.FleetSessions(
                    fleet.redis,
                    fleet.state,
                    worker_id=fleet.inbox.worker_id,
                    idle_timeout=self.session_idle_timeout,
                )
                if self._default_event_store:
                    self.event_store = self.fleet_sessions.event_store()
            shared = None if fleet is None else fleet.caps("sessions", self.sessions_per_caller.cap)
            if self.sse is not None:
                self.sse.join(fleet, shared)
            try:
                async with self._sessions_running(default_store, shared):
                    yield self
            finally:
                if self.sse is not None:
                    self.sse.join(None, None)
                self.fleet = None
                self.fleet_sessions = None
                self.event_store = event_store

    @asynccontextmanager
    async def _sessions_running(
        self, default_store: str | None, shared_caps: FleetCaps | None
    ) -> AsyncIterator[None]:
        running_tasks = self.server.running_tasks(default_store=default_store)
        async with running_tasks as tasks, trio.open_nursery() as nursery:
            self.modern.dispatcher.tasks = tasks
            self.manager = SessionManager(
                self.server,
                nursery,
                store=self.event_store,
                max_sessions=self.max_sessions,
                sessions_per_caller=self.sessions_per_caller,
                rate_limiter=self.rate_limiter,
                idle_timeout=self.session_idle_timeout,
                engine_linger=self.engine_linger,
                retry_ms=self.retry_ms,
                keepalive_interval=self.keepalive_interval,
                session_options=self.session_options,
            )
            self.manager.tasks = tasks  # 2025-11-25 sessions run core tasks here too
            self.manager.fleet_caps = shared_caps
            self.modern.watchers = nursery
            if self.fleet is not None and self.fleet_sessions is not None:
                self.manager.fleet = self.fleet_sessions
                self.forwarder = _fleet_lazy.Forwarder(
                    self.fleet.inbox, self._serve_forwarded, nursery
                )
            try:
                yield
            finally:
                self.forwarder = None
                self.modern.watchers = None
                self.modern.dispatcher.tasks = None
                manager, self.manager = self.manager, None
                self.begin_shutdown(grace=0)
                await manager.aclose()  # shielded, and bounded by SESSION_END_TIMEOUT
                nursery.cancel_scope.cancel()

    def begin_shutdown(self, *, grace: float = math.inf) -> None:
        """Start a graceful shutdown: end the long-lived streams (standalone ``GET``
        streams, ``subscriptions/listen``, HTTP+SSE sessions) and take no new sessions.

        Requests in flight go on for ``grace`` seconds (by default, until they end);
        those still running then are cancelled and answered with a JSON-RPC error
        saying that the server is shutting down (legacy sessions: every request still
        awaiting its answer on a POST's response). Never blocks; calling it again can
        only bring the deadline closer."""
        deadline = trio.current_time() + grace
        self.modern.begin_shutdown(deadline)
        if self.sse is not None:
            self.sse.begin_shutdown(deadline)
        if self.manager is not None:
            self.manager.begin_shutdown(deadline)

    # -- ASGI -------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            scope[PEER_PREFIXES_KEY] = self.peer_prefixes  # (read by caller_of)
            try:
                await self._http(HttpRequest(scope, receive, send))
            except Exception:
                # Our bug, not the client's: log it, answer what can still be answered,
                # and never let it reach the ASGI server (hypercorn would try a 500 in the
                # middle of a stream and take the whole listener down with it).
                log.exception("%s %s failed", scope["method"], scope["path"])
                await _end_after_failure(send)
        elif kind == "lifespan":
            await self._lifespan(receive, send)
        else:
            raise RuntimeError(f"{self!r} serves only HTTP (got a {kind!r} connection)")

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        message = await receive()
        if message["type"] != "lifespan.startup":
            return
        if self.manager is not None:
            # Owned by open_asgi_app's block: nothing to start here.
            await send({"type": "lifespan.startup.complete"})
            await receive()
            await send({"type": "lifespan.shutdown.complete"})
            return
        started = False
        try:
            async with self.running():
                started = True
                await send({"type": "lifespan.startup.complete"})
                await receive()  # lifespan.shutdown
        except Exception as exc:
            if started:
                raise
            # What serving needs could not be had (a task store that cannot be opened, say):
            # the server must not start and run on without it, answering 503 for ever. The
            # ASGI server stops with this message (Hypercorn raises it out of its serve).
            log.error("the app cannot start: %s", exc)  # noqa: TRY400 - its message says all
            await send({"type": "lifespan.startup.failed", "message": str(exc)})
            return
        await send({"type": "lifespan.shutdown.complete"})

    async def _http(self, http: HttpRequest) -> None:
        refusal = self.origin_policy.refusal(http.headers)
        if refusal is not None:
            log.warning("refused a request: %s", refusal)
            await http.respond_error(403, ErrorCode.INVALID_REQUEST, f"Forbidden: {refusal}")
            return
        path = http.path
        if self.cards is not None and path in self.cards.paths:
            await self.cards.serve(http)  # public, even on a protected server
            return
        auth = self.auth
        if auth is not None:
            if path in auth.metadata_paths:
                await auth.serve_metadata(http)
                return
            if (path == self.path or path in self._sse_paths) and await auth.admit(http) is None:
                return  # refused
        if path == self.path:
            await self._mcp(http)
        elif self.sse is not None and path == self.sse_path:
            if http.method == "GET":
                await self.sse.get(http, self._principal(http))
            else:
                await http.respond(405, headers=_ALLOW_GET)
        elif self.sse is not None and path == self.message_path:
            if http.method == "POST":
                body = await self._body(http)
                if body is not None and not (
                    self.auth is not None and await self._refused_scopes(http, rpc.parse(body))
                ):
                    await self.sse.post(http, body, self._principal(http))
            else:
                await http.respond(405, headers=_ALLOW_POST)
        else:
            await http.respond(404, b"Not Found", content_type=b"text/plain")

    def _principal(self, http: HttpRequest) -> str | None:
        """Who sends the request of a session, as the ``principal`` hook names them (for a
        request another worker forwarded: as that worker named them)."""
        scope = http.scope
        if FORWARDED_PRINCIPAL in scope:
            forwarded: str | None = scope[FORWARDED_PRINCIPAL]
            return forwarded
        return self.principal(scope) if self.principal is not None else None

    @property
    def _sse_paths(self) -> tuple[str, ...]:
        return () if self.sse is None else (self.sse_path or "", self.message_path)

    async def _refused_scopes(self, http: HttpRequest, message: Received) -> bool:
        """Whether a request of ``message`` needs scopes its token lacks (then the ``403``
        was sent): checked before any handler runs."""
        auth = self.auth
        token = http.scope.get(ACCESS_TOKEN_KEY)
        if auth is None or token is None:
            return False  # (not reached: the edge admitted only requests with a token)
        items = message.items if isinstance(message, rpc.Batch) else [message]
        needed: frozenset[str] = frozenset()
        first_id = None
        for item in items:
            if type(item) is rpc.JsonRpcRequest:
                wanted = self.server.scopes_needed(item.method, item.params)
                if wanted and first_id is None:
                    first_id = item.id
                needed |= wanted
        refusal = auth.refuse_scopes(token, needed)
        if refusal is None:
            return False
        await auth.send_refusal(http, refusal, id=first_id)
        return True

    async def _body(self, http: HttpRequest) -> bytes | None:
        """The request body; ``None`` after answering when it cannot be had."""
        content_type = http.headers.get("content-type")
        if (
            content_type is not None
            and content_type.split(";", 1)[0].strip().lower() != "application/json"
        ):
            await http.respond_error(
                415,
                ErrorCode.INVALID_REQUEST,
                "Unsupported Media Type: the body must be application/json",
            )
            return None
        try:
            with trio.move_on_after(self.body_timeout):
                return await http.read_body(self.max_body_bytes)
            await http.respond_error(
                408,
                ErrorCode.INVALID_REQUEST,
                f"Request Timeout: the body took longer than {self.body_timeout} s",
                headers=[(b"connection", b"close")],
            )
        except TooLarge:
            await http.respond_error(
                413,
                ErrorCode.INVALID_REQUEST,
                f"Payload Too Large: the limit is {self.max_body_bytes} bytes",
                headers=[(b"connection", b"close")],
            )
        except Disconnected:
            pass
        return None

    async def _mcp(self, http: HttpRequest) -> None:
        method = http.method
        if method == "POST":
            body = await self._body(http)
            if body is None:
                return
            message = rpc.parse(body)
            if self.auth is not None and await self._refused_scopes(http, message):
                return
            if not _carries_request(message):
                await self._dispatch_post(http, message, None, body)
                return
            caller = caller_of(http.scope, self.principal)
            caps = self.requests_per_caller
            if not caps.take(caller):
                await http.respond_error(
                    429,
                    ErrorCode.INTERNAL_ERROR,
                    caps.refusal(),
                    id=message.id if isinstance(message, rpc.JsonRpcRequest) else None,
                    headers=[(b"retry-after", b"%d" % REQUESTS_RETRY_AFTER)],
                )
                return
            try:
                await self._dispatch_post(http, message, caller, body)
            finally:
                caps.give_back(caller)
        elif method in ("GET", "DELETE"):
            version = http.headers.get(MCP_PROTOCOL_VERSION)
            if (
                version is not None and version.strip() not in LEGACY_VERSIONS
            ) or self.manager is None:
                await http.respond(405, headers=_ALLOW_POST)
                return
            await self._get_or_delete(http)
        else:
            await http.respond(405, headers=_ALLOW_MCP)

    async def _get_or_delete(self, http: HttpRequest) -> None:
        manager = self.manager
        assert manager is not None
        principal = self._principal(http)
        session = manager.session_for(http, principal)
        if session is None:
            session = await self._elsewhere(http, principal, b"")
            if session is None:
                return  # answered
        if http.method == "GET":
            await manager.get(http, session)
        else:
            await manager.delete(http, session)

    async def _serve_forwarded(self, http: HttpRequest) -> None:
        """Serve a request of a session this worker holds, forwarded by another worker
        (which checked its host, token and principal): never forwarded again."""
        if self.manager is None:
            await http.respond_error(
                503, ErrorCode.INTERNAL_ERROR, "Service Unavailable: shutting down"
            )
        elif http.method == "POST":
            body = await http.read_body(self.max_body_bytes)
            await self._legacy_post(http, rpc.parse(body), None)
        else:
            await self._get_or_delete(http)

    async def _elsewhere(
        self, http: HttpRequest, principal: str | None, body: bytes
    ) -> LegacySession | None:
        """A request naming a session this worker does not hold: answered here (404 for a
        session that ended or that ``principal`` does not have, 400 without a session id,
        503 while Redis is away), or forwarded to the worker that holds it (then answered
        too), or taken over from a worker that died (returned, for this worker to serve).
        Without a fleet: 404."""
        sessions, forwarder, manager = self.fleet_sessions, self.forwarder, self.manager
        session_id = http.headers.get(MCP_SESSION_ID)
        if FORWARDED_PRINCIPAL in http.scope and session_id is not None:
            # The forwarder found it live here: it ended in between.
            await _session_ended(http)
            return None
        if sessions is None or forwarder is None or manager is None or session_id is None:
            await _no_session(http)
            return None
        session_id = session_id.strip()
        for attempt in range(2):  # (a second time if another worker took it over first)
            try:
                state, record = await sessions.lookup(session_id, principal, fresh=attempt > 0)
            except Exception as exc:  # noqa: BLE001 - Redis away: 503, the worker goes on
                await _redis_away(http, session_id, exc)
                return None
            if state is SessionState.ENDED:
                await _session_ended(http)
                return None
            if record is None:
                await _no_session(http)
                return None
            if record.owner != sessions.worker_id and await forwarder.forward(
                http, body, record.owner, principal
            ):
                return None  # answered by the owner (or 503: it could not be reached)
            # Its owner is gone: take it over.
            try:
                taken = await sessions.take_over(record)
            except Exception as exc:  # noqa: BLE001 - Redis away: 503, the worker goes on
                await _redis_away(http, session_id, exc)
                return None
            if taken is not None:
                return await manager.adopt(
                    taken, caller_of(http.scope, self.principal), previous_owner=record.owner
                )
        await _redis_away(http, session_id, RuntimeError("the session changed owner twice"))
        return None

    async def _dispatch_post(
        self, http: HttpRequest, message: Received, caller: str | None, body: bytes
    ) -> None:
        if _is_modern(http.headers.get(MCP_PROTOCOL_VERSION), message):
            await self.modern.post(http, message, caller)
        else:
            await self._legacy_post(http, message, caller, body)

    async def _legacy_post(
        self, http: HttpRequest, message: Received, caller: str | None, body: bytes = b""
    ) -> None:
        if type(message) is rpc.InvalidMessage:
            if message.reply is not None:
                await http.respond_message(message.reply, 400)
            else:
                await http.respond_error(400, ErrorCode.INVALID_REQUEST, "Invalid message")
            return
        manager = self.manager
        if manager is None:
            await http.respond_error(
                503,
                ErrorCode.INVALID_REQUEST,
                "Service Unavailable: sessions need the app's lifespan (or open_asgi_app)",
            )
            return
        principal = self._principal(http)
        session = manager.session_for(http, principal)
        if session is None:
            if MCP_SESSION_ID not in http.headers and _is_initialize(message):
                if caller is None:  # (an initialize carries a request: counted above)
                    caller = caller_of(http.scope, self.principal)
                await manager.initialize(http, message, caller, principal=principal)  # type: ignore[arg-type]
                return
            session = await self._elsewhere(http, principal, body)
            if session is None:
                return  # answered
        if type(message) is rpc.Batch:
            if not allows_batches(session.connection.version or ""):
                await http.respond_error(
                    400,
                    ErrorCode.INVALID_REQUEST,
                    "Invalid Request: this protocol version has no JSON-RPC batches",
                )
                return
            if message.repeated_ids:
                # This exchange carries the batch's answers, routed by request id: it
                # cannot carry two answers with one id, so the batch is refused whole.
                repeated = message.repeated_ids[0]
                await http.respond_error(
                    400,
                    ErrorCode.INVALID_REQUEST,
                    f"Invalid Request: request id {repeated!r} is used more than once"
                    " in this batch",
                    id=repeated,
                )
                return
            messages: list[Received] = list(message.items)
        else:
            messages = [message]
        await manager.post(http, session, messages)


def _token_subject(scope: Scope) -> str | None:
    """The principal of a request that passed ``auth``: its token's subject."""
    token = scope.get(ACCESS_TOKEN_KEY)
    return token.subject if token is not None else None


def _is_modern(header: str | None, message: Received) -> bool:
    if header is not None and header.strip() not in LEGACY_VERSIONS:
        return True
    if isinstance(message, (rpc.JsonRpcRequest, rpc.JsonRpcNotification)):
        return declares_modern_version(message.params)
    return False


def _carries_request(message: Received) -> bool:
    if isinstance(message, rpc.JsonRpcRequest):
        return True
    if isinstance(message, rpc.Batch):
        return any(type(item) is rpc.JsonRpcRequest for item in message.items)
    return False


def _is_initialize(message: Received) -> bool:
    return type(message) is rpc.JsonRpcRequest and message.method == "initialize"


async def _session_ended(http: HttpRequest) -> None:
    await http.respond_error(404, ErrorCode.INVALID_REQUEST, "Session not found (it ended)")


async def _redis_away(http: HttpRequest, session_id: str, exc: BaseException) -> None:
    log.warning("session %s...: the fleet's Redis does not answer: %r", session_id[:6], exc)
    await http.respond_error(
        503,
        ErrorCode.INTERNAL_ERROR,
        "Service Unavailable: the fleet's shared state (Redis) does not answer; try again",
        headers=[(b"retry-after", b"%d" % REDIS_RETRY_AFTER)],
    )


async def _no_session(http: HttpRequest) -> None:
    if MCP_SESSION_ID in http.headers:
        await http.respond_error(404, ErrorCode.INVALID_REQUEST, "Session not found")
    else:
        await http.respond_error(400, ErrorCode.INVALID_REQUEST, "Bad Request: Missing session ID")


class AppOptions(TypedDict, total=False):
    """The keyword options of :func:`asgi_app`, :func:`open_asgi_app` and :func:`serve`
    (typed, so that a misspelt option is an error your type checker reports; see
    :func:`asgi_app` for what each means and its default)."""

    path: str
    sse_path: str | None
    message_path: str
    origin_policy: OriginPolicy | None
    max_body_bytes: int
    body_timeout: float
    max_sessions: int
    max_sessions_per_principal: int
    max_requests_per_principal: int
    session_idle_timeout: float
    event_store: EventStore | None
    retry_ms: int | None
    keepalive_interval: float
    engine_linger: float
    session_options: SessionSettings | None
    principal: Callable[[Scope], str | None] | None
    auth: ProtectedResource | None
    tool_rate_limit: RateLimit | None
    peer_prefixes: PeerPrefixes | None
    card: ServerCard | None
    card_catalog: bool
    state: str | RedisState | None


def asgi_app(server: Server, **options: Unpack[AppOptions]) -> McpAsgiApp:
    """An ASGI 3 application serving ``server`` over Streamable HTTP (both eras) and the
    2024-11-05 HTTP+SSE transport.

    Serve it with an ASGI server that runs the lifespan protocol on Trio (Hypercorn's
    Trio worker; see :func:`serve`), or enter :func:`open_asgi_app` instead.

    Args:
        path: the MCP endpoint (``"/mcp"``).
        sse_path, message_path: the 2024-11-05 endpoints (``sse_path=None`` turns them off).
            All three are paths inside the app: mounted under a prefix by an ASGI router
            (the scope's ``root_path``), it serves them below that prefix.
        origin_policy: the accepted ``Host``/``Origin`` headers (DNS-rebinding protection);
            by default the local machine's names only: pass
            :meth:`OriginPolicy(allowed_hosts=[...]) <OriginPolicy>` to serve other names.
        max_body_bytes: the largest request body (4 MiB; 413 beyond).
        body_timeout: seconds a client may take to send a whole request body (30; 408
            beyond): :func:`serve` turns Hypercorn's ``read_timeout`` off, because
            idle event-stream clients send nothing, so this bounds a body trickled in
            forever.
        max_sessions: the most legacy sessions at once (10,000; 503 and ``Retry-After``
            beyond), for legacy Streamable HTTP and for the 2024-11-05 HTTP+SSE
            transport each.
        max_sessions_per_principal: the most legacy sessions one caller may hold at
            once, both legacy transports together (2,000; 429 and ``Retry-After``
            beyond). A caller is the principal ``principal`` names, else the peer's
            IP address (behind a proxy: the proxy's, so name principals there).
        max_requests_per_principal: the most POSTs carrying requests one caller may
            have in flight at once, both eras together (64; 429 and ``Retry-After``
            beyond), so that one client's slow calls cannot take every handler slot
            (``max_concurrent_requests``) from the others.
        session_idle_timeout: seconds without HTTP traffic after which a legacy session
            ends (600; ``math.inf``: never).
        event_store: where events of resumable streams wait (a bounded
            :class:`MemoryEventStore` by default; ``None``: streams are not resumable).
        retry_ms: the reconnection delay announced in priming events (1000).
        keepalive_interval: seconds between keep-alive comments on long-lived streams
            (15).
        engine_linger: idle seconds after which a legacy session stops its tasks (2).
        session_options: options for each :class:`~trio_mcp.session.Session`
            (:class:`~trio_mcp.session.SessionSettings`: ``drain_timeout``,
            ``max_concurrent_requests``, ...). Stateless requests
            (2026-07-28) each get a session, and ``max_concurrent_requests`` (256)
            bounds their handlers all together: as many more wait for a turn, and
            past that a request gets 503 and ``Retry-After``.
        principal: ``principal(scope)`` names the caller of a request from its ASGI scope
            (say, what your authentication middleware put there), or returns ``None``.
            Called once per request, before its handler runs; handlers see it as
            :attr:`Context.principal <trio_mcp.Context.principal>`, and every
            ``requestState`` is bound to it, so a state issued to one caller is refused
            when another presents it. A legacy session (Streamable HTTP or HTTP+SSE) is
            bound to the principal that opened it: any other (anonymous included) that
            presents its id gets ``404``, as if it did not exist, and the refusal is
            logged (principal names and a session id prefix). It also names the caller
            whose sessions, requests in flight and tool calls are counted (see
            ``max_sessions_per_principal``). With ``auth``, by default the verified
            token's subject.
        auth: make the server an OAuth 2.1 protected resource
            (:class:`~trio_mcp.auth.ProtectedResource`): every request to the MCP
            endpoints needs an access token issued for it (``401`` without, with the
            ``WWW-Authenticate`` challenge clients start authorization from), tools,
            resources and prompts declared with ``scopes=`` need those (``403``
            ``insufficient_scope``), and the Protected Resource Metadata document
            (RFC 9728) is served at its well-known paths. Handlers never see the token.
        tool_rate_limit: limits each caller's ``tools/call`` requests over HTTP, with
            one token bucket per caller (principal, else peer address) shared by all
            its sessions and stateless requests (by default the server's own
            ``Server(tool_rate_limit=...)``, else none). See the how-to "Serve over
            HTTP" for when to switch it on.
        peer_prefixes: how a peer with no principal is named as a caller, for the caps
            and the rate limit above: by its network, the leading bits of its address
            (:class:`PeerPrefixes`: each IPv4 address, each IPv6 ``/64`` by default,
            since one IPv6 host usually holds a whole ``/64``).
        card: serve this :class:`~trio_mcp.cards.ServerCard` (SEP-2127; build it with
            :func:`~trio_mcp.cards.server_card`) at ``path + "/server-card"``, the
            location the SEP reserves: ``GET`` (and ``HEAD``, ``OPTIONS``) only, public
            even with ``auth`` (the card then says which authorization the server
            needs), with ``Access-Control-Allow-Origin: *`` and ``Cache-Control: public,
            max-age=3600``. A card without ``remotes`` gets this app's endpoints, at the
            URL the request reached (with ``auth``, the protected resource's URL).
        card_catalog: also serve the MCP Catalog at ``/.well-known/mcp/catalog.json``,
            listing this server's card (and the card at ``/.well-known/mcp/server-card``
            and ``/.well-known/mcp/server-card.json``, for readers of the SEP's first
            text and for scanners). Only for an app that owns its origin (the
            catalog speaks for the whole site): mounted under a prefix among other
            apps, publish one catalog for them all instead.
        state: the shared state of a fleet of workers serving as one server
            (:class:`~trio_mcp.fleet.RedisState`, or its URL): the ``requestState`` key
            kept in Redis (unless the server has ``secret=``), change notifications
            reaching the ``subscriptions/listen`` streams of every worker, the task
            store (for a server whose tasks use the default in-memory one), and the
            Streamable HTTP sessions of the initialize era: recorded in Redis, served by
            any worker (forwarded to the one holding the session), their events in Redis
            (the default ``event_store`` becomes a Redis one). ``None``
            (the default): this process alone, nothing of Redis imported. See the
            how-to "Run several workers".
    """
    return McpAsgiApp(server, **options)


@asynccontextmanager
async def open_asgi_app(server: Server, **options: Unpack[AppOptions]) -> AsyncIterator[McpAsgiApp]:
    """An ASGI app (as :func:`asgi_app`) whose sessions live in this block's nursery, for ASGI
    servers that do not run the lifespan protocol.

    Entering blocks only to open the nursery; leaving ends every session.
    """
    app = McpAsgiApp(server, **options)
    async with app.running():
        yield app


async def _end_after_failure(send: Send) -> None:
    """End a response whose handler failed: a ``500`` with a JSON-RPC error if nothing was
    sent yet, else the end of the body already begun. Never raises."""
    body = error_body(None, ErrorCode.INTERNAL_ERROR, "Internal error")
    start = {
        "type": "http.response.start",
        "status": 500,
        "headers": [(b"content-type", b"application/json")],
    }
    try:
        await send(start)
    except Exception:  # noqa: BLE001 (whatever the server raises, the answer is the same)
        body = b""  # the response had started: only its end is left to send
    with suppress(Exception):
        await send({"type": "http.response.body", "body": body})
