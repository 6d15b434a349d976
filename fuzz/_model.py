"""The model the lifecycle fuzzer holds the sans-IO core to.

Each side of the conversation is a :class:`Side`: a real ``Connection`` next to what the
spec says its state should be. The functions below say, from that model alone, what a
side may send and what it must make of each request it receives, so the fuzzer checks the
connection instead of asking it. Where the spec leaves a choice (the code for an error,
which of two problems to report first), the model accepts every allowed answer.

Sources, quoted where they decide something: 2025-11-25 basic/lifecycle, basic/utilities
(cancellation, progress); 2026-07-28 basic/index, basic/versioning, basic/patterns/mrtr;
JSON-RPC 2.0; and the method table in ``trio_mcp._types._methods`` (who sends each method,
in which revisions, needing which capability of the receiver).
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

import attrs

from trio_mcp import ErrorCode, jsonrpc as rpc
from trio_mcp._types._base import LOGGING_LEVELS
from trio_mcp._types._converter import StructureError, structure
from trio_mcp._types._methods import METHODS, has_capability, method_spec
from trio_mcp.protocol import (
    CLIENT_CAPABILITIES,
    CLIENT_INFO,
    LEGACY_VERSIONS,
    LOG_LEVEL,
    MODERN_VERSIONS,
    PROTOCOL_VERSION,
    Connection,
    InboundRequest,
    OutboundRequest,
    Phase,
    Side as Role,
)
from trio_mcp.types import (
    ClientCapabilities,
    Implementation,
    InitializeRequestParams,
    ServerCapabilities,
)

from ._corpus import Malformed

T = TypeVar("T")

BEFORE_READY = (Phase.NEW, Phase.INITIALIZING)
#: The only revisions with JSON-RPC batches (added in 2025-03-26, removed in 2025-06-18;
#: 2024-11-05 inherited them from JSON-RPC 2.0).
BATCH_VERSIONS = ("2024-11-05", "2025-03-26")


@attrs.define(eq=False)
class Wire:
    """One message in flight: its bytes, and what the receiver must make of it if it is
    malformed. ``params_ok`` is ``False`` for a request whose params have the wrong shape."""

    data: bytes
    label: str
    malformed: Malformed | None = None
    params_ok: bool = True


@attrs.define(eq=False)
class Side:
    """One connection and the model of what it should be."""

    role: Role
    conn: Connection
    phase: Phase = Phase.NEW
    version: str | None = None
    peer_caps: ClientCapabilities | ServerCapabilities | None = None
    #: Our requests awaiting an answer, as the connection handed them out.
    out: dict[Any, OutboundRequest] = attrs.Factory(dict)
    #: Our requests that were answered, cancelled or forgotten.
    done_out: list[OutboundRequest] = attrs.Factory(list)
    #: Every id we ever allocated: ids are never reused.
    allocated: set[Any] = attrs.Factory(set)
    tokens: dict[Any, Any] = attrs.Factory(dict)
    #: The peer's requests handed to the application and not yet answered.
    in_flight: dict[Any, InboundRequest] = attrs.Factory(dict)
    #: Of those, the ones whose cancellation the connection accepted.
    cancelled: set[InboundRequest] = attrs.Factory(set)
    answered: list[InboundRequest] = attrs.Factory(list)
    #: Messages on their way *to* this side.
    inbox: list[Wire] = attrs.Factory(list)
    held_initialized: rpc.JsonRpcNotification | None = None

    @property
    def write_version(self) -> str:
        return self.version or LEGACY_VERSIONS[0]


@attrs.frozen
class Outcome:
    """What a request must produce at its receiver: dropped (closed), an error with one of
    ``codes``, a result the protocol gives itself, or a dispatch to the application."""

    kind: Literal["drop", "error", "result", "dispatch"]
    codes: frozenset[int] = frozenset()
    #: The revision of a valid modern envelope (which moves a new server to MODERN,
    #: whatever becomes of the request).
    modern_version: str | None = None


def error(*codes: int) -> Outcome:
    return Outcome("error", frozenset(codes))


def is_id(value: object) -> bool:
    """A JSON-RPC id or progress token: a string or an integer, never a boolean or float."""
    return type(value) is str or type(value) is int


def parses_as(value: Any, cls: type[T]) -> T | None:
    try:
        return structure(value, cls)
    except StructureError:
        return None


def _number(value: object) -> bool:
    return type(value) is int or type(value) is float


def progress_params_ok(params: dict[str, Any]) -> bool:
    """``notifications/progress`` params of the right shape (the token is checked apart)."""
    total = params.get("total")
    message = params.get("message")
    return (
        _number(params.get("progress"))
        and (total is None or _number(total))
        and (message is None or type(message) is str)
    )


# --- What a side may send ----------------------------------------------------------------------


def request_allowed(side: Side, method: str) -> bool:
    """Whether ``side`` may send request ``method`` through ``Connection.send_request``.

    lifecycle: "The client SHOULD NOT send requests other than pings before the server has
    responded to the initialize request"; "The server SHOULD NOT send requests other than
    pings and logging before receiving the initialized notification"; "Only use capabilities
    that were successfully negotiated". mrtr: modern servers send no requests. And
    ``initialize`` only ever goes through ``initialize_request``, which moves the lifecycle.
    """
    phase = side.phase
    if method == "initialize" or phase is Phase.CLOSED:
        return False
    version = side.write_version
    if side.role == "client":
        if phase is Phase.NEW and method == "server/discover":
            # The era probe speaks our newest modern revision; without one, no probing.
            if not side.conn.modern_versions:
                return False
            version = side.conn.modern_versions[0]
        elif phase in BEFORE_READY and method != "ping":
            return False
    elif phase is Phase.MODERN or (phase in BEFORE_READY and method != "ping"):
        return False
    spec = method_spec(method, version)  # (an extension's method in modern revisions: None)
    if spec is None:
        return True
    if spec.sender not in (side.role, "both") or not spec.in_version(version):
        return False
    return not (
        spec.capability
        and version >= spec.capability_since
        and side.peer_caps is not None
        and not has_capability(side.peer_caps, spec.capability)
    )


def notification_allowed(side: Side, method: str, version: str) -> bool:
    """Whether ``side`` may send notification ``method`` in ``version`` now.

    Before the handshake completes a client only cancels (``initialized`` comes from
    ``complete_initialize``); a server may log, and once initializing, report progress.
    List-changed and log notifications need *our* capability, as we declared it.
    """
    phase = side.phase
    if phase is Phase.CLOSED:
        return False
    early: tuple[str, ...] = ("notifications/cancelled",)
    if side.role == "server":
        early = ("notifications/message",)
        if phase is Phase.INITIALIZING:
            early += ("notifications/progress",)
    if phase in BEFORE_READY and method not in early:
        return False
    spec = METHODS.get(method)
    if spec is None:
        return True
    if spec.sender not in (side.role, "both") or not spec.in_version(version):
        return False
    return not (spec.capability and not has_capability(side.conn.capabilities, spec.capability))


# --- What a side must make of a request ----------------------------------------------------------


def expect_request(side: Side, request: rpc.JsonRpcRequest, params_ok: bool) -> Outcome:
    if side.phase is Phase.CLOSED:
        return Outcome("drop")
    # basic/index: an id "MUST NOT match the ID of any other request the sender has issued";
    # one still in flight is caught and refused.
    if request.id in side.in_flight:
        return error(ErrorCode.INVALID_REQUEST)
    method = request.method
    meta = request.params.get("_meta") if request.params else None
    declares = type(meta) is dict and PROTOCOL_VERSION in meta
    if side.role == "server":
        # versioning: "A request carrying modern per-request _meta is served statelessly";
        # "An initialize request selects legacy semantics". This server keeps the era it
        # met first for the connection; before that, a request other than initialize and
        # ping is taken as modern (and needs the envelope) if it shows any sign of the
        # modern era (an envelope field, a method only modern revisions have) or the
        # server speaks no legacy revision; without one it is a legacy request sent
        # before initialize.
        if side.phase is Phase.MODERN or (
            side.phase is Phase.NEW
            and side.conn.modern_versions
            and (
                declares
                or (
                    method not in ("initialize", "ping")
                    and (not side.conn.legacy_versions or _shows_modern(method, meta))
                )
            )
        ):
            return _expect_modern(side, request, params_ok)
        if side.phase is Phase.NEW:
            if method == "initialize":
                return _expect_initialize(side, request)
            if method == "ping":
                return _expect_method(side, request, LEGACY_VERSIONS[0], params_ok)
            # lifecycle: nothing but ping before initialization; a legacy-only server may
            # also call a modern method unknown.
            return error(ErrorCode.INVALID_REQUEST, ErrorCode.METHOD_NOT_FOUND)
        return _expect_method(side, request, side.write_version, params_ok)
    if side.phase in BEFORE_READY:
        if method == "ping":
            return _expect_method(side, request, LEGACY_VERSIONS[0], params_ok)
        return error(ErrorCode.INVALID_REQUEST, ErrorCode.METHOD_NOT_FOUND)
    return _expect_method(side, request, side.write_version, params_ok)


def _shows_modern(method: str, meta: Any) -> bool:
    if type(meta) is dict and any(k in meta for k in (CLIENT_CAPABILITIES, CLIENT_INFO, LOG_LEVEL)):
        return True
    spec = METHODS.get(method)
    return spec is not None and spec.until is None and spec.since >= min(MODERN_VERSIONS)


def _expect_modern(side: Side, request: rpc.JsonRpcRequest, params_ok: bool) -> Outcome:
    meta = (request.params or {}).get("_meta")
    # basic/index: "A request missing any required field is malformed; the server MUST
    # reject it with JSON-RPC error code -32602".
    if type(meta) is not dict or type(meta.get(PROTOCOL_VERSION)) is not str:
        return error(ErrorCode.INVALID_PARAMS)
    codes = set()
    version = meta[PROTOCOL_VERSION]
    if version not in side.conn.modern_versions:
        # versioning: "it MUST respond with an UnsupportedProtocolVersionError".
        codes.add(ErrorCode.UNSUPPORTED_PROTOCOL_VERSION)
    caps = meta.get(CLIENT_CAPABILITIES)
    info = meta.get(CLIENT_INFO)
    level = meta.get(LOG_LEVEL)
    if (
        type(caps) is not dict
        or parses_as(caps, ClientCapabilities) is None
        or (info is not None and parses_as(info, Implementation) is None)
        or (level is not None and level not in LOGGING_LEVELS)
    ):
        codes.add(ErrorCode.INVALID_PARAMS)
    if codes:
        return error(*codes)
    return attrs.evolve(_expect_method(side, request, version, params_ok), modern_version=version)


def _expect_initialize(side: Side, request: rpc.JsonRpcRequest) -> Outcome:
    if parses_as(request.params or {}, InitializeRequestParams) is None:
        return error(ErrorCode.INVALID_PARAMS)
    if not side.conn.legacy_versions:
        # versioning: a modern-only server rejects initialize, "the exact code is
        # implementation-defined".
        return error(
            ErrorCode.INVALID_REQUEST, ErrorCode.METHOD_NOT_FOUND, ErrorCode.INVALID_PARAMS
        )
    return Outcome("result")


def _expect_method(
    side: Side, request: rpc.JsonRpcRequest, version: str, params_ok: bool
) -> Outcome:
    method = request.method
    codes: set[int] = set()
    spec = method_spec(method, version)
    if spec is not None:
        if (
            spec.sender == side.role
            or not spec.is_request
            or not spec.in_version(version)
            or (
                spec.capability
                and version >= spec.capability_since
                and not has_capability(side.conn.capabilities, spec.capability)
            )
        ):
            # What the receiver does not offer (its role, this revision, its declared
            # capabilities) is an unknown method to it.
            codes.add(ErrorCode.METHOD_NOT_FOUND)
        if method == "initialize" and side.role == "server":
            codes.add(ErrorCode.INVALID_REQUEST)  # a second initialize
    meta = (request.params or {}).get("_meta")
    if spec is not None and (not params_ok or (meta is not None and type(meta) is not dict)):
        codes.add(ErrorCode.INVALID_PARAMS)
    token = meta.get("progressToken") if type(meta) is dict else None
    if token is not None and not is_id(token):
        # progress: "Progress tokens MUST be a string or integer value".
        codes.add(ErrorCode.INVALID_PARAMS)
    if codes:
        return error(*codes)
    if method == "ping" or (
        side.role == "server" and method in ("logging/setLevel", "server/discover")
    ):
        return Outcome("result")
    return Outcome("dispatch")


def initialize_answer_ok(client: Side, response: object) -> bool:
    """Whether an answer to ``initialize`` completes the handshake. lifecycle: "If the
    client does not support the version in the server's response, it SHOULD disconnect"."""
    if not isinstance(response, rpc.ResultResponse):
        return False
    result = response.result
    return (
        result.get("protocolVersion") in client.conn.legacy_versions
        and type(result.get("capabilities")) is dict
        and type(result.get("serverInfo")) is dict
    )
