"""The client's own behaviour: era detection, what it knows about the server, checking
structured content against output schemas, and notifications it sends."""

from __future__ import annotations

from contextlib import suppress
from typing import Any

import pytest
import trio
from feature_harness import ERAS, LEGACY, MODERN, open_pair, open_scripted

from trio_mcp import Context, McpError, ProtocolError, Server, jsonrpc as rpc, open_client
from trio_mcp.client import EraCache
from trio_mcp.transports import memory_stream_pair
from trio_mcp.types import RootsListChangedNotification, ToolsCapability


@pytest.fixture(params=ERAS)
def version(request: pytest.FixtureRequest) -> str:
    """Every test that takes ``version`` runs in both eras."""
    return request.param  # type: ignore[no-any-return]


def make_server(**options: Any) -> Server:
    server = Server(
        "demo", version="1.2", title="Demo", instructions="Be nice.", tools=True, **options
    )

    @server.tool()
    def echo(text: str) -> str:
        return text

    return server


async def test_the_client_detects_a_modern_server() -> None:
    async with open_pair(make_server()) as pair:
        assert pair.client.era == "modern"
        assert pair.client.protocol_version == MODERN
        (probe, *_) = pair.client_sent.requests()
    assert probe.method == "server/discover"
    assert pair.client_sent.requests("initialize") == []


async def test_the_client_falls_back_to_initialize_for_a_legacy_server() -> None:
    async with open_pair(make_server(versions=LEGACY)) as pair:
        assert pair.client.era == "legacy"
        assert pair.client.protocol_version == "2025-11-25"
        result = await pair.client.call_tool("echo", {"text": "hi"})
    assert result.content[0].text == "hi"  # type: ignore[union-attr]
    assert [r.method for r in pair.client_sent.requests()][:2] == ["server/discover", "initialize"]


@pytest.mark.parametrize("revision", LEGACY)
async def test_the_server_answers_the_revision_the_client_asks_for(revision: str) -> None:
    async with open_pair(make_server(), protocol_version=revision) as pair:
        assert pair.client.protocol_version == revision
        assert (await pair.client.call_tool("echo", {"text": "x"})).content


async def test_an_era_cache_skips_the_probe() -> None:
    cache = EraCache()
    async with open_pair(make_server(), era_cache=cache, peer="demo") as pair:
        assert pair.client.era == "modern"
    async with open_pair(make_server(), era_cache=cache, peer="demo") as pair:
        requests = pair.client_sent.requests()
    assert cache.get("demo") == ("modern", MODERN)
    assert len(requests) == 1  # server/discover, no probe before it


async def test_what_the_client_knows_about_the_server(version: str) -> None:
    async with open_pair(make_server(), protocol_version=version) as pair:
        client = pair.client
        await client.ping()
        assert client.server_info is not None
        assert (client.server_info.name, client.server_info.version) == ("demo", "1.2")
        assert client.server_info.title == "Demo"
        assert client.instructions == "Be nice."
        assert client.server_capabilities.tools == ToolsCapability(list_changed=True)
        assert client.server_capabilities.logging == {}


# -- output schemas --------------------------------------------------------------------------

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def answers(structured: Any, *, is_error: bool = False) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": "x"}]}
    if structured is not None:
        result["structuredContent"] = structured
    if is_error:
        result["isError"] = True
    return {
        "tools/list": {
            "tools": [{"name": "count", "inputSchema": {"type": "object"}, "outputSchema": SCHEMA}]
        },
        "tools/call": result,
    }


async def test_structured_content_that_matches_is_accepted(version: str) -> None:
    async with open_scripted(answers({"n": 3}), version) as client:
        result = await client.call_tool("count")
    assert result.structured_content == {"n": 3}


@pytest.mark.parametrize(
    ("structured", "needle"),
    [({"n": "three"}, "'three' is not of type 'integer'"), (None, "no structured content")],
)
async def test_structured_content_that_breaks_the_schema_is_a_protocol_error(
    version: str, structured: Any, needle: str
) -> None:
    async with open_scripted(answers(structured), version) as client:
        with pytest.raises(ProtocolError, match=needle):
            await client.call_tool("count")


async def test_error_results_and_opted_out_clients_are_not_checked(version: str) -> None:
    async with open_scripted(answers({"n": "x"}, is_error=True), version) as client:
        assert (await client.call_tool("count")).is_error
    async with open_scripted(answers({"n": "x"}), version, validate_output=False) as client:
        assert (await client.call_tool("count")).structured_content == {"n": "x"}


async def test_the_client_learns_output_schemas_from_the_list(version: str) -> None:
    async with open_scripted(answers({"n": "x"}), version) as client:
        with pytest.raises(ProtocolError):
            await client.call_tool("count")  # lists the tools first to learn the schema
        await client.list_tools()
        with pytest.raises(ProtocolError):
            await client.call_tool("count")


async def test_an_invalid_output_schema_is_reported(version: str) -> None:
    scripted = answers({"n": 1})
    scripted["tools/list"]["tools"][0]["outputSchema"] = {"type": "object", "required": 5}
    async with open_scripted(scripted, version) as client:
        with pytest.raises(ProtocolError, match="invalid outputSchema"):
            await client.call_tool("count")


# -- notifications ---------------------------------------------------------------------------


async def test_roots_list_changed_reaches_a_legacy_server(autojump_clock: Any) -> None:
    server = make_server()
    changed = trio.Event()

    @server.on_notification("notifications/roots/list_changed")
    async def roots_changed(params: Any) -> None:
        changed.set()

    async def roots() -> list[Any]:
        return []

    async with open_pair(server, protocol_version="2025-11-25", roots=roots) as pair:
        await pair.client.notify_roots_changed()
        with trio.fail_after(5):
            await changed.wait()
    assert RootsListChangedNotification().method == "notifications/roots/list_changed"


async def test_modern_clients_send_no_roots_notification() -> None:
    async def roots() -> list[Any]:
        return []

    async with open_pair(make_server(), protocol_version=MODERN, roots=roots) as pair:
        await pair.client.notify_roots_changed()
        assert pair.client_sent.notifications() == []


# -- answers a server should not give --------------------------------------------------------

URL_ASK = {
    "resultType": "input_required",
    "inputRequests": {
        "pay": {
            "method": "elicitation/create",
            "params": {"mode": "url", "message": "Pay", "url": "https://pay.example.com"},
        }
    },
    "requestState": "s",
}
TOOLS_ASK = {
    "resultType": "input_required",
    "inputRequests": {
        "llm": {
            "method": "sampling/createMessage",
            "params": {
                "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                "maxTokens": 5,
                "tools": [{"name": "t", "inputSchema": {"type": "object"}}],
            },
        }
    },
    "requestState": "s",
}


@pytest.mark.parametrize(
    ("answer", "needle"),
    [
        (
            {"resultType": "input_required", "requestState": "s"},
            "answered tools/list with input_required",
        ),
        ({"resultType": "weird", "tools": []}, "unknown resultType 'weird'"),
    ],
)
async def test_bad_result_types_are_protocol_errors(answer: dict[str, Any], needle: str) -> None:
    async with open_scripted({"tools/list": answer}, MODERN) as client:
        with pytest.raises(ProtocolError, match=needle):
            await client.list_tools_page()


async def test_input_required_with_nothing_to_do_is_a_protocol_error() -> None:
    scripted = {"tools/call": {"resultType": "input_required"}}
    async with open_scripted(scripted, MODERN, validate_output=False) as client:
        with pytest.raises(ProtocolError, match="neither inputRequests nor requestState"):
            await client.call_tool("x")


@pytest.mark.parametrize(
    ("ask", "refused"), [(URL_ASK, "URL-mode elicitation"), (TOOLS_ASK, "sampling with tools")]
)
async def test_the_client_refuses_to_answer_what_it_did_not_declare(
    ask: dict[str, Any], refused: str
) -> None:
    asked: list[Any] = []

    async def elicitation(params: Any) -> Any:
        asked.append(params)

    async def sampling(params: Any) -> Any:
        asked.append(params)

    async with open_scripted(
        {"tools/call": ask},
        MODERN,
        elicitation=elicitation,
        sampling=sampling,
        validate_output=False,
    ) as client:
        with pytest.raises(ProtocolError, match=refused):
            await client.call_tool("x")
    assert asked == []


async def test_a_legacy_client_answers_an_undeclared_mode_with_invalid_params() -> None:
    server = make_server()
    asked: list[Any] = []

    @server.tool()
    async def sneaky(ctx: Context) -> str:
        # Straight to the session, past the Context's capability check.
        try:
            await ctx.session.send_request(
                "elicitation/create",
                {"mode": "url", "message": "Pay", "url": "https://x", "elicitationId": "1"},
            )
        except McpError as exc:
            return f"{exc.code}: {exc.message}"
        return "answered"

    async def elicitation(params: Any) -> Any:
        asked.append(params)

    async with open_pair(server, protocol_version="2025-11-25", elicitation=elicitation) as pair:
        result = await pair.client.call_tool("sneaky")
    assert result.content[0].text == (  # type: ignore[union-attr]
        "-32602: Invalid params: this client did not declare URL-mode elicitation"
    )
    assert asked == []


async def test_a_probe_nobody_answers_falls_back_to_initialize_at_the_timeout(
    autojump_clock: Any,
) -> None:
    # A legacy server that ignores server/discover (it may: an unknown request before
    # initialize) and answers initialize; its answer to the probe comes late, after the
    # fallback, and is dropped (counted), not taken for anything.
    client_end, server_end = memory_stream_pair()
    cache = EraCache()
    seen: list[tuple[float, str]] = []

    async def legacy_server() -> None:
        probe = await server_end.receive()
        assert isinstance(probe, rpc.JsonRpcRequest) and probe.method == "server/discover"
        seen.append((trio.current_time(), probe.method))
        initialize = await server_end.receive()
        assert isinstance(initialize, rpc.JsonRpcRequest) and initialize.method == "initialize"
        seen.append((trio.current_time(), initialize.method))
        result = {
            "protocolVersion": initialize.params["protocolVersion"],  # type: ignore[index]
            "capabilities": {},
            "serverInfo": {"name": "old", "version": "1"},
        }
        await server_end.send(rpc.ResultResponse(initialize.id, result))
        await server_end.send(
            rpc.ErrorResponse(probe.id, McpError("Method not found", code=-32601).error)
        )
        async for message in server_end:
            assert isinstance(message, rpc.JsonRpcNotification | rpc.JsonRpcRequest)
            seen.append((trio.current_time(), message.method))
            if isinstance(message, rpc.JsonRpcRequest):
                await server_end.send(rpc.ResultResponse(message.id, {}))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(legacy_server)
        start = trio.current_time()
        async with open_client(
            client_end, probe_timeout=3.0, era_cache=cache, peer="old"
        ) as client:
            assert client.era == "legacy"
            assert client.protocol_version == LEGACY[0]
            await client.ping()  # the late answer broke nothing
            assert client.connection.statistics().responses_dropped == 1
        await server_end.aclose()
    assert seen == [
        (start, "server/discover"),
        (start + 3.0, "initialize"),
        (start + 3.0, "notifications/initialized"),
        (start + 3.0, "ping"),
    ]
    assert cache.get("old") == ("legacy", None)


@pytest.mark.parametrize(
    ("protocol_version", "method"),
    [("2025-11-25", "initialize"), ("2026-07-28", "server/discover")],
)
async def test_a_hung_handshake_says_what_timed_out_and_after_how_long(
    protocol_version: str, method: str, autojump_clock: trio.testing.MockClock
) -> None:
    """Issue 11, item 9: a server that reads but never answers the opening request. The
    TooSlowError names the request and the deadline (it used to be empty)."""
    client_stream, server_stream = memory_stream_pair()
    received: list[Any] = []
    async with trio.open_nursery() as nursery:

        async def swallow() -> None:
            with suppress(trio.EndOfChannel):
                while True:
                    received.append(await server_stream.receive())

        nursery.start_soon(swallow)
        with pytest.raises(trio.TooSlowError) as caught:
            async with open_client(
                client_stream, protocol_version=protocol_version, handshake_timeout=7.5
            ):
                pass  # pragma: no cover - the opening never completes
        nursery.cancel_scope.cancel()
    assert str(caught.value) == (
        f"the server did not answer {method} within 7.5 seconds (the client's handshake_timeout)"
    )
    assert [m.method for m in received if isinstance(m, rpc.JsonRpcRequest)][:1] == [method]


async def test_a_discover_answered_with_input_required_is_a_protocol_error() -> None:
    # server/discover may not ask for input: the client says so (a ProtocolError naming the
    # method), instead of failing later on a result that is not a DiscoverResult.
    client_end, server_end = memory_stream_pair()

    async def server() -> None:
        discover = await server_end.receive()
        assert isinstance(discover, rpc.JsonRpcRequest) and discover.method == "server/discover"
        answer = {"resultType": "input_required", "requestState": "opaque"}
        await server_end.send(rpc.ResultResponse(discover.id, answer))

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(server)
            with pytest.raises(ProtocolError, match="server/discover with input_required"):
                async with open_client(client_end, protocol_version=MODERN):
                    pass
