"""Regression tests for bugs the fuzzers (fuzz/) found in the sans-IO core. Each test is
named for the bug it pins down."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from trio_mcp import jsonrpc as rpc
from trio_mcp.jsonrpc import ErrorCode, McpError
from trio_mcp.protocol import (
    LEGACY_VERSIONS,
    MODERN_VERSIONS,
    PROTOCOL_VERSION,
    SERVER_INFO,
    Connection,
    Dispatch,
    Dropped,
    InboundRequest,
    Phase,
    Reply,
    ResponseReceived,
)
from trio_mcp.types import DiscoverResult, Implementation, ServerCapabilities, ToolsCapability

INFO = Implementation(name="t", version="0")


def test_initialize_request_on_modern_only_client_raises_value_error_not_index_error() -> None:
    client = Connection("client", info=INFO, versions=MODERN_VERSIONS)
    with pytest.raises(ValueError, match="no legacy revision"):
        client.initialize_request()
    assert client.phase is Phase.NEW
    assert client.outstanding == 0


def test_legacy_only_client_cannot_send_server_discover_unchecked() -> None:
    # The era probe skipped every send check, so a client speaking no modern revision sent
    # a modern-only method with no envelope.
    client = Connection("client", info=INFO, versions=LEGACY_VERSIONS)
    with pytest.raises(McpError) as caught:
        client.send_request("server/discover")
    assert caught.value.code == ErrorCode.METHOD_NOT_FOUND
    assert client.outstanding == 0


def test_dual_era_client_probes_with_server_discover_in_the_modern_envelope() -> None:
    client = Connection("client", info=INFO)
    pending, message = client.send_request("server/discover")
    assert pending.version == MODERN_VERSIONS[0]
    assert message.params is not None
    assert message.params["_meta"][PROTOCOL_VERSION] == MODERN_VERSIONS[0]


def _legacy_pair() -> tuple[Connection, Connection]:
    client = Connection("client", info=INFO)
    server = Connection(
        "server", info=INFO, capabilities=ServerCapabilities(tools=ToolsCapability())
    )
    _, message = client.initialize_request()
    reply = server.receive(rpc.parse(rpc.dumps(message)))
    assert isinstance(reply, Reply)
    answer = client.receive(rpc.parse(rpc.dumps(reply.message)))
    assert isinstance(answer, ResponseReceived)
    _, initialized = client.complete_initialize(answer.response)
    server.receive(rpc.parse(rpc.dumps(initialized)))
    return client, server


def _notification(method: str, params: dict[str, Any]) -> rpc.Message | rpc.InvalidMessage:
    parsed = rpc.parse(orjson.dumps({"jsonrpc": "2.0", "method": method, "params": params}))
    assert not isinstance(parsed, rpc.Batch)
    return parsed


@pytest.mark.parametrize("request_id", [[1], {"id": 1}])
def test_cancel_with_unhashable_request_id_is_dropped_not_raised(request_id: Any) -> None:
    # A list or object requestId reached a dict lookup and raised TypeError out of
    # receive(), which took the whole session down.
    _, server = _legacy_pair()
    event = server.receive(_notification("notifications/cancelled", {"requestId": request_id}))
    assert isinstance(event, Dropped)


@pytest.mark.parametrize("alias", [True, 1.0])
def test_cancel_with_bool_or_float_request_id_does_not_cancel_request_1(alias: Any) -> None:
    # true == 1 and hash(1.0) == hash(1): "requestId": true cancelled request 1.
    _, server = _legacy_pair()
    event = server.receive(rpc.Request(1, "tools/list", None))
    assert isinstance(event, Dispatch)
    dropped = server.receive(_notification("notifications/cancelled", {"requestId": alias}))
    assert isinstance(dropped, Dropped)
    assert not event.request.cancelled
    assert server.respond(event.request, {"tools": []}) is not None


@pytest.mark.parametrize("token", [[2], {"t": 2}, True, 2.0])
def test_progress_with_non_id_token_is_dropped(token: Any) -> None:
    client, _ = _legacy_pair()
    pending, _message = client.send_request("tools/list", progress_token=True)
    assert pending.progress_token == 2
    event = client.receive(
        _notification("notifications/progress", {"progressToken": token, "progress": 1})
    )
    assert isinstance(event, Dropped)


def test_send_request_initialize_cannot_bypass_the_handshake() -> None:
    # send_request("initialize") went out with the phase still NEW (and again once
    # operating): the server moved on while the client never could complete.
    client = Connection("client", info=INFO)
    with pytest.raises(McpError):
        client.send_request("initialize", {})
    assert client.phase is Phase.NEW
    assert client.outstanding == 0
    operating, _ = _legacy_pair()
    with pytest.raises(McpError):
        operating.send_request("initialize", {})
    assert operating.outstanding == 0


def _modern_request(server: Connection, id: int, method: str = "tools/list") -> InboundRequest:
    client = Connection("client", info=INFO, modern_version=MODERN_VERSIONS[0])
    _, message = client.send_request(method)
    event = server.receive(rpc.Request(id, message.method, message.params))
    assert isinstance(event, Dispatch)
    return event.request


def test_respond_to_modern_request_leaves_the_handlers_dict_alone() -> None:
    # respond() stamped serverInfo into the handler's own result dict: a shared constant
    # result grew a _meta the first time it was used.
    server = Connection(
        "server", info=INFO, capabilities=ServerCapabilities(tools=ToolsCapability())
    )
    shared: dict[str, Any] = {"tools": [], "_meta": {"k": "v"}}
    answer = server.respond(_modern_request(server, 1), shared)
    assert answer is not None
    assert answer.result["_meta"][SERVER_INFO] == {"name": "t", "version": "0"}
    assert answer.result["_meta"]["k"] == "v"
    assert shared == {"tools": [], "_meta": {"k": "v"}}


def test_close_abandons_the_peers_requests_in_flight() -> None:
    # close() said "nothing more may be sent", yet respond() still produced answers for
    # the peer's requests that were in flight when the connection closed.
    _, server = _legacy_pair()
    event = server.receive(rpc.Request(7, "tools/list", None))
    assert isinstance(event, Dispatch)
    assert server.in_flight == 1
    server.close()
    assert server.in_flight == 0
    assert event.request.finished
    assert server.respond(event.request, {"tools": []}) is None
    assert server.respond_error(event.request, McpError("x")) is None


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("notifications/initialized", None),
        ("notifications/tools/list_changed", None),
        ("notifications/cancelled", {"requestId": 7}),
    ],
)
def test_closed_connection_drops_notifications(method: str, params: Any) -> None:
    # Requests and responses were dropped after close, but notifications still reached
    # the application (and a cancellation still found its request).
    client, server = _legacy_pair()
    server.receive(rpc.Request(7, "tools/list", None))
    client.close()
    server.close()
    for conn in (client, server):
        assert isinstance(conn.receive(rpc.Notification(method, params)), Dropped)


@pytest.mark.parametrize("modern", [False, True])
def test_respond_with_a_non_object_result_raises_and_keeps_the_request_answerable(
    modern: bool,
) -> None:
    # respond() marked the request answered before building the answer: a result that was
    # not an object then raised (modern) or went out as a non-object result (legacy), and
    # either way the request could no longer get the -32603 it deserved.
    if modern:
        server = Connection(
            "server", info=INFO, capabilities=ServerCapabilities(tools=ToolsCapability())
        )
        request = _modern_request(server, 1)
    else:
        _, server = _legacy_pair()
        event = server.receive(rpc.Request(1, "tools/list", None))
        assert isinstance(event, Dispatch)
        request = event.request
    with pytest.raises(TypeError, match="JSON object"):
        server.respond(request, ["not", "an", "object"])
    assert not request.finished
    assert server.in_flight == 1
    answer = server.respond_error(request, McpError("Internal error"))
    assert answer is not None
    assert answer.error.code == ErrorCode.INTERNAL_ERROR


def test_send_checks_follow_new_peer_capabilities_after_rediscovery() -> None:
    # The send-check cache was keyed on id(peer_capabilities). After record_discovery()
    # replaced the object, a new one at a recycled address read the old verdicts: the
    # client sent tools/list to a server without tools, or refused it to one with tools.
    client = Connection("client", info=INFO, modern_version=MODERN_VERSIONS[0])
    for i in range(60):
        has_tools = i % 3 == 0
        caps = ServerCapabilities(tools=ToolsCapability()) if has_tools else ServerCapabilities()
        client.record_discovery(
            DiscoverResult(supported_versions=list(MODERN_VERSIONS), capabilities=caps)
        )
        try:
            client.send_request("tools/list")
        except McpError:
            sent = False
        else:
            sent = True
        assert sent == has_tools, f"round {i}"
