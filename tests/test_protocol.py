"""The sans-IO core: lifecycle, version negotiation, capabilities, envelopes, tables."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from trio_mcp import (
    ErrorCode,
    McpError,
    UnsupportedProtocolVersion,
    jsonrpc,
    protocol as p,
    types as t,
)
from trio_mcp.client import EraCache

INFO = t.Implementation(name="x", version="1")
MODERN = "2026-07-28"


def client(**kw: Any) -> p.Connection:
    return p.Connection("client", info=INFO, **kw)


def server(**kw: Any) -> p.Connection:
    kw.setdefault(
        "capabilities", t.ServerCapabilities(tools=t.ToolsCapability(list_changed=True), logging={})
    )
    return p.Connection("server", info=INFO, **kw)


def wire(message: jsonrpc.Message) -> jsonrpc.Message | jsonrpc.Batch | jsonrpc.InvalidMessage:
    return jsonrpc.parse(jsonrpc.dumps(message))


def handshake(c: p.Connection, s: p.Connection, version: str | None = None) -> t.InitializeResult:
    _, request = c.initialize_request(version)
    reply = s.receive(wire(request))
    assert isinstance(reply, p.Reply)
    answer = c.receive(wire(reply.message))
    assert isinstance(answer, p.ResponseReceived)
    result, initialized = c.complete_initialize(answer.response)
    s.receive(wire(initialized))
    return result


def error_of(event: p.ReceiveEvent) -> tuple[int, Any]:
    assert isinstance(event, p.Reply), event
    assert isinstance(event.message, jsonrpc.ErrorResponse), event.message
    return event.message.error.code, event.message.error.data


def envelope(version: str = MODERN, **extra: Any) -> dict[str, Any]:
    meta = {p.PROTOCOL_VERSION: version, p.CLIENT_CAPABILITIES: {}}
    meta.update(extra)
    return {"_meta": meta}


# -- legacy lifecycle ---------------------------------------------------------------------------


def test_handshake_moves_both_sides_to_operating() -> None:
    c, s = client(), server()
    assert c.phase is s.phase is p.Phase.NEW
    result = handshake(c, s)
    assert result.protocol_version == p.LATEST_LEGACY_VERSION
    assert c.phase is s.phase is p.Phase.OPERATING
    assert c.version == s.version == p.LATEST_LEGACY_VERSION
    assert c.peer_info == INFO and s.peer_info == INFO


@pytest.mark.parametrize("version", p.LEGACY_VERSIONS)
def test_server_echoes_a_supported_requested_version(version: str) -> None:
    c, s = client(), server()
    assert handshake(c, s, version).protocol_version == version
    assert s.version == version


@pytest.mark.parametrize("requested", ["2024-01-01", "1.0", "", "2099-01-01", MODERN])
def test_server_offers_its_latest_legacy_version_otherwise(requested: str) -> None:
    s = server()
    reply = s.receive(
        jsonrpc.JsonRpcRequest(
            1,
            "initialize",
            {
                "protocolVersion": requested,
                "capabilities": {},
                "clientInfo": {"name": "c", "version": "1"},
            },
        )
    )
    assert isinstance(reply, p.Reply) and isinstance(reply.message, jsonrpc.ResultResponse)
    assert reply.message.result["protocolVersion"] == p.LATEST_LEGACY_VERSION


def test_client_refuses_a_version_it_does_not_speak() -> None:
    c = client()
    pending, _ = c.initialize_request()
    with pytest.raises(UnsupportedProtocolVersion) as raised:
        c.complete_initialize(
            jsonrpc.ResultResponse(
                pending.id,
                {
                    "protocolVersion": "1999-01-01",
                    "capabilities": {},
                    "serverInfo": {"name": "s", "version": "1"},
                },
            )
        )
    assert raised.value.requested == "1999-01-01"
    assert c.phase is p.Phase.NEW  # may retry or fall back


def test_client_surfaces_an_initialize_error() -> None:
    c = client()
    pending, _ = c.initialize_request()
    with pytest.raises(McpError) as raised:
        c.complete_initialize(
            jsonrpc.ErrorResponse(pending.id, t.Error(code=-32602, message="nope"))
        )
    assert raised.value.code == -32602
    assert c.phase is p.Phase.NEW


def test_malformed_initialize_params_get_invalid_params() -> None:
    s = server()
    assert (
        error_of(s.receive(jsonrpc.JsonRpcRequest(1, "initialize", {"protocolVersion": 5})))[0]
        == -32602
    )
    assert s.phase is p.Phase.NEW


def test_only_the_handshake_and_ping_before_initialization() -> None:
    legacy_only = server(versions=p.LEGACY_VERSIONS)
    assert (
        error_of(legacy_only.receive(jsonrpc.JsonRpcRequest(1, "tools/list", None)))[0]
        == ErrorCode.INVALID_REQUEST
    )
    ping = legacy_only.receive(jsonrpc.JsonRpcRequest(2, "ping", None))
    assert isinstance(ping, p.Reply) and ping.message == jsonrpc.ResultResponse(2, {})


def test_a_dual_era_server_tells_a_request_without_handshake_or_version_which_error_it_made() -> (
    None
):
    # No sign of the modern era: a legacy client that did not initialize first gets the
    # legacy error, as from a legacy server (basic/versioning: only modern _meta selects
    # the modern era), with a word for a modern client that forgot the version.
    dual = server()
    refusal = dual.receive(jsonrpc.JsonRpcRequest(1, "tools/list", None))
    assert error_of(refusal)[0] == ErrorCode.INVALID_REQUEST
    message = refusal.message.error.message  # type: ignore[union-attr]
    assert "before initialization" in message and "protocolVersion" in message
    assert dual.phase is p.Phase.NEW
    # Any sign of the modern era (another envelope field, a modern-only method): the modern
    # envelope error, -32602.
    capabilities_only = {"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}
    for request in (
        jsonrpc.JsonRpcRequest(2, "tools/list", capabilities_only),
        jsonrpc.JsonRpcRequest(3, "server/discover", None),
        jsonrpc.JsonRpcRequest(4, "subscriptions/listen", {}),
    ):
        assert error_of(dual.receive(request))[0] == ErrorCode.INVALID_PARAMS, request
    # A server that speaks no legacy revision has only the modern error to give.
    modern_only = server(versions=p.MODERN_VERSIONS)
    assert (
        error_of(modern_only.receive(jsonrpc.JsonRpcRequest(1, "tools/list", None)))[0]
        == ErrorCode.INVALID_PARAMS
    )
    # The handshake still works after the refusal.
    c = client()
    handshake(c, dual)
    assert dual.phase is p.Phase.OPERATING


def test_a_second_initialize_is_refused() -> None:
    c, s = client(), server()
    handshake(c, s)
    again = s.receive(
        jsonrpc.JsonRpcRequest(
            99,
            "initialize",
            {
                "protocolVersion": p.LATEST_LEGACY_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "c", "version": "1"},
            },
        )
    )
    assert error_of(again)[0] == ErrorCode.INVALID_REQUEST
    assert s.phase is p.Phase.OPERATING


def test_client_may_not_send_requests_before_initializing() -> None:
    c = client()
    with pytest.raises(McpError, match="initialize first"):
        c.send_request("tools/list")
    c.send_request("ping")  # allowed


def test_server_serves_a_client_that_forgot_initialized() -> None:
    c, s = client(), server()
    _, request = c.initialize_request()
    reply = s.receive(wire(request))
    assert isinstance(reply, p.Reply)
    assert s.phase is p.Phase.INITIALIZING
    assert isinstance(s.receive(jsonrpc.JsonRpcRequest(5, "tools/list", None)), p.Dispatch)


# Found by the lifecycle fuzzer (fuzz/).
def test_initialize_request_on_modern_only_client_raises_value_error_not_index_error() -> None:
    client = p.Connection("client", info=INFO, versions=p.MODERN_VERSIONS)
    with pytest.raises(ValueError, match="no legacy revision"):
        client.initialize_request()
    assert client.phase is p.Phase.NEW
    assert client.outstanding == 0


# Found by the lifecycle fuzzer (fuzz/).
def test_send_request_initialize_cannot_bypass_the_handshake() -> None:
    # send_request("initialize") went out with the phase still NEW (and again once
    # operating): the server moved on while the client never could complete.
    client = p.Connection("client", info=INFO)
    with pytest.raises(McpError):
        client.send_request("initialize", {})
    assert client.phase is p.Phase.NEW
    assert client.outstanding == 0
    operating, _ = _legacy_pair()
    with pytest.raises(McpError):
        operating.send_request("initialize", {})
    assert operating.outstanding == 0


# -- capabilities -------------------------------------------------------------------------------------


def test_server_refuses_methods_it_did_not_declare() -> None:
    c, s = client(), server(capabilities=t.ServerCapabilities())
    handshake(c, s)
    for method in (
        "tools/list",
        "tools/call",
        "prompts/list",
        "resources/read",
        "completion/complete",
        "logging/setLevel",
    ):
        assert (
            error_of(s.receive(jsonrpc.JsonRpcRequest(1, method, {"name": "x", "uri": "u"})))[0]
            == -32601
        )


def test_client_never_sends_what_the_server_did_not_declare() -> None:
    c, s = client(), server(capabilities=t.ServerCapabilities(tools=t.ToolsCapability()))
    handshake(c, s)
    c.send_request("tools/list")
    with pytest.raises(McpError, match="prompts") as raised:
        c.send_request("prompts/list")
    assert raised.value.code == -32601
    with pytest.raises(McpError, match="subscribe"):
        c.send_request("resources/subscribe", {"uri": "x"})


def test_notifications_need_our_own_capability() -> None:
    c, s = (
        client(),
        server(capabilities=t.ServerCapabilities(tools=t.ToolsCapability(list_changed=False))),
    )
    handshake(c, s)
    with pytest.raises(McpError, match="listChanged"):
        s.send_notification("notifications/tools/list_changed")
    with pytest.raises(McpError, match="logging"):
        s.send_notification("notifications/message", {"level": "info", "data": 1})


def test_server_requests_need_the_clients_capability() -> None:
    c = client(capabilities=t.ClientCapabilities(roots=t.RootsCapability()))
    s = server()
    handshake(c, s)
    s.send_request("roots/list")
    with pytest.raises(McpError, match="sampling"):
        s.send_request("sampling/createMessage", {"messages": [], "maxTokens": 1})
    # and a client refuses what it did not declare
    assert (
        error_of(
            c.receive(
                jsonrpc.JsonRpcRequest(
                    1, "sampling/createMessage", {"messages": [], "maxTokens": 1}
                )
            )
        )[0]
        == -32601
    )


def test_completion_needs_no_capability_with_2024_11_05_peers() -> None:
    c, s = client(), server(capabilities=t.ServerCapabilities(prompts=t.PromptsCapability()))
    handshake(c, s, "2024-11-05")
    c.send_request(
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": ""}},
    )
    c2, s2 = client(), server(capabilities=t.ServerCapabilities(prompts=t.PromptsCapability()))
    handshake(c2, s2, "2025-11-25")
    with pytest.raises(McpError):
        c2.send_request("completion/complete", {})


def test_methods_outside_the_negotiated_version_are_refused() -> None:
    c, s = (
        client(capabilities=t.ClientCapabilities(elicitation=t.ElicitationCapability())),
        server(),
    )
    handshake(c, s, "2025-03-26")
    with pytest.raises(McpError, match="has no method"):
        s.send_request("elicitation/create", {"message": "m", "requestedSchema": {}})
    assert error_of(s.receive(jsonrpc.JsonRpcRequest(1, "server/discover", None)))[0] == -32601


# Found by the lifecycle fuzzer (fuzz/).
def test_send_checks_follow_new_peer_capabilities_after_rediscovery() -> None:
    # The send-check cache was keyed on id(peer_capabilities). After record_discovery()
    # replaced the object, a new one at a recycled address read the old verdicts: the
    # client sent tools/list to a server without tools, or refused it to one with tools.
    client = p.Connection("client", info=INFO, modern_version=p.MODERN_VERSIONS[0])
    for i in range(60):
        has_tools = i % 3 == 0
        caps = (
            t.ServerCapabilities(tools=t.ToolsCapability()) if has_tools else t.ServerCapabilities()
        )
        client.record_discovery(
            t.DiscoverResult(supported_versions=list(p.MODERN_VERSIONS), capabilities=caps)
        )
        try:
            client.send_request("tools/list")
        except McpError:
            sent = False
        else:
            sent = True
        assert sent == has_tools, f"round {i}"


# -- the modern envelope --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params",
    [
        None,
        {},
        {"_meta": "x"},
        {"_meta": {p.CLIENT_CAPABILITIES: {}}},
        {"_meta": {p.PROTOCOL_VERSION: 2026, p.CLIENT_CAPABILITIES: {}}},
        {"_meta": {p.PROTOCOL_VERSION: MODERN}},
        {"_meta": {p.PROTOCOL_VERSION: MODERN, p.CLIENT_CAPABILITIES: []}},
        {"_meta": {p.PROTOCOL_VERSION: MODERN, p.CLIENT_CAPABILITIES: {"roots": 5}}},
        {
            "_meta": {
                p.PROTOCOL_VERSION: MODERN,
                p.CLIENT_CAPABILITIES: {},
                p.CLIENT_INFO: {"name": 1},
            }
        },
        {"_meta": {p.PROTOCOL_VERSION: MODERN, p.CLIENT_CAPABILITIES: {}, p.LOG_LEVEL: "loud"}},
    ],
)
def test_malformed_envelopes_get_invalid_params(params: Any) -> None:
    assert (
        error_of(server().receive(jsonrpc.JsonRpcRequest(7, "server/discover", params)))[0]
        == -32602
    )


@pytest.mark.parametrize("version", ["v999.0.0", "2025-11-25", "2027-01-01"])
def test_unsupported_versions_list_what_we_support(version: str) -> None:
    s = server()
    code, data = error_of(
        s.receive(jsonrpc.JsonRpcRequest(301, "server/discover", envelope(version)))
    )
    assert code == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION
    assert data == {"supported": list(p.MODERN_VERSIONS), "requested": version}
    discovered = s.receive(jsonrpc.JsonRpcRequest(1, "server/discover", envelope()))
    assert isinstance(discovered, p.Reply) and isinstance(
        discovered.message, jsonrpc.ResultResponse
    )
    assert set(data["supported"]) <= set(discovered.message.result["supportedVersions"])


def test_discover_answers_with_identity_capabilities_and_cache_hints() -> None:
    s = server(instructions="hello", cache_ttl_ms=5000, cache_scope="private")
    reply = s.receive(jsonrpc.JsonRpcRequest("d", "server/discover", envelope()))
    assert isinstance(reply, p.Reply) and isinstance(reply.message, jsonrpc.ResultResponse)
    result = reply.message.result
    assert result["resultType"] == "complete"
    assert result["supportedVersions"] == list(p.MODERN_VERSIONS)
    assert result["capabilities"] == {"tools": {"listChanged": True}, "logging": {}}
    assert result["instructions"] == "hello"
    assert (result["ttlMs"], result["cacheScope"]) == (5000, "private")
    assert result["_meta"][p.SERVER_INFO] == {"name": "x", "version": "1"}


def test_client_info_is_optional_and_legacy_methods_are_unknown_to_modern_requests() -> None:
    s = server()
    assert isinstance(s.receive(jsonrpc.JsonRpcRequest(1, "tools/list", envelope())), p.Dispatch)
    for method in ("initialize", "ping", "logging/setLevel", "resources/subscribe"):
        assert error_of(s.receive(jsonrpc.JsonRpcRequest(2, method, envelope())))[0] == -32601


def test_modern_requests_carry_the_envelope_and_the_result_names_the_server() -> None:
    c, s = client(modern_version=MODERN), server()
    c.log_level = None
    c.request_log_level = "warning"
    pending, request = c.send_request("tools/call", {"name": "echo"})
    meta = request.params["_meta"]  # type: ignore[index]
    assert meta[p.PROTOCOL_VERSION] == MODERN and meta[p.CLIENT_INFO] == {
        "name": "x",
        "version": "1",
    }
    assert meta[p.LOG_LEVEL] == "warning"
    event = s.receive(wire(request))
    assert isinstance(event, p.Dispatch)
    assert event.request.envelope is not None and event.request.envelope.log_level == "warning"
    response = s.respond(event.request, t.CallToolResult(content=[]))
    assert response is not None
    assert response.result == {
        "resultType": "complete",
        "content": [],
        "_meta": {p.SERVER_INFO: {"name": "x", "version": "1"}},
    }
    read = c.read_result(pending, response.result)
    assert isinstance(read, t.CallToolResult)


def test_a_modern_server_sends_no_requests() -> None:
    s = server()
    s.receive(jsonrpc.JsonRpcRequest(1, "tools/list", envelope()))
    assert s.phase is p.Phase.MODERN
    with pytest.raises(McpError, match="InputRequiredResult"):
        s.send_request("sampling/createMessage", {})


def _modern_request(server: p.Connection, id: int, method: str = "tools/list") -> p.InboundRequest:
    client = p.Connection("client", info=INFO, modern_version=p.MODERN_VERSIONS[0])
    _, message = client.send_request(method)
    event = server.receive(jsonrpc.JsonRpcRequest(id, message.method, message.params))
    assert isinstance(event, p.Dispatch)
    return event.request


# Found by the lifecycle fuzzer (fuzz/).
def test_respond_to_modern_request_leaves_the_handlers_dict_alone() -> None:
    # respond() stamped serverInfo into the handler's own result dict: a shared constant
    # result grew a _meta the first time it was used.
    server = p.Connection(
        "server", info=INFO, capabilities=t.ServerCapabilities(tools=t.ToolsCapability())
    )
    shared: dict[str, Any] = {"tools": [], "_meta": {"k": "v"}}
    answer = server.respond(_modern_request(server, 1), shared)
    assert answer is not None
    assert answer.result["_meta"][p.SERVER_INFO] == {"name": "x", "version": "1"}
    assert answer.result["_meta"]["k"] == "v"
    assert shared == {"tools": [], "_meta": {"k": "v"}}


# -- the tables of requests in flight --------------------------------------------------------------


def test_ids_are_unique_among_outstanding_requests() -> None:
    c, s = client(), server()
    handshake(c, s)
    ids = {c.send_request("tools/list")[0].id for _ in range(50)}
    assert len(ids) == 50
    assert c.outstanding == 50


def test_unknown_and_late_responses_are_dropped_and_counted() -> None:
    c, s = client(), server()
    handshake(c, s)
    assert isinstance(c.receive(jsonrpc.ResultResponse(12345, {})), p.Dropped)
    pending, _ = c.send_request("tools/list")
    assert c.cancel(pending) is not None
    assert isinstance(c.receive(jsonrpc.ResultResponse(pending.id, {"tools": []})), p.Dropped)
    assert c.statistics().responses_dropped == 2


def test_duplicate_inbound_ids_are_refused_while_the_first_runs() -> None:
    c, s = client(), server()
    handshake(c, s)
    first = s.receive(jsonrpc.JsonRpcRequest(5, "tools/list", None))
    assert isinstance(first, p.Dispatch)
    assert (
        error_of(s.receive(jsonrpc.JsonRpcRequest(5, "tools/list", None)))[0]
        == ErrorCode.INVALID_REQUEST
    )
    assert s.respond(first.request, t.ListToolsResult(tools=[])) is not None
    assert isinstance(
        s.receive(jsonrpc.JsonRpcRequest(5, "tools/list", None)), p.Dispatch
    )  # free again


def test_cancelled_requests_are_never_answered() -> None:
    c, s = client(), server()
    handshake(c, s)
    dispatch = s.receive(jsonrpc.JsonRpcRequest(8, "tools/list", None))
    assert isinstance(dispatch, p.Dispatch)
    cancel = s.receive(
        jsonrpc.JsonRpcNotification("notifications/cancelled", {"requestId": 8, "reason": "bored"})
    )
    assert isinstance(cancel, p.CancelRequested) and cancel.reason == "bored"
    assert s.respond(dispatch.request, t.ListToolsResult(tools=[])) is None
    assert s.respond_error(dispatch.request, McpError("x")) is None
    # cancelling something unknown or finished is ignored
    assert isinstance(
        s.receive(jsonrpc.JsonRpcNotification("notifications/cancelled", {"requestId": 8})),
        p.Dropped,
    )
    assert isinstance(
        s.receive(jsonrpc.JsonRpcNotification("notifications/cancelled", {})), p.Dropped
    )


def test_initialize_cannot_be_cancelled() -> None:
    c, s = client(), server()
    pending, request = c.initialize_request()
    assert c.cancel(pending) is None  # nothing is sent
    c2 = client()
    _, request2 = c2.initialize_request()
    reply = s.receive(wire(request2))
    assert isinstance(reply, p.Reply)  # answered at once; a cancel for it is ignored
    assert isinstance(
        s.receive(
            jsonrpc.JsonRpcNotification("notifications/cancelled", {"requestId": request2.id})
        ),
        p.Dropped,
    )


def test_progress_is_routed_to_its_request_and_dropped_after() -> None:
    c, s = client(), server()
    handshake(c, s)
    pending, request = c.send_request("tools/list", progress_token=True)
    assert request.params == {"_meta": {"progressToken": pending.id}}
    dispatch = s.receive(wire(request))
    assert isinstance(dispatch, p.Dispatch) and dispatch.request.progress_token == pending.id
    progress = c.receive(
        jsonrpc.JsonRpcNotification(
            "notifications/progress", {"progressToken": pending.id, "progress": 1, "total": 2}
        )
    )
    assert isinstance(progress, p.ProgressReceived) and progress.request is pending
    response = s.respond(dispatch.request, t.ListToolsResult(tools=[]))
    assert response is not None
    assert isinstance(c.receive(wire(response)), p.ResponseReceived)
    late = c.receive(
        jsonrpc.JsonRpcNotification(
            "notifications/progress", {"progressToken": pending.id, "progress": 2}
        )
    )
    assert isinstance(late, p.Dropped)
    assert c.statistics().progress_dropped == 1


def test_a_bad_progress_token_is_refused() -> None:
    c, s = client(), server()
    handshake(c, s)
    assert (
        error_of(
            s.receive(jsonrpc.JsonRpcRequest(1, "tools/list", {"_meta": {"progressToken": [1]}}))
        )[0]
        == -32602
    )


def test_closing_fails_every_outstanding_request_and_refuses_more() -> None:
    c, s = client(), server()
    handshake(c, s)
    sent = [c.send_request("tools/list")[0] for _ in range(3)]
    assert c.close() == sent
    assert c.outstanding == 0
    with pytest.raises(McpError):
        c.send_request("tools/list")
    assert isinstance(s.close(), list) and isinstance(
        s.receive(jsonrpc.JsonRpcRequest(1, "ping", None)), p.Dropped
    )


def test_logging_levels() -> None:
    c, s = client(), server()
    handshake(c, s)
    assert s.wants_log("debug")  # never set: everything
    set_level = s.receive(jsonrpc.JsonRpcRequest(3, "logging/setLevel", {"level": "warning"}))
    assert isinstance(set_level, p.Reply)
    assert s.log_level == "warning"
    assert not s.wants_log("info") and s.wants_log("error")
    modern = server()
    asked = modern.receive(
        jsonrpc.JsonRpcRequest(1, "tools/list", envelope(**{p.LOG_LEVEL: "info"}))
    )
    silent = modern.receive(jsonrpc.JsonRpcRequest(2, "tools/list", envelope()))
    assert isinstance(asked, p.Dispatch) and isinstance(silent, p.Dispatch)
    assert modern.wants_log("info", asked.request) and not modern.wants_log("debug", asked.request)
    assert not modern.wants_log("emergency", silent.request)


def _legacy_pair() -> tuple[p.Connection, p.Connection]:
    client = p.Connection("client", info=INFO)
    server = p.Connection(
        "server", info=INFO, capabilities=t.ServerCapabilities(tools=t.ToolsCapability())
    )
    _, message = client.initialize_request()
    reply = server.receive(jsonrpc.parse(jsonrpc.dumps(message)))
    assert isinstance(reply, p.Reply)
    answer = client.receive(jsonrpc.parse(jsonrpc.dumps(reply.message)))
    assert isinstance(answer, p.ResponseReceived)
    _, initialized = client.complete_initialize(answer.response)
    server.receive(jsonrpc.parse(jsonrpc.dumps(initialized)))
    return client, server


def _notification(method: str, params: dict[str, Any]) -> jsonrpc.Message | jsonrpc.InvalidMessage:
    parsed = jsonrpc.parse(orjson.dumps({"jsonrpc": "2.0", "method": method, "params": params}))
    assert not isinstance(parsed, jsonrpc.Batch)
    return parsed


# Found by the lifecycle fuzzer (fuzz/).
@pytest.mark.parametrize("request_id", [[1], {"id": 1}])
def test_cancel_with_unhashable_request_id_is_dropped_not_raised(request_id: Any) -> None:
    # A list or object requestId reached a dict lookup and raised TypeError out of
    # receive(), which took the whole session down.
    _, server = _legacy_pair()
    event = server.receive(_notification("notifications/cancelled", {"requestId": request_id}))
    assert isinstance(event, p.Dropped)


# Found by the lifecycle fuzzer (fuzz/).
@pytest.mark.parametrize("alias", [True, 1.0])
def test_cancel_with_bool_or_float_request_id_does_not_cancel_request_1(alias: Any) -> None:
    # true == 1 and hash(1.0) == hash(1): "requestId": true cancelled request 1.
    _, server = _legacy_pair()
    event = server.receive(jsonrpc.JsonRpcRequest(1, "tools/list", None))
    assert isinstance(event, p.Dispatch)
    dropped = server.receive(_notification("notifications/cancelled", {"requestId": alias}))
    assert isinstance(dropped, p.Dropped)
    assert not event.request.cancelled
    assert server.respond(event.request, {"tools": []}) is not None


# Found by the lifecycle fuzzer (fuzz/).
@pytest.mark.parametrize("token", [[2], {"t": 2}, True, 2.0])
def test_progress_with_non_id_token_is_dropped(token: Any) -> None:
    client, _ = _legacy_pair()
    pending, _message = client.send_request("tools/list", progress_token=True)
    assert pending.progress_token == 2
    event = client.receive(
        _notification("notifications/progress", {"progressToken": token, "progress": 1})
    )
    assert isinstance(event, p.Dropped)


# Found by the lifecycle fuzzer (fuzz/).
def test_close_abandons_the_peers_requests_in_flight() -> None:
    # close() said "nothing more may be sent", yet respond() still produced answers for
    # the peer's requests that were in flight when the connection closed.
    _, server = _legacy_pair()
    event = server.receive(jsonrpc.JsonRpcRequest(7, "tools/list", None))
    assert isinstance(event, p.Dispatch)
    assert server.in_flight == 1
    server.close()
    assert server.in_flight == 0
    assert event.request.finished
    assert server.respond(event.request, {"tools": []}) is None
    assert server.respond_error(event.request, McpError("x")) is None


# Found by the lifecycle fuzzer (fuzz/).
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
    server.receive(jsonrpc.JsonRpcRequest(7, "tools/list", None))
    client.close()
    server.close()
    for conn in (client, server):
        assert isinstance(conn.receive(jsonrpc.JsonRpcNotification(method, params)), p.Dropped)


# Found by the lifecycle fuzzer (fuzz/).
@pytest.mark.parametrize("modern", [False, True])
def test_respond_with_a_non_object_result_raises_and_keeps_the_request_answerable(
    modern: bool,
) -> None:
    # respond() marked the request answered before building the answer: a result that was
    # not an object then raised (modern) or went out as a non-object result (legacy), and
    # either way the request could no longer get the -32603 it deserved.
    if modern:
        server = p.Connection(
            "server", info=INFO, capabilities=t.ServerCapabilities(tools=t.ToolsCapability())
        )
        request = _modern_request(server, 1)
    else:
        _, server = _legacy_pair()
        event = server.receive(jsonrpc.JsonRpcRequest(1, "tools/list", None))
        assert isinstance(event, p.Dispatch)
        request = event.request
    with pytest.raises(TypeError, match="JSON object"):
        server.respond(request, ["not", "an", "object"])
    assert not request.finished
    assert server.in_flight == 1
    answer = server.respond_error(request, McpError("Internal error"))
    assert answer is not None
    assert answer.error.code == ErrorCode.INTERNAL_ERROR


# -- era detection ---------------------------------------------------------------------------------


def discover_result(versions: list[str]) -> jsonrpc.ResultResponse:
    return jsonrpc.ResultResponse(
        1, {"supportedVersions": versions, "capabilities": {}, "ttlMs": 0, "cacheScope": "public"}
    )


def test_judging_the_probe() -> None:
    modern = p.judge_probe(discover_result([MODERN]), p.MODERN_VERSIONS)
    assert (modern.era, modern.version) == ("modern", MODERN) and modern.discovery is not None
    by_error = p.judge_probe(
        jsonrpc.ErrorResponse(
            1, t.Error(code=-32022, message="x", data={"supported": [MODERN], "requested": "y"})
        ),
        p.MODERN_VERSIONS,
    )
    assert (by_error.era, by_error.version) == ("modern", MODERN)
    for legacy_answer in (
        None,
        jsonrpc.ErrorResponse(1, t.Error(code=-32601, message="no")),
        jsonrpc.ErrorResponse(1, t.Error(code=-32602, message="no")),
        jsonrpc.ErrorResponse(1, t.Error(code=-32600, message="not initialized")),
        jsonrpc.ResultResponse(1, {"weird": True}),
        jsonrpc.ErrorResponse(1, t.Error(code=-32022, message="x", data="garbage")),
    ):
        assert p.judge_probe(legacy_answer, p.MODERN_VERSIONS).era == "legacy"
    with pytest.raises(UnsupportedProtocolVersion):
        p.judge_probe(discover_result(["2030-01-01"]), p.MODERN_VERSIONS)


def test_the_era_cache_remembers_per_peer() -> None:
    cache = EraCache()
    cache.remember("python server.py", "modern", MODERN)
    assert cache.get("python server.py") == ("modern", MODERN)
    assert cache.get("other") is None
    cache.forget("python server.py")
    assert cache.get("python server.py") is None


# Found by the lifecycle fuzzer (fuzz/).
def test_legacy_only_client_cannot_send_server_discover_unchecked() -> None:
    # The era probe skipped every send check, so a client speaking no modern revision sent
    # a modern-only method with no envelope.
    client = p.Connection("client", info=INFO, versions=p.LEGACY_VERSIONS)
    with pytest.raises(McpError) as caught:
        client.send_request("server/discover")
    assert caught.value.code == ErrorCode.METHOD_NOT_FOUND
    assert client.outstanding == 0


# Found by the lifecycle fuzzer (fuzz/).
def test_dual_era_client_probes_with_server_discover_in_the_modern_envelope() -> None:
    client = p.Connection("client", info=INFO)
    pending, message = client.send_request("server/discover")
    assert pending.version == p.MODERN_VERSIONS[0]
    assert message.params is not None
    assert message.params["_meta"][p.PROTOCOL_VERSION] == p.MODERN_VERSIONS[0]


def test_the_lifecycle_diagram_is_drawn_from_the_tables() -> None:
    diagram = p.mermaid("server")
    assert "new --> initializing: receive initialize" in diagram
    assert "initializing --> operating: receive initialized" in diagram
    assert "new --> modern: modern request" in diagram
    assert p.next_phase("server", p.Phase.OPERATING, p.Event.RECEIVE_INITIALIZE) is None
