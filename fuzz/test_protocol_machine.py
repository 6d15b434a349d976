"""A Hypothesis state machine over the sans-IO core: a client and a server ``Connection``
in either era, every message serialized and parsed on the way, held in queues this machine
delivers in any order it likes, next to a rogue peer that sends anything at all.

The model (``_model.py``) keeps each side's phase, negotiated revision and peer
capabilities; the requests it awaits (ids, progress tokens); the peer's requests it is
handling, and which of those were cancelled. Every message a side receives is checked
against what the spec requires of it, every local call against what the side may do, and
after every step the connection must agree with the model.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from trio_mcp import ErrorCode, McpError, jsonrpc as rpc
from trio_mcp._types._methods import METHODS
from trio_mcp.protocol import (
    CLIENT_CAPABILITIES,
    CLIENT_INFO,
    LEGACY_VERSIONS,
    MODERN_VERSIONS,
    PROTOCOL_VERSION,
    SERVER_INFO,
    SUPPORTED_VERSIONS,
    CancelRequested,
    Connection,
    Dispatch,
    Dropped,
    InboundRequest,
    NotificationReceived,
    OutboundRequest,
    PeerCancelled,
    Phase,
    ProgressReceived,
    ReceiveEvent,
    Reply,
    ResponseReceived,
    Side as Role,
)
from trio_mcp.types import (
    ClientCapabilities,
    DiscoverResult,
    ElicitationCapability,
    Implementation,
    InitializeRequestParams,
    PromptsCapability,
    ResourcesCapability,
    RootsCapability,
    SamplingCapability,
    ServerCapabilities,
    ToolsCapability,
    converter_for,
    structure,
)

from . import _rogue
from ._corpus import INVALID_PARAMS, MALFORMED, NOTIFICATIONS, REQUEST_METHODS, VALID_PARAMS
from ._model import (
    BATCH_VERSIONS,
    Side,
    Wire,
    expect_request,
    initialize_answer_ok,
    is_id,
    notification_allowed,
    parses_as,
    progress_params_ok,
    request_allowed,
)

T = TypeVar("T")
ROLES: tuple[Role, ...] = ("client", "server")
VERSION_SETS = st.sampled_from(
    [
        SUPPORTED_VERSIONS,
        SUPPORTED_VERSIONS,
        LEGACY_VERSIONS,
        MODERN_VERSIONS,
        ("2024-11-05",),
        ("2026-07-28", "2025-06-18"),
    ]
)
CLIENT_CAPS = st.builds(
    ClientCapabilities,
    roots=st.none() | st.builds(RootsCapability, list_changed=st.none() | st.booleans()),
    sampling=st.none() | st.just(SamplingCapability()),
    elicitation=st.none() | st.just(ElicitationCapability()),
)
ALL_CLIENT_CAPS = ClientCapabilities(
    roots=RootsCapability(list_changed=True),
    sampling=SamplingCapability(),
    elicitation=ElicitationCapability(),
)
ALL_SERVER_CAPS = ServerCapabilities(
    logging={},
    completions={},
    tools=ToolsCapability(list_changed=True),
    prompts=PromptsCapability(list_changed=True),
    resources=ResourcesCapability(subscribe=True, list_changed=True),
)
TOKENS = st.sampled_from([None, None, True, "tok-a", "tok-b"])
#: Closing ends the conversation; let it get going first.
CLOSE_AFTER_STEPS = 25


class ProtocolMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.raw_ids = itertools.count(1)
        self.steps = 0
        self.client: Side
        self.server: Side

    @initialize(
        client_versions=VERSION_SETS,
        server_versions=VERSION_SETS,
        client_caps=st.just(ALL_CLIENT_CAPS) | CLIENT_CAPS,
        server_caps=st.just(ALL_SERVER_CAPS) | _rogue.SERVER_CAPS,
        start=st.sampled_from(["fresh", "legacy", "legacy", "modern", "modern"]),
    )
    def setup(
        self,
        client_versions: tuple[str, ...],
        server_versions: tuple[str, ...],
        client_caps: Any,
        server_caps: Any,
        start: str,
    ) -> None:
        """Two connections; often already through the handshake, or speaking modern, so
        most of the run is spent in operation."""

        def connection(role: Role, versions: tuple[str, ...], caps: Any) -> Connection:
            info = Implementation(name=f"fuzz-{role}", version="1")
            return Connection(role, info=info, capabilities=caps, versions=versions)

        self.client = Side("client", connection("client", client_versions, client_caps))
        self.server = Side("server", connection("server", server_versions, server_caps))
        if start == "legacy":
            self.handshake()
        elif start == "modern" and self.client.conn.modern_versions:
            self.client_use_modern(self.client.conn.modern_versions[0])

    def sides(self) -> tuple[Side, Side]:
        return (self.client, self.server)

    def peer_of(self, side: Side) -> Side:
        return self.server if side is self.client else self.client

    def post(self, sender: Side, message: rpc.Message, label: str, params_ok: bool = True) -> None:
        self.peer_of(sender).inbox.append(Wire(rpc.dumps(message), label, params_ok=params_ok))

    def _draw_side(self, data: st.DataObject, usable: Callable[[Side], bool]) -> Side:
        roles = [s.role for s in self.sides() if usable(s)]
        return self.client if data.draw(st.sampled_from(roles), "side") == "client" else self.server

    def _draw(self, data: st.DataObject, items: Sequence[T]) -> T:
        """One of ``items``, drawn by index so the reproduction stays short."""
        return items[data.draw(st.integers(0, len(items) - 1), "index")]

    def _mostly(self, data: st.DataObject, live: list[T], finished: list[T]) -> list[T]:
        """``live`` three times in four (when there are any), else ``finished``."""
        if live and (not finished or data.draw(st.integers(0, 3), "finished?") > 0):
            return live
        return finished

    def raw_id(self) -> str | int:
        n = next(self.raw_ids)
        return f"raw-{n}" if n % 2 else 10**9 + n

    # -- invariants -------------------------------------------------------------------------------

    @invariant()
    def connection_agrees_with_model(self) -> None:
        self.steps += 1  # invariants run after every step: a step counter for close()
        for side in self.sides():
            conn = side.conn
            assert conn.phase is side.phase, (side.role, conn.phase, side.phase)
            # Outstanding ids are unique (dict keys, never reused: see _register_out) and
            # exactly the ones the model awaits; likewise the peer's requests in flight.
            assert conn.outstanding == len(side.out), (side.role, conn.outstanding, side.out)
            assert conn.in_flight == len(side.in_flight), (side.role, conn.in_flight)
            if side.phase in (Phase.OPERATING, Phase.MODERN) or (
                side.role == "server" and side.phase is Phase.INITIALIZING
            ):
                assert conn.version == side.version, (side.role, conn.version, side.version)
            if side.phase is Phase.OPERATING or side.role == "server":
                assert conn.peer_capabilities == side.peer_caps
            for request in side.answered:
                assert request.finished, f"{side.role}: {request.id!r} answered but live"

    # -- the handshake and the era, client side ---------------------------------------------------

    @rule(
        era=st.sampled_from(["legacy", "modern"]),
        version=st.sampled_from([None, *SUPPORTED_VERSIONS, "1.0.0"]),
    )
    def client_start(self, era: str, version: str | None) -> None:
        """Start the legacy handshake or go modern, in any phase, with any version."""
        if era == "modern":
            self.client_use_modern(version or MODERN_VERSIONS[0])
        else:
            self.client_initialize(version)

    def client_initialize(self, version: str | None) -> None:
        client = self.client
        legacy = client.conn.legacy_versions
        chosen = version if version is not None else (legacy[0] if legacy else None)
        allowed = client.phase is Phase.NEW and chosen in legacy
        try:
            pending, message = client.conn.initialize_request(version)
        except (McpError, ValueError):
            assert not allowed, "initialize_request refused a legal initialize"
            assert client.conn.phase is client.phase
            return
        assert allowed, f"initialize_request allowed {version!r} in {client.phase}"
        assert not pending.cancellable, "lifecycle: initialize MUST NOT be cancelled"
        assert message.params is not None
        assert message.params["protocolVersion"] == chosen
        self._register_out(client, pending)
        client.phase = Phase.INITIALIZING
        self.post(client, message, "initialize")

    def client_use_modern(self, version: str) -> None:
        client = self.client
        allowed = (
            client.phase in (Phase.NEW, Phase.MODERN) and version in client.conn.modern_versions
        )
        try:
            client.conn.use_modern(version)
        except (McpError, ValueError):
            assert not allowed
            return
        assert allowed
        client.phase = Phase.MODERN
        client.version = version

    @precondition(lambda self: self.client.held_initialized is not None)
    @rule()
    def client_send_initialized(self) -> None:
        note = self.client.held_initialized
        assert note is not None
        self.client.held_initialized = None
        self.post(self.client, note, "initialized")

    @precondition(lambda self: self.client.phase is Phase.NEW and self.server.phase is Phase.NEW)
    @rule()
    def handshake(self) -> None:
        """The whole legacy handshake in one step, so the machine reaches operation often."""
        self.client_initialize(None)
        self.flush()
        if self.client.held_initialized is not None:
            self.client_send_initialized()
            self.flush()

    # -- sending ----------------------------------------------------------------------------------

    def _register_out(self, side: Side, pending: OutboundRequest) -> None:
        assert pending.id not in side.allocated, f"request id {pending.id!r} was reused"
        side.allocated.add(pending.id)
        side.out[pending.id] = pending
        if pending.progress_token is not None:
            side.tokens[pending.progress_token] = pending.id

    def _legal_requests(self) -> list[tuple[Side, str]]:
        return [
            (side, method)
            for side in self.sides()
            for method in REQUEST_METHODS
            if request_allowed(side, method)
        ]

    @precondition(lambda self: bool(self._legal_requests()))
    @rule(data=st.data(), valid=st.sampled_from([True, True, True, False]), token=TOKENS)
    def send_request(self, data: st.DataObject, valid: bool, token: bool | str | None) -> None:
        """A request the model says this side may send now."""
        side, method = self._draw(data, self._legal_requests())
        self._send_request(side, method, valid, token)

    @rule(
        role=st.sampled_from(ROLES),
        method=st.sampled_from([*REQUEST_METHODS, "initialize"]),
        valid=st.booleans(),
        token=TOKENS,
    )
    def send_any_request(
        self, role: Role, method: str, valid: bool, token: bool | str | None
    ) -> None:
        """Any request, allowed or not: local misuse must raise and change nothing."""
        self._send_request(self.client if role == "client" else self.server, method, valid, token)

    def _send_request(self, side: Side, method: str, valid: bool, token: bool | str | None) -> None:
        params = VALID_PARAMS.get(method) if valid else INVALID_PARAMS.get(method)
        allowed = request_allowed(side, method)
        clash = isinstance(token, str) and token in side.tokens
        before = side.conn.outstanding
        try:
            pending, message = side.conn.send_request(
                method, copy.deepcopy(params), progress_token=token
            )
        except (McpError, ValueError) as exc:
            excused = clash and isinstance(exc, ValueError)
            assert not allowed or excused, f"{side.role} may send {method}: {exc!r}"  # noqa: PT017
            assert side.conn.outstanding == before, "a refused request was registered"
            return
        assert allowed, f"{side.role} sent {method} in {side.phase} ({side.version})"
        assert not clash, f"progress token {token!r} was given to two requests at once"
        assert message.id == pending.id
        assert message.method == method
        if token is not None:
            expected = pending.id if token is True else token
            assert pending.progress_token == expected
            assert message.params is not None
            assert message.params["_meta"]["progressToken"] == expected
        if side.role == "client" and pending.version in MODERN_VERSIONS:
            # basic/index: the required envelope fields go on *every* modern request.
            assert message.params is not None
            meta = message.params["_meta"]
            assert meta[PROTOCOL_VERSION] == pending.version
            assert type(meta[CLIENT_CAPABILITIES]) is dict
            assert CLIENT_INFO in meta
        self._register_out(side, pending)
        params_ok = valid or method not in INVALID_PARAMS
        self.post(side, message, f"{method} #{pending.id}", params_ok=params_ok)

    @rule(role=st.sampled_from(ROLES), method=st.sampled_from(list(NOTIFICATIONS)))
    def send_notification(self, role: Role, method: str) -> None:
        side = self.client if role == "client" else self.server
        allowed = notification_allowed(side, method, side.write_version)
        try:
            note = side.conn.send_notification(method, copy.deepcopy(NOTIFICATIONS[method]))
        except McpError:
            assert not allowed, f"{role} may send {method} in {side.phase}"
            return
        assert allowed, f"{role} sent {method} in {side.phase} ({side.write_version})"
        self.post(side, note, method)

    @precondition(lambda self: any(s.in_flight or s.answered for s in self.sides()))
    @rule(data=st.data(), how=st.sampled_from(["result", "error", "abandon", "not an object"]))
    def respond(self, data: st.DataObject, how: str) -> None:
        """Answer one of the peer's requests: live, cancelled or already answered."""
        side = self._draw_side(data, lambda s: bool(s.in_flight or s.answered))
        request = self._draw(data, self._mostly(data, list(side.in_flight.values()), side.answered))
        self._respond(side, request, how)

    def _respond(self, side: Side, request: InboundRequest, how: str) -> None:
        live = side.in_flight.get(request.id) is request
        must_answer = live and request not in side.cancelled
        message: rpc.ResultResponse | rpc.ErrorResponse | None = None
        if how == "result":
            result = {"content": [], "_meta": {"k": "v"}}
            message = side.conn.respond(request, result)
            assert result == {"content": [], "_meta": {"k": "v"}}, "respond() changed the dict"
        elif how == "error":
            message = side.conn.respond_error(request, McpError("nope", code=-32000))
        elif how == "abandon":
            side.conn.abandon(request)
            must_answer = False
        else:
            # basic/index: a result is an object. A handler returning anything else is a
            # local bug: respond() refuses it and leaves the request live, to be answered
            # with an error instead.
            try:
                message = side.conn.respond(request, ["not", "an", "object"])
            except (TypeError, ValueError):
                assert must_answer, "respond() raised for a request it need not answer"
                assert side.in_flight.get(request.id) is request
                assert not request.finished
                return
            assert not must_answer, "respond() accepted a result that is not an object"
        if must_answer:
            assert message is not None, f"no answer for live request {request.id!r}"
            assert message.id == request.id
            if isinstance(message, rpc.ResultResponse) and request.envelope is not None:
                # basic/index: servers SHOULD name themselves in every result's _meta.
                assert message.result["_meta"][SERVER_INFO]["name"] == "fuzz-server"
                assert message.result["_meta"]["k"] == "v"
            self.post(side, message, f"answer to {request.id!r}")
        else:
            # cancellation: a cancelled request gets no response; and none gets two.
            assert message is None, f"{request.id!r} answered twice or after its cancel"
        if live:
            del side.in_flight[request.id]
            side.answered.append(request)
        assert request.finished

    @precondition(lambda self: any(s.out or s.done_out for s in self.sides()))
    @rule(data=st.data())
    def cancel(self, data: st.DataObject) -> None:
        """Give up on one of our requests: outstanding, or already finished."""
        side = self._draw_side(data, lambda s: bool(s.out or s.done_out))
        pending = self._draw(data, self._mostly(data, list(side.out.values()), side.done_out))
        live = side.out.get(pending.id) is pending
        note = side.conn.cancel(pending, "fuzz")
        if live and pending.method != "initialize":
            assert note is not None
            assert note.params == {"requestId": pending.id, "reason": "fuzz"}
            self.post(side, note, f"cancel {pending.id!r}")
        else:
            # lifecycle: initialize MUST NOT be cancelled; a finished request needs nothing.
            assert note is None
        if live:
            self._forget_out(side, pending)

    def _racing(self) -> list[tuple[Side, OutboundRequest]]:
        """Requests the sender awaits and the receiver is handling right now."""
        return [
            (side, pending)
            for side in self.sides()
            for pending in side.out.values()
            if pending.id in self.peer_of(side).in_flight and pending.method != "initialize"
        ]

    @precondition(lambda self: bool(self._racing()))
    @rule(data=st.data(), answered_first=st.booleans())
    def cancel_while_handled(self, data: st.DataObject, answered_first: bool) -> None:
        """The race of cancellation's "Timing Considerations": the caller cancels while
        the handler runs, and the answer may already be on its way."""
        sender, pending = self._draw(data, self._racing())
        receiver = self.peer_of(sender)
        request = receiver.in_flight[pending.id]
        if answered_first:
            self._respond(receiver, request, "result")
        note = sender.conn.cancel(pending, "race")
        assert note is not None
        self._forget_out(sender, pending)
        self.post(sender, note, f"cancel {pending.id!r}")
        self.flush()
        # Either way the sender saw no answer (it had given up), and now the receiver
        # may not answer (again).
        self._respond(receiver, request, "result")

    def _forget_out(self, side: Side, pending: OutboundRequest) -> None:
        del side.out[pending.id]
        side.done_out.append(pending)
        if pending.progress_token is not None:
            del side.tokens[pending.progress_token]

    def _with_tokens(self) -> list[tuple[Side, Any]]:
        return [
            (side, r)
            for side in self.sides()
            for r in side.in_flight.values()
            if r.progress_token is not None
        ]

    @precondition(lambda self: bool(self._with_tokens()))
    @rule(data=st.data(), value=st.floats(0, 100, allow_nan=False))
    def report_progress(self, data: st.DataObject, value: float) -> None:
        side, request = self._draw(data, self._with_tokens())
        allowed = notification_allowed(side, "notifications/progress", request.version)
        params = {"progressToken": request.progress_token, "progress": value}
        try:
            note = side.conn.send_notification(
                "notifications/progress", params, version=request.version
            )
        except McpError:
            assert not allowed
            return
        assert allowed
        self.post(side, note, f"progress {request.progress_token!r}")

    @precondition(
        lambda self: (
            self.steps >= CLOSE_AFTER_STEPS
            and Phase.CLOSED not in (self.client.phase, self.server.phase)
        )
    )
    @rule(role=st.sampled_from(ROLES))
    def close(self, role: Role) -> None:
        side = self.client if role == "client" else self.server
        pending = side.conn.close()
        assert {p.id for p in pending} == set(side.out)
        for p in list(side.out.values()):
            self._forget_out(side, p)
        side.phase = Phase.CLOSED
        # A closed connection sends nothing, answers to the peer's requests included.
        side.answered.extend(side.in_flight.values())
        side.in_flight.clear()

    # -- a peer that follows no rules -------------------------------------------------------------

    @rule(role=st.sampled_from(ROLES), data=st.data())
    def rogue_request(self, role: Role, data: st.DataObject) -> None:
        """A request with any method, params, envelope and token; perhaps an initialize
        with any version; perhaps reusing the id of a request still in flight."""
        side = self.client if role == "client" else self.server
        duplicate = bool(side.in_flight) and data.draw(st.booleans(), label="duplicate id")
        id = data.draw(st.sampled_from(list(side.in_flight))) if duplicate else self.raw_id()
        kind = _rogue.initializes if data.draw(st.booleans()) else _rogue.requests
        rogue = data.draw(kind(id))
        side.inbox.append(Wire(rogue.data, rogue.label, params_ok=rogue.params_ok))

    @rule(
        role=st.sampled_from(ROLES),
        kind=st.sampled_from(["malformed", "cancel", "progress", "answer", "batch"]),
        data=st.data(),
    )
    def rogue_message(self, role: Role, kind: str, data: st.DataObject) -> None:
        """Malformed JSON-RPC, or a cancellation, progress or answer naming live, finished
        and impossible ids."""
        side = self.client if role == "client" else self.server
        if kind == "malformed":
            case = data.draw(st.sampled_from(MALFORMED))
            side.inbox.append(Wire(case.data, case.name, malformed=case))
            return
        if kind == "cancel":
            peer_ids = self.peer_of(side).allocated
            known = [*side.in_flight, *(r.id for r in side.answered), *sorted(peer_ids)]
            rogue = data.draw(_rogue.cancellations(known))
        elif kind == "progress":
            done = [p.progress_token for p in side.done_out if p.progress_token is not None]
            rogue = data.draw(_rogue.progress([*side.tokens, *done]))
        elif kind == "answer":
            ids = sorted(side.allocated, key=str) or [1]
            rogue = data.draw(_rogue.answers(data.draw(st.sampled_from(ids))))
        else:
            rogue = _rogue.batch(self.raw_id())
        side.inbox.append(Wire(rogue.data, rogue.label))

    # -- delivery ---------------------------------------------------------------------------------

    @precondition(lambda self: bool(self.client.inbox or self.server.inbox))
    @rule(data=st.data(), in_order=st.booleans())
    def deliver(self, data: st.DataObject, in_order: bool) -> None:
        """Deliver one message: the oldest (stdio) or any (HTTP: one stream per request)."""
        side = self._draw_side(data, lambda s: bool(s.inbox))
        index = 0 if in_order else data.draw(st.integers(0, len(side.inbox) - 1))
        self._deliver(side, side.inbox.pop(index))

    @rule()
    def flush(self) -> None:
        for _ in range(500):
            side = next((s for s in self.sides() if s.inbox), None)
            if side is None:
                return
            self._deliver(side, side.inbox.pop(0))
        raise AssertionError("the peers keep answering each other")

    def _feed(self, side: Side, message: rpc.Message | rpc.InvalidMessage) -> ReceiveEvent:
        try:
            return side.conn.receive(message)
        except Exception as exc:
            raise AssertionError(f"{side.role}.receive({message!r}) raised on peer input") from exc

    def _deliver(self, side: Side, wire: Wire) -> None:
        message = rpc.parse(wire.data)
        if isinstance(message, rpc.Batch):
            # Outside the revisions that have batches the session answers a batch whole,
            # so only allowed ones reach the connection, item by item.
            allowed = side.phase is Phase.OPERATING and side.version in BATCH_VERSIONS
            assert side.conn.allows_batches == allowed
            if allowed:
                for item in message.items:
                    self._receive(side, item, wire)
        else:
            self._receive(side, message, wire)

    def _receive(self, side: Side, message: rpc.Message | rpc.InvalidMessage, wire: Wire) -> None:
        if isinstance(message, rpc.InvalidMessage):
            self._receive_invalid(side, message, wire)
        elif isinstance(message, rpc.JsonRpcRequest):
            self._receive_request(side, message, wire)
        elif isinstance(message, rpc.JsonRpcNotification):
            self._receive_notification(side, message, wire)
        else:
            event = self._feed(side, message)
            if message.id is not None and message.id in side.out:
                self._answered(side, event, message.id)
            else:
                # Never sent, answered, or given up on: cancellation: "The sender of the
                # cancellation notification SHOULD ignore any response ... afterward".
                assert type(event) is Dropped, (side.role, message, event)

    def _receive_invalid(self, side: Side, message: rpc.InvalidMessage, wire: Wire) -> None:
        event = self._feed(side, message)
        answers = message.response_id
        case = wire.malformed
        if answers is not None and answers in side.out:
            # A broken answer still ends the request it names: it fails, it does not hang.
            self._answered(side, event, answers)
        elif case is not None and case.code is not None:
            # JSON-RPC 2.0 section 5.1: the error for the input, with the request's id or
            # null when it could not be read.
            assert type(event) is Reply, (case.name, event)
            reply = event.message
            assert type(reply) is rpc.ErrorResponse, (case.name, reply)
            assert (reply.error.code, reply.id) == (case.code, case.reply_id), (case, reply)
            self.post(side, reply, f"error for {case.name}")
        else:
            # A notification with array params or a broken response is never answered.
            assert type(event) is Dropped, (message, event)

    def _answered(self, side: Side, event: ReceiveEvent, id: Any) -> None:
        pending = side.out[id]
        assert type(event) is ResponseReceived, (side.role, id, event)
        assert event.request is pending
        self._forget_out(side, pending)
        response = event.response
        if pending.method == "initialize":
            self._complete_initialize(response)
        elif pending.method == "server/discover" and isinstance(response, rpc.ResultResponse):
            found = parses_as(response.result, DiscoverResult)
            if found is not None:
                side.conn.record_discovery(found)
                side.peer_caps = found.capabilities

    def _complete_initialize(
        self, response: rpc.ResultResponse | rpc.ErrorResponse | rpc.InvalidMessage
    ) -> None:
        client = self.client
        ok = initialize_answer_ok(client, response)
        try:
            result, note = client.conn.complete_initialize(response)
        except McpError:
            assert not ok, f"complete_initialize refused {response!r}"
            client.phase = Phase.NEW  # the handshake failed; the client may try again
            return
        assert ok, f"complete_initialize accepted {response!r}"
        assert note.method == "notifications/initialized"
        client.phase = Phase.OPERATING
        client.version = result.protocol_version
        client.peer_caps = result.capabilities
        client.held_initialized = note

    def _receive_request(self, side: Side, request: rpc.JsonRpcRequest, wire: Wire) -> None:
        outcome = expect_request(side, request, wire.params_ok)
        phase_before = side.phase
        event = self._feed(side, request)
        if outcome.modern_version is not None and phase_before is Phase.NEW:
            side.phase = Phase.MODERN
        if outcome.kind == "drop":
            assert type(event) is Dropped, (side.role, request, event)
            return
        if outcome.kind == "dispatch":
            assert type(event) is Dispatch, (side.role, request, outcome, event)
            inbound = event.request
            assert (inbound.id, inbound.method) == (request.id, request.method)
            assert (inbound.envelope is not None) == (outcome.modern_version is not None)
            assert inbound.version == (outcome.modern_version or side.write_version)
            meta = request.params.get("_meta") if request.params else None
            token = meta.get("progressToken") if type(meta) is dict else None
            assert inbound.progress_token == token
            side.in_flight[inbound.id] = inbound
            return
        if type(event) is Dispatch and ErrorCode.INVALID_PARAMS in outcome.codes:
            # Params are typed when the handler first reads them: that read raises -32602,
            # and the session answers with it.
            inbound = event.request
            with pytest.raises(McpError) as raised:
                inbound.params  # noqa: B018
            assert raised.value.code == ErrorCode.INVALID_PARAMS, (request, raised.value)
            reply = side.conn.respond_error(inbound, raised.value)
            assert reply is not None
        else:
            assert type(event) is Reply, (side.role, request, outcome, event)
            reply = event.message
        assert isinstance(reply, rpc.ResultResponse | rpc.ErrorResponse)
        assert reply.id == request.id
        if outcome.kind == "error":
            assert type(reply) is rpc.ErrorResponse, (side.role, request, outcome, reply)
            assert reply.error.code in outcome.codes, (side.role, request, outcome, reply)
            if reply.error.code == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION:
                # versioning: the error lists "the versions it does support".
                assert reply.error.data["supported"] == list(side.conn.modern_versions)
        else:
            assert type(reply) is rpc.ResultResponse, (side.role, request, outcome, reply)
            self._answered_by_protocol(side, request, reply, phase_before)
        self.post(side, reply, f"answer to {request.method} {request.id!r}")

    def _answered_by_protocol(
        self,
        side: Side,
        request: rpc.JsonRpcRequest,
        reply: rpc.ResultResponse,
        phase_before: Phase,
    ) -> None:
        """What the protocol answers itself: initialize, ping, logging/setLevel, discover."""
        if request.method == "initialize":
            assert side.role == "server"
            assert phase_before is Phase.NEW
            params = parses_as(request.params or {}, InitializeRequestParams)
            assert params is not None
            chosen = reply.result["protocolVersion"]
            # lifecycle: "If the server supports the requested protocol version, it MUST
            # respond with the same version. Otherwise ... another protocol version it
            # supports. This SHOULD be the latest".
            if params.protocol_version in side.conn.legacy_versions:
                assert chosen == params.protocol_version
            else:
                assert chosen == side.conn.legacy_versions[0]
            side.phase = Phase.INITIALIZING
            side.version = chosen
            # A capability the negotiated revision lacks counts as not declared.
            side.peer_caps = structure(
                converter_for(chosen).unstructure(params.capabilities), ClientCapabilities
            )
        elif request.method == "server/discover":
            assert reply.result["supportedVersions"] == list(side.conn.modern_versions)
        elif request.method == "logging/setLevel":
            assert side.conn.log_level == (request.params or {}).get("level")
        else:
            assert request.method == "ping", request.method
            # ping: "The receiver MUST respond promptly with an empty response".
            assert reply.result == {}

    def _receive_notification(self, side: Side, note: rpc.JsonRpcNotification, wire: Wire) -> None:
        params = note.params or {}
        event = self._feed(side, note)
        if side.phase is Phase.CLOSED:
            assert type(event) is Dropped, ("closed", note, event)
        elif note.method == "notifications/cancelled":
            target = params.get("requestId")
            if is_id(target) and target in side.in_flight:
                assert type(event) is CancelRequested, (note, event)
                assert event.request is side.in_flight[target]
                side.cancelled.add(event.request)
            elif (
                is_id(target)
                and side.role == "client"
                and target in side.out
                and side.out[target].method == "subscriptions/listen"
            ):
                # 2026-07-28 cancellation: a server ends a subscription stream this way.
                assert type(event) is PeerCancelled, (note, event)
                self._forget_out(side, side.out[target])
            else:
                # cancellation: "Invalid cancellation notifications SHOULD be ignored:
                # unknown request IDs, already completed requests, malformed notifications".
                assert type(event) is Dropped, (side.role, note, event)
        elif note.method == "notifications/progress":
            token = params.get("progressToken")
            if is_id(token) and token in side.tokens and progress_params_ok(params):
                assert type(event) is ProgressReceived, (note, event)
                assert event.request is side.out[side.tokens[token]]
            else:
                # progress: tokens MUST name "an active request"; the rest is dropped.
                assert type(event) is Dropped, (side.role, note, event)
        else:
            self._receive_other_notification(side, note, wire, event)

    def _receive_other_notification(
        self, side: Side, note: rpc.JsonRpcNotification, wire: Wire, event: ReceiveEvent
    ) -> None:
        spec = METHODS.get(note.method)
        foreign = spec is not None and (spec.sender == side.role or spec.is_request)
        if foreign or not wire.params_ok:
            assert type(event) is Dropped, (note, event)
        else:
            assert type(event) is NotificationReceived, (note, event)
            if (
                note.method == "notifications/initialized"
                and side.role == "server"
                and side.phase is Phase.INITIALIZING
            ):
                side.phase = Phase.OPERATING


TestProtocolMachine = ProtocolMachine.TestCase
