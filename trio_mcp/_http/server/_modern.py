"""Stateless Streamable HTTP (2026-07-28): every request is its own POST.

Each POST is checked against its headers (in the order the conformance
suite expects: the ``_meta`` envelope, ``MCP-Protocol-Version``, the version
itself, ``Mcp-Method``, ``Mcp-Name``, then ``Mcp-Param-*``), then answered
by a fresh protocol :class:`~trio_mcp.protocol.Connection` and the server's
handlers, in the task that serves the POST. The answer is a single JSON body,
unless the handler sends something first (progress, a log message, a
subscription's events): then it is an SSE stream that ends with the answer.

Cancellation: a client that disconnects cancels its request's handler (the
disconnect *is* the cancellation in this revision); nothing more is sent.

Load: every request's handler takes a slot of one shared
:class:`~trio_mcp.session.Admission` (``max_concurrent_requests``); when every slot
is taken and as many requests wait, a request is refused at once with 503 and
``Retry-After`` (its handler never runs, so it is safe to send again). Shutdown:
past the deadline :meth:`ModernEndpoint.begin_shutdown` was given, running handlers
are cancelled and each request is answered with an error saying so.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Final

import trio

from ... import _jsonrpc as rpc
from ..._errors import ErrorCode, McpError, UnsupportedProtocolVersion
from ..._protocol._connection import Connection
from ..._protocol._envelope import CLIENT_CAPABILITIES, PROTOCOL_VERSION
from ..._protocol._events import Dispatch, InboundRequest, Reply
from ..._server._dispatch import Dispatcher
from ..._server._internals import ServerInternals
from ..._server._rate_limit import RateLimiter
from ..._session._engine import Session
from ..._session._inbound import LATER, Admission
from ..._transports._stream import MessageStream, Received
from ..._types._base import RequestId
from ..._versions import MODERN_VERSIONS
from .._headers import (
    MCP_METHOD,
    MCP_NAME,
    MCP_PROTOCOL_VERSION,
    HeaderParam,
    decode_value,
    header_params,
    name_source,
    param_value_text,
)
from ._callers import caller_of, principal_of
from ._exchange import (
    Header,
    HttpRequest,
    ResponseWriter,
    Scope,
    cancel_on_disconnect,
    keep_alive,
    retry_status,
    status_for_error,
)

if TYPE_CHECKING:
    from ..._server._server import Server
    from ..._server._tools import ToolSpec

__all__ = ["ModernEndpoint"]

log = logging.getLogger("trio_mcp.http")

_NAMED_METHODS: Final = frozenset(
    {"tools/call", "prompts/get", "resources/read", "tasks/get", "tasks/update", "tasks/cancel"}
)
#: Protocol connections kept for reuse by later requests.
_IDLE_CONNECTIONS: Final = 64
#: How long to wait for the server to report a finished exchange (see _dispatch).
_REPORT_DEADLINE: Final = 5.0
#: Seconds a client refused for want of a handler slot is told to wait.
BUSY_RETRY_AFTER: Final = 1
#: What a request still running at the shutdown deadline is answered.
SHUTTING_DOWN: Final = "Service Unavailable: the server is shutting down"


def _mismatch(message: str) -> McpError:
    return McpError(f"Header mismatch: {message}", code=ErrorCode.HEADER_MISMATCH)


class _ExchangeStream(MessageStream):
    """The message stream of one POST: what the session sends for the request goes into
    the HTTP response; the answer ends it. Nothing is ever received on it (the request
    was read from the body)."""

    __slots__ = ("_id", "_writer")

    def __init__(self, writer: ResponseWriter, request_id: RequestId) -> None:
        self._writer = writer
        self._id = request_id

    async def send(self, message: rpc.Message, *, related: RequestId | None = None) -> None:
        writer = self._writer
        if isinstance(message, (rpc.ResultResponse, rpc.ErrorResponse)):
            if message.id != self._id:
                await trio.lowlevel.checkpoint()
                return
            data = rpc.dumps(message)
            if writer.state == "new" and writer.json_ok:
                status, headers = (
                    (200, ()) if isinstance(message, rpc.ResultResponse) else _status(message)
                )
                await writer.json(data, status, headers=headers)
            else:
                await writer.event(data)
                await writer.close()
            return
        if related != self._id or not writer.sse_ok:
            # Unrelated messages have no place on a request's stream in this revision.
            log.debug("dropped %s: not part of request %r", type(message).__name__, self._id)
            await trio.lowlevel.checkpoint()
            return
        await writer.event(rpc.dumps(message))

    async def receive(self) -> Received:
        await trio.lowlevel.checkpoint()
        raise trio.EndOfChannel

    async def aclose(self) -> None:
        await trio.lowlevel.checkpoint()


def _status(message: rpc.Message) -> tuple[int, tuple[Header, ...]]:
    """The HTTP status (and headers) of an error answer."""
    error = message.error  # type: ignore[union-attr]
    return retry_status(error) or (status_for_error(error.code), ())


class ModernEndpoint:
    """Answers stateless (2026-07-28) POSTs for a :class:`~trio_mcp.Server`.

    Args:
        server: the server.
        keepalive_interval: seconds between keep-alive comments on
            ``subscriptions/listen`` streams.
        session_options: options for each request's
            :class:`~trio_mcp.session.Session`; ``max_concurrent_requests`` bounds
            them all together.
        principal: names the caller of each request from its ASGI scope (see
            :func:`~trio_mcp.http.asgi_app`).
        rate_limiter: the token buckets of ``tools/call`` by caller (else the server's
            ``tool_rate_limit``, if any, with buckets of this endpoint's own).
    """

    def __init__(
        self,
        server: Server,
        *,
        keepalive_interval: float = 15.0,
        session_options: dict[str, Any] | None = None,
        principal: Callable[[Scope], str | None] | None = None,
        rate_limiter: RateLimiter | None = None,
    ) -> None:
        self.server = server
        self._internals = ServerInternals(server)
        self.principal = principal
        options = dict(session_options or {})
        #: One bound for every request's session: at most ``max_concurrent_requests``
        #: handlers run at once across the endpoint, as many more wait, the rest are
        #: refused as busy.
        self.admission = Admission(options.pop("max_concurrent_requests", 256))
        self._session_options = options
        #: Shared by every request: modern requests keep no per-connection state.
        self.dispatcher = Dispatcher(server, rate_limiter=rate_limiter)
        self._rate_limited = self.dispatcher.rate_limited
        self.keepalive_interval = keepalive_interval
        self.versions = tuple(v for v in server.versions if v in MODERN_VERSIONS)
        self._header_params: dict[ToolSpec, list[HeaderParam]] = {}
        #: Shutdown began: no new subscriptions.
        self.closing = False
        #: When running requests are cut off with an error (set by begin_shutdown).
        self.shutdown_deadline = math.inf
        #: The cancel scopes of the requests whose handlers run now.
        self._running: set[trio.CancelScope] = set()
        self._idle: list[Connection] = []
        #: Where disconnect watchers run while the app runs (else each request has its own).
        self.watchers: trio.Nursery | None = None

    def begin_shutdown(self, deadline: float = math.inf) -> None:
        """End every open ``subscriptions/listen`` stream gracefully and refuse new ones;
        at ``deadline`` (Trio time) cancel the handlers still running, and answer their
        requests with an error saying the server is shutting down."""
        self.closing = True
        self.dispatcher.end_subscriptions()
        if deadline < self.shutdown_deadline:
            self.shutdown_deadline = deadline
            for scope in self._running:
                scope.deadline = min(scope.deadline, deadline)

    async def post(self, http: HttpRequest, message: Received, caller: str | None = None) -> None:
        """Answer one POST whose body was ``message``, from ``caller`` (see
        :func:`~._callers.caller_of`; it names the principal and the rate-limit bucket).
        Blocks until the answer was sent (for a subscription: until it ends), or the client
        disconnected."""
        if isinstance(message, rpc.JsonRpcRequest):
            await self._request(http, message, caller)
        elif isinstance(message, rpc.JsonRpcNotification):
            # This revision defines no client notifications over HTTP: accept and drop.
            await http.respond(202)
        elif isinstance(message, rpc.InvalidMessage):
            reply = message.reply
            if reply is None:
                await http.respond_error(400, ErrorCode.INVALID_REQUEST, "Invalid message")
            else:
                await http.respond_message(reply, 400)
        elif isinstance(message, rpc.Batch):
            await http.respond_error(
                400, ErrorCode.INVALID_REQUEST, "Invalid Request: batches are not supported"
            )
        else:
            await http.respond_error(
                400, ErrorCode.INVALID_REQUEST, "Invalid Request: clients send no responses"
            )

    async def _request(
        self, http: HttpRequest, request: rpc.JsonRpcRequest, caller: str | None
    ) -> None:
        problem = self._check_headers(http.headers, request)
        if problem is not None:
            await http.respond_error(
                400, problem.code, problem.message, id=request.id, data=problem.data
            )
            return
        if not http.accepts_json and not http.accepts_sse:
            await http.respond_error(
                406,
                ErrorCode.INVALID_REQUEST,
                "Not Acceptable: accept application/json or text/event-stream",
                id=request.id,
            )
            return
        if self.closing and request.method == "subscriptions/listen":
            await http.respond_error(
                503, ErrorCode.INVALID_REQUEST, "Service Unavailable: shutting down", id=request.id
            )
            return
        connection = self._connection()
        try:
            event = connection.receive(request)
            if type(event) is Reply:
                response = event.message
                status, headers = (
                    (200, ()) if type(response) is rpc.ResultResponse else _status(response)
                )
                await http.respond_message(response, status, headers=headers)
            elif type(event) is Dispatch:
                await self._dispatch(http, connection, event.request, caller)
            else:
                await http.respond_error(
                    400, ErrorCode.INVALID_REQUEST, "Invalid Request", id=request.id
                )
        finally:
            self._release(connection)

    def _connection(self) -> Connection:
        """A protocol connection for one request. A stateless request leaves nothing in
        it, so connections are reused (one per request in flight): their caches of
        refusals, envelopes and server info stay warm."""
        capabilities = self.server.capabilities()
        idle = self._idle
        while idle:
            connection = idle.pop()
            if connection.capabilities is capabilities:
                return connection
        return self.server.connection()

    def _release(self, connection: Connection) -> None:
        if connection.in_flight == 0 and len(self._idle) < _IDLE_CONNECTIONS:
            self._idle.append(connection)

    async def _dispatch(
        self,
        http: HttpRequest,
        connection: Connection,
        request: InboundRequest,
        caller: str | None,
    ) -> None:
        admission = self.admission
        if admission.waiting >= admission.backlog and admission.slots.value == 0:
            # The session would refuse it as busy (nothing yields from here to there); a
            # refusal of our own says it with the status an HTTP client retries on.
            await http.respond_error(
                503,
                ErrorCode.INTERNAL_ERROR,
                "Service Unavailable: too many requests in flight; try again later",
                id=request.id,
                headers=[(b"retry-after", b"%d" % BUSY_RETRY_AFTER)],
            )
            return
        writer = ResponseWriter(http.send, json_ok=http.accepts_json, sse_ok=http.accepts_sse)
        handler = self.dispatcher.handle
        if caller is None:
            caller = caller_of(http.scope, self.principal)
        principal = principal_of(caller)
        if principal is not None:
            handler = partial(handler, principal=principal, caller=caller)
        elif self._rate_limited:
            handler = partial(handler, caller=caller)
        immediate: Callable[[Session, InboundRequest], Any] = self.dispatcher.immediate
        # (The deadline is set here, not later: Trio's deadline setter is not free.)
        scope = trio.CancelScope(deadline=self.shutdown_deadline)
        watchers = self.watchers
        if watchers is not None and request.method != "subscriptions/listen":
            dispatcher_immediate = immediate

            def immediate(session: Session, request: InboundRequest) -> Any:
                # Called once, before the session waits for anything. A call answered right
                # here (a plain-function tool) never yields, so nothing can cancel it and
                # the disconnect watcher (a task, woken again when the exchange ends) is
                # not needed; a request that gets a handler gets the watcher first.
                answer = dispatcher_immediate(session, request)
                if answer is LATER:
                    # Cheaper than a nursery of our own per request: the watcher ends by
                    # itself once the response is complete (the server reports the
                    # exchange over with http.disconnect), and it belongs to the app's
                    # nursery meanwhile.
                    watchers.start_soon(_cancel_request_on_disconnect, http, scope, writer, request)
                return answer

        session = Session(
            _ExchangeStream(writer, request.id),
            connection,
            handler=handler,
            immediate=immediate,
            admission=self.admission,
            **self._session_options,
        )
        if request.method == "subscriptions/listen":
            await self._listen(http, session, request, writer)
            return
        running = self._running
        running.add(scope)
        try:
            with scope:
                if watchers is not None:
                    await session.handle_request(request)
                    if writer.state != "done":  # (else the answer's writes were the checkpoints)
                        await self._finish(writer, request)
                    return
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(_cancel_request_on_disconnect, http, scope, writer, request)
                    await session.handle_request(request)
                    await self._finish(writer, request)
                    # The watcher ends by itself, as above; the deadline is for servers that
                    # never report a finished exchange.
                    nursery.cancel_scope.deadline = trio.current_time() + _REPORT_DEADLINE
        finally:
            running.discard(scope)
        if scope.cancelled_caught and not request.cancelled and writer.state != "done":
            await _answer_shutting_down(writer, request)

    async def _listen(
        self, http: HttpRequest, session: Session, request: InboundRequest, writer: ResponseWriter
    ) -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(cancel_on_disconnect, http, nursery.cancel_scope, writer)
            nursery.start_soon(keep_alive, writer, self.keepalive_interval)
            await session.handle_request(request)
            await self._finish(writer, request)
            nursery.cancel_scope.cancel()

    @staticmethod
    async def _finish(writer: ResponseWriter, request: InboundRequest) -> None:
        """Complete the response if the handler left it open."""
        if writer.state == "sse":
            await writer.close()
        elif writer.state == "new" and not request.cancelled:
            # The handler answered nothing, which the session never does: do not leave the
            # client hanging. (Cancelled by a disconnect: nobody to answer.)
            error = McpError("Internal error", code=ErrorCode.INTERNAL_ERROR).error
            await writer.json(rpc.dumps(rpc.ErrorResponse(request.id, error)), 500)
        else:
            await trio.lowlevel.checkpoint()

    # -- header validation ------------------------------------------------------------------

    def _check_headers(
        self, headers: dict[str, str], request: rpc.JsonRpcRequest
    ) -> McpError | None:
        """The error for headers that disagree with the body, or ``None``."""
        params = request.params
        meta = params.get("_meta") if params is not None else None
        version = meta.get(PROTOCOL_VERSION) if type(meta) is dict else None
        if type(version) is not str or type(meta.get(CLIENT_CAPABILITIES)) is not dict:  # type: ignore[union-attr]
            return McpError(
                f"Invalid params: _meta must carry {PROTOCOL_VERSION!r} and "
                f"{CLIENT_CAPABILITIES!r}",
                code=ErrorCode.INVALID_PARAMS,
            )
        header_version = headers.get(MCP_PROTOCOL_VERSION)
        if header_version is None:
            return _mismatch("the MCP-Protocol-Version header is required")
        if header_version.strip() != version:
            return _mismatch(
                f"MCP-Protocol-Version header {header_version!r} does not match the body's "
                f"{version!r}"
            )
        if version not in self.versions:
            return UnsupportedProtocolVersion(supported=list(self.versions), requested=version)
        method = headers.get(MCP_METHOD)
        if method is None:
            return _mismatch("the Mcp-Method header is required")
        if method.strip() != request.method:
            return _mismatch(
                f"Mcp-Method header {method!r} does not match the body's {request.method!r}"
            )
        if request.method in _NAMED_METHODS:
            expected = name_source(request.method, params)
            if expected is not None:
                name = headers.get(MCP_NAME)
                if name is None:
                    return _mismatch("the Mcp-Name header is required")
                try:
                    decoded = decode_value(name)
                except ValueError as exc:
                    return _mismatch(f"Mcp-Name header: {exc}")
                if decoded != expected:
                    return _mismatch(
                        f"Mcp-Name header {decoded!r} does not match the body's {expected!r}"
                    )
            if request.method == "tools/call":
                return self._check_param_headers(headers, params)  # type: ignore[arg-type]
        return None

    def _params_of(self, spec: ToolSpec) -> list[HeaderParam]:
        found = self._header_params.get(spec)
        if found is None:
            try:
                found = header_params(spec.tool.input_schema)
            except ValueError as exc:
                log.warning("tool %r: ignoring its x-mcp-header annotations: %s", spec.name, exc)
                found = []
            if len(self._header_params) > 1024:
                self._header_params.clear()
            self._header_params[spec] = found
        return found

    def _check_param_headers(
        self, headers: dict[str, str], params: dict[str, Any]
    ) -> McpError | None:
        name = name_source("tools/call", params)  # a string, or None
        spec = self._internals.tools.get(name) if name is not None else None
        if spec is None:
            return None  # the call fails on its own
        arguments = params.get("arguments")
        for param in self._params_of(spec):
            value = param.value_in(arguments)
            header = headers.get(param.header)
            if value is None:
                continue
            if header is None:
                return _mismatch(f"the Mcp-Param-{param.name} header is required")
            try:
                decoded = decode_value(header)
            except ValueError as exc:
                return _mismatch(f"Mcp-Param-{param.name} header: {exc}")
            if not _same_value(param.type, decoded, value):
                return _mismatch(
                    f"Mcp-Param-{param.name} header {decoded!r} does not match the argument"
                )
        return None


async def _answer_shutting_down(writer: ResponseWriter, request: InboundRequest) -> None:
    """Answer ``request``, whose handler the shutdown deadline cancelled: 503 with a
    JSON-RPC error, or that error as the last event of its SSE stream."""
    error = McpError(SHUTTING_DOWN, code=ErrorCode.INTERNAL_ERROR).error
    data = rpc.dumps(rpc.ErrorResponse(request.id, error))
    if writer.state == "new" and writer.json_ok:
        await writer.json(data, 503, headers=[(b"connection", b"close")])
    else:
        await writer.event(data)
        await writer.close()


async def _cancel_request_on_disconnect(
    http: HttpRequest, scope: trio.CancelScope, writer: ResponseWriter, request: InboundRequest
) -> None:
    """:func:`cancel_on_disconnect`, and mark ``request`` cancelled when it cancels: in this
    revision the disconnect *is* the client's cancellation (handlers read it as
    ``ctx.cancelled``)."""
    await cancel_on_disconnect(http, scope, writer)
    if scope.cancel_called:
        request.cancelled = True


def _same_value(kind: str, text: str, value: Any) -> bool:
    if kind == "integer" and not isinstance(value, bool) and isinstance(value, (int, float)):
        try:
            return float(text) == float(value)
        except ValueError:
            return False
    try:
        expected = param_value_text(value)
    except ValueError:
        return True  # the wrong type: argument validation rejects the call
    return expected == text
