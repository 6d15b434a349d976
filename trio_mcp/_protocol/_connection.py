"""The sans-IO connection: one side of an MCP conversation, with no I/O and no Trio.

Theory of operation
-------------------

A :class:`Connection` is fed JSON-RPC messages as they arrive
(:meth:`~Connection.receive`) and asked for the messages to send
(:meth:`~Connection.send_request`, :meth:`~Connection.send_notification`,
:meth:`~Connection.respond`, ...). It returns plain data describing what
happened; the Trio session engine acts on it. Because nothing here blocks,
Hypothesis state machines drive it at full speed.

It keeps:

* the lifecycle phase (see :mod:`._lifecycle`) and the negotiated revision;
* both sides' capabilities, checked before anything is sent (we never send
  what the peer did not declare) and on arrival (a peer gets -32601 for a
  method we did not declare);
* the outstanding-request table: ids we allocated and not yet saw answered
  (ids are unique among outstanding requests; a response to an unknown or
  already-answered id is dropped and counted, never an error);
* the progress-token table, so progress is routed to the request it
  belongs to and dropped after that request ends;
* the in-flight inbound requests, so a cancellation finds its handler and a
  cancelled request is never answered.

It answers by itself what needs no application: ``initialize``, ``ping``,
``logging/setLevel``, ``server/discover``.

Local misuse (sending what the peer did not declare, a request before the
handshake) raises :class:`~trio_mcp.McpError` at the call site; what the
*peer* got wrong comes back as a :class:`Reply` carrying the JSON-RPC error to
send, and the conversation goes on.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any, Final, Literal, TypeAlias, TypeGuard, TypeVar, overload

import attrs

from .. import _jsonrpc as rpc
from .._errors import (
    ErrorCode,
    McpError,
    ProtocolError,
    UnsupportedProtocolVersion,
)
from .._types._base import (
    LOGGING_LEVELS,
    EmptyResult,
    Implementation,
    LoggingLevel,
    ProgressToken,
    RequestId,
)
from .._types._capabilities import ClientCapabilities, ServerCapabilities
from .._types._converter import (
    StructureError,
    converter,
    converter_for,
    explain,
    structure,
    structure_hook,
    unstructure_hook,
)
from .._types._lifecycle import DiscoverResult, InitializeRequestParams, InitializeResult
from .._types._methods import METHODS, MethodSpec, has_capability, method_spec
from .._types._mrtr import InputRequiredResult
from .._types._notifications import ProgressNotificationParams
from .._versions import (
    FIRST_MODERN_VERSION,
    LATEST_LEGACY_VERSION,
    LEGACY_VERSIONS,
    MODERN_VERSIONS,
    SUPPORTED_VERSIONS,
    allows_batches,
)
from ._envelope import (
    CLIENT_CAPABILITIES,
    CLIENT_INFO,
    LOG_LEVEL,
    PROGRESS_TOKEN,
    PROTOCOL_VERSION,
    SERVER_INFO,
    Envelope,
    declares_modern_version,
    read_envelope,
    write_envelope,
)
from ._events import (
    CancelRequested,
    Dispatch,
    Dropped,
    InboundRequest,
    NotificationReceived,
    OutboundRequest,
    PeerCancelled,
    ProgressReceived,
    ReceiveEvent,
    Reply,
    ResponseReceived,
    Statistics,
)
from ._lifecycle import Event, Phase, Side, accepts, may_send, next_phase

__all__ = ["Connection"]

Capabilities: TypeAlias = ClientCapabilities | ServerCapabilities
_R = TypeVar("_R")
_EMPTY_CLIENT_CAPABILITIES = ClientCapabilities()


def _error(code: int, message: str, data: Any = None) -> McpError:
    return McpError(message, code=code, data=data)


def _looks_modern(method: str, params: dict[str, Any] | None) -> bool:
    """Whether a request without a protocol version still shows it means the modern era:
    another envelope field in ``_meta``, or a method no legacy revision has."""
    meta = params.get("_meta") if params is not None else None
    if type(meta) is dict and any(key in meta for key in _ENVELOPE_FIELDS):
        return True
    spec = METHODS.get(method)
    return spec is not None and spec.since >= FIRST_MODERN_VERSION


_ENVELOPE_FIELDS: Final = (CLIENT_CAPABILITIES, CLIENT_INFO, LOG_LEVEL)


# --- The connection ----------------------------------------------------------------------------


class Connection:
    """One side of an MCP conversation, without I/O.

    Args:
        role: ``"client"`` or ``"server"``.
        info: our name and version.
        capabilities: what we declare.
        instructions: (server) guidance for the model, sent in the handshake.
        versions: the revisions we accept, newest first.
        cache_ttl_ms, cache_scope: (server) caching hints for ``server/discover``.
        modern_version: (client) speak this modern revision from the start,
            with no handshake.
    """

    def __init__(
        self,
        role: Side,
        *,
        info: Implementation,
        capabilities: Capabilities | None = None,
        instructions: str | None = None,
        versions: Sequence[str] = SUPPORTED_VERSIONS,
        cache_ttl_ms: int = 0,
        cache_scope: Literal["public", "private"] = "public",
        modern_version: str | None = None,
    ) -> None:
        unknown = [v for v in versions if v not in SUPPORTED_VERSIONS]
        if unknown:
            raise ValueError(
                f"unsupported protocol versions {unknown}; we speak {SUPPORTED_VERSIONS}"
            )
        self.role: Side = role
        self.info = info
        if capabilities is None:
            capabilities = ServerCapabilities() if role == "server" else ClientCapabilities()
        self.capabilities: Capabilities = capabilities
        self.instructions = instructions
        self.versions = tuple(versions)
        self.modern_versions = tuple(v for v in self.versions if v in MODERN_VERSIONS)
        self.legacy_versions = tuple(v for v in self.versions if v in LEGACY_VERSIONS)
        self.cache_ttl_ms = cache_ttl_ms
        self.cache_scope = cache_scope
        self.phase = Phase.NEW
        #: The negotiated legacy revision, or the modern revision a client speaks.
        self.version: str | None = None
        self.peer_info: Implementation | None = None
        self._peer_capabilities: Capabilities | None = None
        self.peer_instructions: str | None = None
        #: Legacy ``logging/setLevel``; ``None`` means the client never asked.
        self.log_level: LoggingLevel | None = None
        #: (client, modern era) the ``logLevel`` every request asks for.
        self.request_log_level: LoggingLevel | None = None
        self._ids = itertools.count(1)
        self._outbound: dict[RequestId, OutboundRequest] = {}
        self._progress: dict[ProgressToken, OutboundRequest] = {}
        self._inbound: dict[RequestId, InboundRequest] = {}
        self._stats = Statistics()
        # What we write into every modern envelope (client: the _meta entries, by version and
        # log level) and every modern result (server: our serverInfo, by version).
        self._envelope_cache: dict[tuple[str, str | None], dict[str, Any]] = {}
        self._info_cache: dict[str, dict[str, Any]] = {}
        self._routes: dict[tuple[str, str], _Route] = {}
        #: Why we may not send (method, revision), for the current peer capabilities.
        self._send_problems: dict[tuple[str, str], str | None] = {}
        if modern_version is not None:
            self.use_modern(modern_version)

    # -- state ------------------------------------------------------------------------------

    def statistics(self) -> Statistics:
        return attrs.evolve(self._stats)

    def count_progress_dropped(self, count: int) -> None:
        """Count ``count`` progress updates dropped after this connection delivered them
        (a session's buffer for a slow reader overflowed), with those it dropped itself."""
        self._stats.progress_dropped += count

    @property
    def peer_capabilities(self) -> Capabilities | None:
        """What the peer declared (``None`` until we know)."""
        return self._peer_capabilities

    @peer_capabilities.setter
    def peer_capabilities(self, capabilities: Capabilities | None) -> None:
        self._peer_capabilities = capabilities
        self._send_problems.clear()

    @property
    def outstanding(self) -> int:
        """How many of our requests await an answer."""
        return len(self._outbound)

    @property
    def in_flight(self) -> int:
        """How many of the peer's requests we are handling."""
        return len(self._inbound)

    def in_flight_ids(self) -> list[RequestId]:
        """The ids of the peer's requests we are handling (not yet answered)."""
        return list(self._inbound)

    @property
    def allows_batches(self) -> bool:
        return self.phase is Phase.OPERATING and allows_batches(self.version or "")

    def _transition(self, event: Event) -> None:
        after = next_phase(self.role, self.phase, event)
        if after is None:
            raise ProtocolError(f"{event.value!r} is not allowed in phase {self.phase.value!r}")
        self.phase = after

    def close(self) -> list[OutboundRequest]:
        """Close: the outstanding requests are returned (their waiters should fail) and
        forgotten; the peer's requests in flight are abandoned (:meth:`respond` gives
        ``None`` for them). Nothing more is sent, and what still arrives is dropped."""
        pending = list(self._outbound.values())
        self._outbound.clear()
        self._progress.clear()
        for request in self._inbound.values():
            request.finished = True
        self._inbound.clear()
        self.phase = Phase.CLOSED
        return pending

    def _write_version(self) -> str:
        return self.version or LATEST_LEGACY_VERSION

    # -- client: choosing the era -----------------------------------------------------------

    def use_modern(self, version: str) -> None:
        """(client) Speak modern revision ``version``: no handshake, an envelope on each request."""
        if version not in self.modern_versions:
            raise ValueError(
                f"{version!r} is not a modern revision we speak ({self.modern_versions})"
            )
        self._transition(Event.MODERN_REQUEST)
        self.version = version

    def envelope_params(self, params: dict[str, Any] | None, version: str) -> dict[str, Any]:
        """(client) ``params`` with our modern envelope for ``version`` (a new dict; the
        caller's own ``_meta`` entries are kept, ours win, except the client capabilities
        when the caller gives them for this request)."""
        key = (version, self.request_log_level)
        envelope = self._envelope_cache.get(key)
        if envelope is None:
            conv = converter_for(version)
            envelope = write_envelope(
                None,
                protocol_version=version,
                client_capabilities=conv.unstructure(self.capabilities),
                client_info=conv.unstructure(self.info),
                log_level=self.request_log_level,
            )["_meta"]
            self._envelope_cache[key] = envelope
        out = dict(params) if params else {}
        meta = out.get("_meta")
        if not meta:
            out["_meta"] = dict(envelope)
        else:
            merged = {**meta, **envelope}
            # Capabilities the caller declares for this one request (an extension it opts
            # into per request) are kept.
            if CLIENT_CAPABILITIES in meta:
                merged[CLIENT_CAPABILITIES] = meta[CLIENT_CAPABILITIES]
            out["_meta"] = merged
        return out

    def initialize_request(
        self, version: str | None = None
    ) -> tuple[OutboundRequest, rpc.JsonRpcRequest]:
        """(client) The ``initialize`` request for legacy revision ``version`` (our newest by
        default). Answer it with :meth:`complete_initialize`.

        Raises:
            ValueError: ``version`` is not a legacy revision we speak (or we speak none).
            ProtocolError: the handshake was already started.
        """
        if version is None:
            if not self.legacy_versions:
                raise ValueError(
                    f"we speak no legacy revision ({self.versions}): there is no initialize "
                    "handshake to start"
                )
            version = self.legacy_versions[0]
        if version not in self.legacy_versions:
            raise ValueError(f"{version!r} is not a legacy revision we speak")
        conv = converter_for(version)
        params = conv.unstructure(
            InitializeRequestParams(
                protocol_version=version,
                capabilities=self.capabilities,  # type: ignore[arg-type]
                client_info=self.info,
            )
        )
        self._transition(Event.SEND_INITIALIZE)
        return self._register(
            "initialize",
            params,
            version,
            METHODS.get("initialize"),
            progress_token=None,
            cancellable=False,
        )

    def complete_initialize(
        self, response: rpc.ResultResponse | rpc.ErrorResponse | rpc.InvalidMessage
    ) -> tuple[InitializeResult, rpc.JsonRpcNotification]:
        """(client) Take the answer to ``initialize``: returns the result and the
        ``notifications/initialized`` to send.

        Raises:
            McpError: the server answered with an error (the connection is back in
                phase ``NEW``).
            UnsupportedProtocolVersion: the server chose a revision we do not speak.
            ProtocolError: the answer is malformed.
        """
        if not isinstance(response, rpc.ResultResponse):
            self._transition(Event.RECEIVE_INITIALIZE_ERROR)
            if isinstance(response, rpc.ErrorResponse):
                raise McpError.from_error(response.error)
            raise ProtocolError(f"malformed answer to initialize: {response.reason}")
        try:
            result = structure(response.result, InitializeResult)
        except StructureError as exc:
            self._transition(Event.RECEIVE_INITIALIZE_ERROR)
            raise ProtocolError(f"malformed initialize result: {exc}") from None
        if result.protocol_version not in self.legacy_versions:
            self._transition(Event.RECEIVE_INITIALIZE_ERROR)
            raise UnsupportedProtocolVersion(
                f"the server chose protocol version {result.protocol_version!r}, "
                "which we do not speak",
                supported=list(self.legacy_versions),
                requested=result.protocol_version,
            )
        self._transition(Event.RECEIVE_INITIALIZE_RESULT)
        self.version = result.protocol_version
        self.peer_info = result.server_info
        self.peer_capabilities = result.capabilities
        self.peer_instructions = result.instructions
        self._stats.notifications_sent += 1
        return result, rpc.JsonRpcNotification("notifications/initialized", None)

    def record_discovery(self, result: DiscoverResult) -> None:
        """(client) Remember what ``server/discover`` said about a modern server."""
        self.peer_capabilities = result.capabilities
        self.peer_instructions = result.instructions
        meta = result.meta or {}
        raw_info = meta.get(SERVER_INFO)
        if isinstance(raw_info, dict):
            try:
                self.peer_info = structure(raw_info, Implementation)
            except StructureError:
                pass

    # -- sending ----------------------------------------------------------------------------

    def _check_can_send(self, method: str, spec: MethodSpec | None, version: str) -> None:
        if self.phase is not Phase.OPERATING and not may_send(self.role, self.phase, method):
            raise _error(
                ErrorCode.INVALID_REQUEST,
                f"cannot send {method!r} in phase {self.phase.value!r}"
                + (" (initialize first)" if self.phase is Phase.NEW else ""),
            )
        if spec is None:
            return
        key = (method, version)
        try:
            problem = self._send_problems[key]
        except KeyError:
            problem = self._send_problems[key] = self._send_problem(method, spec, version)
        if problem is not None:
            raise _error(ErrorCode.METHOD_NOT_FOUND, problem)

    def _send_problem(self, method: str, spec: MethodSpec, version: str) -> str | None:
        if spec.sender not in (self.role, "both"):
            return f"a {self.role} does not send {method!r}"
        if not spec.in_version(version):
            return f"protocol version {version} has no method {method!r}"
        if (
            spec.capability
            and version >= spec.capability_since
            and self.peer_capabilities is not None
            and not has_capability(self.peer_capabilities, spec.capability)
        ):
            peer = "server" if self.role == "client" else "client"
            return (
                f"the {peer} did not declare the {'.'.join(spec.capability)!r} capability "
                f"needed for {method!r}"
            )
        return None

    def _register(
        self,
        method: str,
        params: dict[str, Any] | None,
        version: str,
        spec: MethodSpec | None,
        *,
        progress_token: ProgressToken | None,
        cancellable: bool = True,
    ) -> tuple[OutboundRequest, rpc.JsonRpcRequest]:
        id = next(self._ids)
        if progress_token is not None:
            progress_token = id if progress_token is True else progress_token
            if progress_token in self._progress:
                raise ValueError(f"progress token {progress_token!r} is already in use")
            params = dict(params) if params else {}
            meta = dict(params.get("_meta") or ())
            meta[PROGRESS_TOKEN] = progress_token
            params["_meta"] = meta
        pending = OutboundRequest(
            id=id,
            method=method,
            spec=spec,
            version=version,
            progress_token=progress_token,
            cancellable=cancellable and (spec is None or spec.cancellable),
        )
        self._outbound[id] = pending
        if progress_token is not None:
            self._progress[progress_token] = pending
        self._stats.requests_sent += 1
        return pending, rpc.JsonRpcRequest(id, method, params)

    def send_request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        progress_token: ProgressToken | bool | None = None,
    ) -> tuple[OutboundRequest, rpc.JsonRpcRequest]:
        """Start a request: check we may send it, allocate its id, add the modern envelope.

        ``progress_token=True`` asks for progress with the request id as the token.

        Raises:
            McpError: we may not send this now (phase, era, or the peer's capabilities), or
                it is ``initialize``, which only :meth:`initialize_request` sends.
        """
        if method == "initialize":
            raise _error(
                ErrorCode.INVALID_REQUEST,
                "initialize drives the lifecycle: use initialize_request() and "
                "complete_initialize()",
            )
        version = self._write_version()
        probe = (
            self.phase is Phase.NEW
            and self.role == "client"
            and method == "server/discover"
            and self.modern_versions
        )
        if probe:
            # The era probe: it speaks our newest modern revision before we know the era.
            version = self.modern_versions[0]
        spec = method_spec(method, version)
        if not probe:
            self._check_can_send(method, spec, version)
        if self.role == "server" and self.phase is Phase.MODERN:
            raise _error(
                ErrorCode.INVALID_REQUEST,
                "modern servers send no requests; return an InputRequiredResult instead",
            )
        if version in MODERN_VERSIONS and self.role == "client":
            params = self.envelope_params(params, version)
        return self._register(method, params, version, spec, progress_token=progress_token)

    def cancel(
        self, request: OutboundRequest, reason: str | None = None
    ) -> rpc.JsonRpcNotification | None:
        """Give up on ``request``: it is forgotten (a late answer will be dropped). Returns the
        ``notifications/cancelled`` to send, or ``None`` if it may not be cancelled
        (``initialize``) or was already answered."""
        if self._outbound.pop(request.id, None) is None:
            return None
        if request.progress_token is not None:
            self._progress.pop(request.progress_token, None)
        if not request.cancellable or self.phase is Phase.CLOSED:
            return None
        params: dict[str, Any] = {"requestId": request.id}
        if reason is not None:
            params["reason"] = reason
        self._stats.notifications_sent += 1
        return rpc.JsonRpcNotification("notifications/cancelled", params)

    def forget(self, request: OutboundRequest) -> None:
        """Forget ``request`` without telling the peer (the connection ended under it)."""
        if self._outbound.pop(request.id, None) is not None and request.progress_token is not None:
            self._progress.pop(request.progress_token, None)

    def send_notification(
        self, method: str, params: dict[str, Any] | None = None, *, version: str | None = None
    ) -> rpc.JsonRpcNotification:
        """Check we may send notification ``method`` now and build it.

        Raises:
            McpError: not allowed in this phase, revision, or by our declared capabilities.
        """
        spec = METHODS.get(method)
        version = version or self._write_version()
        if not may_send(self.role, self.phase, method):
            raise _error(
                ErrorCode.INVALID_REQUEST, f"cannot send {method!r} in phase {self.phase.value!r}"
            )
        if spec is not None:
            if spec.sender not in (self.role, "both"):
                raise _error(ErrorCode.METHOD_NOT_FOUND, f"a {self.role} does not send {method!r}")
            if not spec.in_version(version):
                raise _error(
                    ErrorCode.METHOD_NOT_FOUND, f"protocol version {version} has no {method!r}"
                )
            # Notifications need *our* capability (listChanged, logging), declared to the peer.
            if spec.capability and not has_capability(self.capabilities, spec.capability):
                raise _error(
                    ErrorCode.METHOD_NOT_FOUND,
                    f"{method!r} needs the {'.'.join(spec.capability)!r} capability, which we did "
                    "not declare",
                )
        self._stats.notifications_sent += 1
        return rpc.JsonRpcNotification(method, params)

    # -- answering the peer's requests ------------------------------------------------------

    def respond(self, request: InboundRequest, result: Any) -> rpc.ResultResponse | None:
        """The answer to ``request`` (a result model or a plain dict), or ``None`` if the request
        was cancelled or already answered: a cancelled request gets no answer.

        Raises:
            TypeError: ``result`` is not a JSON object (nor a model that writes as one). The
                request stays unanswered, so the caller can still answer it with
                :meth:`respond_error`.
        """
        if not self._live(request):
            return None
        if request.cancelled:
            self.abandon(request)
            return None
        if type(result) is dict:
            data = result
        else:
            data = unstructure_hook(request.version, type(result))(result)
            if type(data) is not dict:
                raise TypeError(f"a result must be a JSON object, not {type(data).__name__}")
        if request.envelope is not None:
            meta = data.get("_meta")
            if meta:
                meta = dict(meta)  # a copy: it may be the model's own, or shared
                meta.setdefault(SERVER_INFO, self._info_for(request.version))
            else:
                meta = {SERVER_INFO: self._info_for(request.version)}
            if type(result) is dict:
                data = {**data, "_meta": meta}  # the handler's dict may be shared
            else:
                data["_meta"] = meta  # written for this answer alone
        self.abandon(request)
        return rpc.ResultResponse(request.id, data)

    def respond_error(self, request: InboundRequest, error: McpError) -> rpc.ErrorResponse | None:
        """The error answer to ``request``, or ``None`` if it was cancelled or already answered."""
        if not self._live(request):
            return None
        self.abandon(request)
        if request.cancelled:
            return None
        self._stats.errors_replied += 1
        return rpc.ErrorResponse(request.id, error.error)

    def _live(self, request: InboundRequest) -> bool:
        return not request.finished and self._inbound.get(request.id) is request

    def abandon(self, request: InboundRequest) -> None:
        """Forget ``request`` without answering (its handler was cancelled)."""
        if self._inbound.get(request.id) is request:
            del self._inbound[request.id]
        request.finished = True

    def _info_for(self, version: str) -> dict[str, Any]:
        cached = self._info_cache.get(version)
        if cached is None:
            cached = self._info_cache[version] = converter_for(version).unstructure(self.info)
        return cached

    # -- receiving --------------------------------------------------------------------------

    def receive(self, message: rpc.Message | rpc.InvalidMessage) -> ReceiveEvent:
        """Take one message from the peer and say what to do about it."""
        if isinstance(message, rpc.JsonRpcRequest):
            return self._receive_request(message)
        if isinstance(message, rpc.JsonRpcNotification):
            return self._receive_notification(message)
        if isinstance(message, (rpc.ResultResponse, rpc.ErrorResponse)):
            return self._receive_response(message)
        assert isinstance(message, rpc.InvalidMessage)
        self._stats.invalid_messages += 1
        if message.response_id is not None and message.response_id in self._outbound:
            return self._receive_response(message)
        if message.reply is not None:
            self._stats.errors_replied += 1
            return Reply(message.reply)
        return Dropped(message.reason)

    def _receive_response(
        self, message: rpc.ResultResponse | rpc.ErrorResponse | rpc.InvalidMessage
    ) -> ReceiveEvent:
        id = message.response_id if isinstance(message, rpc.InvalidMessage) else message.id
        pending = self._outbound.pop(id, None) if id is not None else None
        if pending is None:
            self._stats.responses_dropped += 1
            return Dropped(f"response to unknown or finished request {id!r}")
        if pending.progress_token is not None:
            self._progress.pop(pending.progress_token, None)
        return ResponseReceived(pending, message)

    def _reply_error(self, id: RequestId, error: McpError) -> Reply:
        self._stats.errors_replied += 1
        return Reply(rpc.ErrorResponse(id, error.error))

    def _receive_request(self, message: rpc.JsonRpcRequest) -> ReceiveEvent:
        self._stats.requests_received += 1
        id = message.id
        method = message.method
        params = message.params
        phase = self.phase
        if phase is Phase.CLOSED:
            return Dropped("request after close")
        if id in self._inbound:
            return self._reply_error(
                id, _error(ErrorCode.INVALID_REQUEST, f"request id {id!r} is already in use")
            )
        envelope: Envelope | None = None
        # Which era does this request speak? A server in NEW takes a request as modern when
        # it names a protocol version in _meta, or shows any other sign of the modern era
        # (an envelope field, a method only modern revisions have), or when the server
        # speaks no legacy revision. A request with no such sign (a legacy client that did
        # not initialize first) gets the legacy error, as a legacy server would give it.
        if self.role == "server" and (
            phase is Phase.MODERN
            or (
                phase is Phase.NEW
                and self.modern_versions
                and (
                    declares_modern_version(params)
                    or (
                        method not in ("initialize", "ping")
                        and (not self.legacy_versions or _looks_modern(method, params))
                    )
                )
            )
        ):
            try:
                envelope = read_envelope(params, self.modern_versions)
            except McpError as exc:
                return self._reply_error(id, exc)
            version = envelope.protocol_version
            if phase is Phase.NEW:
                self._transition(Event.MODERN_REQUEST)
        else:
            version = self.version or LATEST_LEGACY_VERSION
            if phase is not Phase.OPERATING and not accepts(self.role, phase, method):
                hint = ""
                if phase is Phase.NEW and self.modern_versions:
                    hint = f" (or name the protocol version in _meta[{PROTOCOL_VERSION!r}])"
                return self._reply_error(
                    id,
                    _error(ErrorCode.INVALID_REQUEST, f"{method!r} before initialization{hint}"),
                )
        route = self._routes.get((method, version))
        if route is None:
            route = self._route(method, version)
        refusal, spec, read_params, params_type = route
        if refusal is not None:
            return self._reply_error(id, refusal)
        if method == "initialize" and self.role == "server":
            return self._answer_initialize(message)
        token = None
        if params:
            meta = params.get("_meta")
            if type(meta) is dict:
                token = meta.get(PROGRESS_TOKEN)
                if token is not None and type(token) is not str and type(token) is not int:
                    return self._reply_error(
                        id,
                        _error(
                            ErrorCode.INVALID_PARAMS, "progressToken must be a string or an integer"
                        ),
                    )
        request = InboundRequest(
            id=id,
            method=method,
            read_params=read_params,
            params_type=params_type,
            raw_params=params,
            spec=spec,
            version=version,
            envelope=envelope,
            progress_token=token,
        )
        if method in _BUILTIN:
            try:
                answer = self._answer_builtin(request)
            except McpError as exc:  # params that do not fit
                return self._reply_error(id, exc)
            if answer is not None:
                return answer
        self._inbound[id] = request
        return Dispatch(request)

    def _route(self, method: str, version: str) -> _Route:
        """How to take ``method`` in ``version``: our refusal (if any), its spec, and the
        function that reads its params. Cached: it depends only on these two and on our
        capabilities, which are fixed."""
        spec = method_spec(method, version)
        refusal = None if spec is None else self._refuse(method, spec, version)
        params_type = spec.params if spec is not None else None
        read = structure_hook(params_type) if params_type is not None else None
        route = self._routes[(method, version)] = (refusal, spec, read, params_type)
        return route

    def _refuse(self, method: str, spec: MethodSpec, version: str) -> McpError | None:
        """Why we refuse a known method from the peer, if we do."""
        if spec.sender == self.role or not spec.is_request:
            return _error(ErrorCode.METHOD_NOT_FOUND, f"Method not found: {method}")
        if not spec.in_version(version):
            return _error(
                ErrorCode.METHOD_NOT_FOUND,
                f"Method not found: {method} (not in protocol version {version})",
            )
        if (
            spec.capability
            and version >= spec.capability_since
            and not has_capability(self.capabilities, spec.capability)
        ):
            return _error(ErrorCode.METHOD_NOT_FOUND, f"Method not found: {method}")
        return None

    def _answer_initialize(self, message: rpc.JsonRpcRequest) -> ReceiveEvent:
        if self.phase is not Phase.NEW:
            return self._reply_error(
                message.id, _error(ErrorCode.INVALID_REQUEST, "initialize was already received")
            )
        try:
            params = structure(
                message.params if message.params is not None else {}, InitializeRequestParams
            )
        except StructureError as exc:
            return self._reply_error(
                message.id,
                _error(ErrorCode.INVALID_PARAMS, f"Invalid params for initialize: {exc}"),
            )
        if not self.legacy_versions:
            return self._reply_error(
                message.id,
                _error(
                    ErrorCode.INVALID_REQUEST,
                    "this server speaks only protocol versions "
                    + ", ".join(self.modern_versions)
                    + " (no initialize handshake)",
                    {"supported": list(self.modern_versions), "requested": params.protocol_version},
                ),
            )
        requested = params.protocol_version
        version = requested if requested in self.legacy_versions else self.legacy_versions[0]
        self._transition(Event.RECEIVE_INITIALIZE)
        self.version = version
        self.peer_info = params.client_info
        self.peer_capabilities = _as_of(params.capabilities, version)
        result = InitializeResult(
            protocol_version=version,
            capabilities=self.capabilities,  # type: ignore[arg-type]
            server_info=self.info,
            instructions=self.instructions,
        )
        return Reply(rpc.ResultResponse(message.id, converter_for(version).unstructure(result)))

    def _answer_builtin(self, request: InboundRequest) -> Reply | None:
        method = request.method
        request.params  # noqa: B018 - read them: malformed params get -32602 here
        if method == "ping":
            return Reply(rpc.ResultResponse(request.id, {}))
        if method == "logging/setLevel" and self.role == "server":
            self.log_level = request.params.level
            return Reply(rpc.ResultResponse(request.id, {}))
        if method == "server/discover" and self.role == "server":
            result = DiscoverResult(
                supported_versions=list(self.modern_versions),
                capabilities=self.capabilities,  # type: ignore[arg-type]
                instructions=self.instructions,
                ttl_ms=self.cache_ttl_ms,
                cache_scope=self.cache_scope,
            )
            self._inbound[request.id] = request
            response = self.respond(request, result)
            assert response is not None
            return Reply(response)
        return None

    def _receive_notification(self, message: rpc.JsonRpcNotification) -> ReceiveEvent:
        self._stats.notifications_received += 1
        if self.phase is Phase.CLOSED:
            return Dropped("notification after close")
        method = message.method
        params = message.params
        if method == "notifications/cancelled":
            return self._receive_cancel(params)
        if method == "notifications/progress":
            return self._receive_progress(params)
        spec = METHODS.get(method)
        if spec is not None and (spec.sender == self.role or spec.is_request):
            return Dropped(f"{method!r} is not a notification a {_peer(self.role)} sends")
        if method == "notifications/initialized" and self.role == "server":
            if self.phase is Phase.INITIALIZING:
                self._transition(Event.RECEIVE_INITIALIZED)
            return NotificationReceived(method, None, spec)
        typed: Any = params
        if spec is not None and spec.params is not None:
            try:
                typed = structure(params if params is not None else {}, spec.params)
            except StructureError as exc:
                self._stats.invalid_messages += 1
                return Dropped(f"malformed {method}: {exc}")
        return NotificationReceived(method, typed, spec)

    def _receive_cancel(self, params: dict[str, Any] | None) -> ReceiveEvent:
        request_id = params.get("requestId") if params else None
        if not _is_id(request_id):
            # Not a request id at all: a list or an object would not even be a dict key, and
            # ``true``/``1.0`` would pass for request 1.
            self._stats.cancellations_ignored += 1
            return Dropped(f"cancellation of malformed request id {request_id!r}")
        reason = params.get("reason") if params else None
        reason = reason if type(reason) is str else None
        inbound = self._inbound.get(request_id)
        if inbound is not None:
            if inbound.spec is not None and not inbound.spec.cancellable:
                self._stats.cancellations_ignored += 1
                return Dropped(f"{inbound.method} cannot be cancelled")
            inbound.cancelled = True
            return CancelRequested(inbound, reason)
        outbound = self._outbound.get(request_id)
        if (
            outbound is not None
            and self.role == "client"
            and outbound.method == "subscriptions/listen"
        ):
            del self._outbound[outbound.id]
            return PeerCancelled(outbound, reason)
        self._stats.cancellations_ignored += 1
        return Dropped(f"cancellation of unknown or finished request {request_id!r}")

    def _receive_progress(self, params: dict[str, Any] | None) -> ReceiveEvent:
        token = params.get("progressToken") if params else None
        pending = self._progress.get(token) if _is_id(token) else None
        if pending is None:
            self._stats.progress_dropped += 1
            return Dropped(f"progress for unknown or finished token {token!r}")
        try:
            progress = structure(params, ProgressNotificationParams)
        except StructureError as exc:
            self._stats.progress_dropped += 1
            return Dropped(f"malformed progress: {exc}")
        return ProgressReceived(pending, progress)

    # -- reading answers --------------------------------------------------------------------

    @overload
    def read_result(
        self, request: OutboundRequest, result: dict[str, Any], model: type[_R]
    ) -> _R | InputRequiredResult: ...
    @overload
    def read_result(
        self, request: OutboundRequest, result: dict[str, Any], model: None = None
    ) -> Any: ...
    def read_result(
        self, request: OutboundRequest, result: dict[str, Any], model: type[_R] | None = None
    ) -> Any:
        """Read a result for ``request`` as ``model`` (typed so; the method's result type by
        default).

        A modern ``resultType: "input_required"`` is read as :class:`InputRequiredResult`.

        Raises:
            ProtocolError: the result does not have the expected shape.
        """
        read_as: type[Any] | None = model
        if read_as is None:
            read_as = request.spec.result if request.spec is not None else None
            if read_as is None:
                return result
        if result.get("resultType") == "input_required" and request.version in MODERN_VERSIONS:
            read_as = InputRequiredResult
        try:
            return structure_hook(read_as)(result, read_as)
        except Exception:  # noqa: BLE001 - explained off the fast path
            raise ProtocolError(
                f"malformed result for {request.method}: {explain(result, read_as)}"
            ) from None

    # -- logging ----------------------------------------------------------------------------

    def wants_log(self, level: LoggingLevel, request: InboundRequest | None = None) -> bool:
        """(server) Whether a log message at ``level`` may be sent now.

        Modern: only for a request that set ``logLevel``, at or above it. Legacy: at or above
        the level set with ``logging/setLevel`` (everything if it was never set), and only if
        we declared the ``logging`` capability.
        """
        if request is not None and request.envelope is not None:
            wanted = request.envelope.log_level
            return wanted is not None and LOGGING_LEVELS.index(level) >= LOGGING_LEVELS.index(
                wanted
            )
        if (
            not isinstance(self.capabilities, ServerCapabilities)
            or self.capabilities.logging is None
        ):
            return False
        if self.phase not in (Phase.INITIALIZING, Phase.OPERATING, Phase.NEW):
            return False
        wanted = self.log_level
        return wanted is None or LOGGING_LEVELS.index(level) >= LOGGING_LEVELS.index(wanted)


_Route: TypeAlias = tuple[McpError | None, MethodSpec | None, Callable[[Any, Any], Any] | None, Any]

_BUILTIN = frozenset({"initialize", "ping", "logging/setLevel", "server/discover"})


def _is_id(value: object) -> TypeGuard[RequestId]:
    """A request id or progress token: a string or an integer (a bool is neither)."""
    return type(value) is str or type(value) is int


def _peer(role: Side) -> Side:
    return "server" if role == "client" else "client"


def _as_of(capabilities: ClientCapabilities, version: str) -> ClientCapabilities:
    """``capabilities`` without what ``version`` does not define.

    Some clients declare the same capabilities whatever revision they negotiate (the
    official Python SDK declares ``elicitation`` with ``url`` mode at 2024-11-05). A
    feature the revision lacks cannot be used with that peer, so it counts as not
    declared: a handler asking for it gets the missing-capability error rather than a
    request the revision does not have.
    """
    return structure(converter_for(version).unstructure(capabilities), ClientCapabilities)


_ = (converter, EmptyResult)
