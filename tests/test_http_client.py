"""The HTTP client transport against small scripted servers (real sockets on 127.0.0.1).

Each test scripts the server's side of the wire and checks what the client sent and did.
Real sockets need real time, so waits are short and bounded (``trio.fail_after``).
"""

from __future__ import annotations

import base64
import os
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
import trio.testing
from scripted_http import (
    DISCOVER,
    MODERN,
    Reply,
    ScriptedApp,
    Seen,
    error,
    initialize_result,
    result,
    serving,
)

from trio_mcp import ConnectionClosed, McpError, ProtocolError, types
from trio_mcp.client import EraCache
from trio_mcp.http import HttpClientStream, era_key, open_http_client

pytestmark = [pytest.mark.timeout(30), pytest.mark.usefixtures("front_end")]

REGION_TOOL = {
    "name": "execute_sql",
    "inputSchema": {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
            "query": {"type": "string"},
        },
    },
}
BAD_TOOL = {
    "name": "bad_tool",
    "inputSchema": {"type": "object", "properties": {"x": {"type": "number", "x-mcp-header": "X"}}},
}


def complete(value: dict[str, Any]) -> dict[str, Any]:
    return {"resultType": "complete", **value}


# -- the modern era (2026-07-28) ------------------------------------------------------------


async def modern_server(seen: Seen, reply: Reply) -> None:
    """A modern server: discover, tools/list (one tool with headers, one invalid), tools/call
    echoing what it got, and 404 -32601 for the rest (notifications included)."""
    if seen.method != "POST":
        await reply.empty(405)
        return
    method = seen.rpc_method
    if method == "server/discover":
        await reply.json(result(seen, DISCOVER))
    elif method == "tools/list":
        await reply.json(
            result(
                seen,
                complete({"tools": [REGION_TOOL, BAD_TOOL], "ttlMs": 0, "cacheScope": "private"}),
            )
        )
    elif method == "tools/call":
        text = repr(seen.json["params"]["arguments"])
        await reply.json(result(seen, complete({"content": [{"type": "text", "text": text}]})))
    else:
        await reply.json(error(seen, -32601, "Method not found"), status=404)


class Stamp(httpx.Auth):
    """An auth hook: stamps every request, as a bearer-token flow would."""

    def auth_flow(self, request: httpx.Request) -> Any:
        request.headers["authorization"] = "Bearer sesame"
        yield request


async def test_modern_requests_carry_the_request_headers_and_envelope() -> None:
    app = ScriptedApp(modern_server)
    async with (
        serving(app) as base,
        open_http_client(
            base + "/mcp", headers={"x-tenant": "acme"}, auth=Stamp(), cache=False
        ) as client,
    ):
        assert client.era == "modern"
        tools = await client.list_tools()
        await client.call_tool(
            "execute_sql",
            {"region": " us-west1", "priority": 42, "verbose": None, "query": "SELECT 1"},
        )
    # The invalid tool is not listed; the valid one's parameters became headers.
    assert [t.name for t in tools] == ["execute_sql"]
    discover, listing, call = app.requests
    for request in app.requests:
        assert request.method == "POST" and request.path == "/mcp"
        assert request.headers["accept"] == "application/json, text/event-stream"
        assert request.headers["content-type"] == "application/json"
        assert request.headers["mcp-protocol-version"] == MODERN
        assert request.headers["mcp-method"] == request.rpc_method
        assert request.headers["x-tenant"] == "acme"
        assert request.headers["authorization"] == "Bearer sesame"
        assert "mcp-session-id" not in request.headers
        meta = request.json["params"]["_meta"]
        assert meta["io.modelcontextprotocol/protocolVersion"] == MODERN
    assert "mcp-name" not in listing.headers
    assert call.headers["mcp-name"] == "execute_sql"
    encoded = base64.b64encode(b" us-west1").decode()
    assert call.headers["mcp-param-region"] == f"=?base64?{encoded}?="
    assert call.headers["mcp-param-priority"] == "42"
    assert "mcp-param-verbose" not in call.headers  # null: omitted
    assert not any(h.startswith("mcp-param-") and h.endswith("query") for h in call.headers)
    # No notification ever went on the modern wire.
    assert all("id" in r.json for r in app.requests)


async def test_an_empty_parameter_value_is_still_sent_as_a_header() -> None:
    app = ScriptedApp(modern_server)
    async with serving(app) as base, open_http_client(base + "/mcp", cache=False) as client:
        await client.list_tools()
        await client.call_tool("execute_sql", {"region": "", "verbose": False})
    call = app.rpc("tools/call")[0]
    assert call.headers["mcp-param-region"] == ""
    assert call.headers["mcp-param-verbose"] == "false"


async def test_modern_sse_answers_deliver_progress_then_the_result() -> None:
    async def script(seen: Seen, reply: Reply) -> None:
        if seen.rpc_method != "tools/call":
            await modern_server(seen, reply)
            return
        token = seen.json["params"]["_meta"]["progressToken"]
        await reply.sse()
        await reply.raw(b": keep-alive comment\n\n")
        for step in (1, 2):
            await reply.event(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": step, "total": 2},
                },
                event="message",
            )
        # A response split over two data lines (joined with a newline: still JSON).
        answer = result(seen, complete({"content": [{"type": "text", "text": "done"}]}))
        text = str(answer).replace("'", '"').replace("None", "null")
        head, tail = text.split(", ", 1)
        await reply.raw(f"id: 7\r\ndata: {head},\r\ndata: {tail}\r\n\r\n".encode())
        await reply.wait_disconnect()  # the client closes the stream once answered

    app = ScriptedApp(script)
    updates: list[float] = []
    async with serving(app) as base, open_http_client(base + "/mcp") as client:
        with trio.fail_after(5):
            outcome = await client.call_tool(
                "execute_sql", {}, on_progress=lambda p: updates.append(p.progress)
            )
    assert updates == [1, 2]
    assert outcome.content[0].text == "done"  # type: ignore[union-attr]


async def test_cancelling_a_modern_call_closes_its_post_and_sends_no_notification() -> None:
    closed = trio.Event()

    async def script(seen: Seen, reply: Reply) -> None:
        if seen.rpc_method != "tools/call":
            await modern_server(seen, reply)
            return
        await reply.sse()
        await reply.event(id="1", data="")  # a priming event; then nothing
        await reply.wait_disconnect()
        closed.set()

    app = ScriptedApp(script)
    async with serving(app) as base, open_http_client(base + "/mcp") as client:
        with trio.move_on_after(0.3) as scope:
            await client.call_tool("execute_sql", {})
        assert scope.cancelled_caught
        with trio.fail_after(5):
            await closed.wait()
    assert [r.rpc_method for r in app.requests] == ["server/discover", "tools/call"]


async def test_a_modern_request_whose_stream_broke_is_reissued_under_a_new_id() -> None:
    async def script(seen: Seen, reply: Reply) -> None:
        if seen.rpc_method != "tools/call":
            await modern_server(seen, reply)
            return
        await reply.sse()
        if len(app.rpc("tools/call")) == 1:
            await reply.event(id="1", data="")
            return  # the stream ends without the answer
        await reply.event(result(seen, complete({"content": [{"type": "text", "text": "again"}]})))

    app = ScriptedApp(script)
    async with serving(app) as base, open_http_client(base + "/mcp") as client:
        with trio.fail_after(5):
            outcome = await client.call_tool("execute_sql", {"region": "eu"})
    assert outcome.content[0].text == "again"  # type: ignore[union-attr]
    first, second = app.rpc("tools/call")
    assert first.json["id"] != second.json["id"]
    assert first.json["params"] == second.json["params"]


async def test_http_errors_become_mcp_errors() -> None:
    async def script(seen: Seen, reply: Reply) -> None:
        if seen.rpc_method == "tools/call":
            name = seen.json["params"]["name"]
            if name == "html":
                await reply.text("<h1>oops</h1>", status=502)
            else:
                await reply.json(error(seen, -32602, "Unknown tool"), status=400)
            return
        await modern_server(seen, reply)

    app = ScriptedApp(script)
    async with serving(app) as base, open_http_client(base + "/mcp") as client:
        with pytest.raises(McpError) as bad_gateway:
            await client.call_tool("html", {})
        with pytest.raises(McpError) as unknown:
            await client.call_tool("nope", {})
        await client.list_tools()  # the client goes on
    assert bad_gateway.value.data == {"httpStatus": 502}
    assert unknown.value.code == -32602


async def test_a_400_with_an_unsupported_version_error_means_modern_and_a_retry() -> None:
    async def script(seen: Seen, reply: Reply) -> None:
        if len(app.requests) == 1:  # the first POST, whatever it is, is refused
            await reply.json(
                error(
                    seen,
                    -32022,
                    "Unsupported protocol version",
                    {"supported": [MODERN], "requested": MODERN},
                ),
                status=400,
            )
            return
        await modern_server(seen, reply)

    app = ScriptedApp(script)
    async with serving(app) as base, open_http_client(base) as client:
        assert client.era == "modern"
    assert [r.rpc_method for r in app.requests] == ["server/discover", "server/discover"]


async def test_an_unreachable_server_fails_the_opening() -> None:
    with trio.socket.socket() as sock:
        await sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, never listening: connections are refused
        with pytest.raises(McpError, match="cannot reach") as failure, trio.fail_after(10):
            async with open_http_client(f"http://127.0.0.1:{port}/mcp"):
                pass
    assert failure.value.data == {"unreachable": True}  # what a host counts


async def test_something_that_is_not_an_mcp_server_fails_the_opening() -> None:
    async def script(seen: Seen, reply: Reply) -> None:
        await reply.text("not here", status=404)

    app = ScriptedApp(script)
    async with serving(app) as base:
        with pytest.raises(McpError) as failure, trio.fail_after(10):
            async with open_http_client(base + "/mcp"):
                pass
    assert failure.value.data == {"httpStatus": 404}
    # probe, initialize, then the HTTP+SSE attempt (a GET)
    assert [r.method for r in app.requests] == ["POST", "POST", "GET"]


@pytest.mark.parametrize("as_sse", [False, True], ids=["json", "sse"])
async def test_answers_past_the_size_limit_fail_the_request(as_sse: bool) -> None:
    async def script(seen: Seen, reply: Reply) -> None:
        if seen.rpc_method == "tools/call":
            answer = result(seen, complete({"content": [{"type": "text", "text": "x" * 5000}]}))
            if as_sse:
                await reply.sse()
                await reply.event(answer)
            else:
                await reply.json(answer)
            return
        await modern_server(seen, reply)

    app = ScriptedApp(script)
    async with (
        serving(app) as base,
        open_http_client(base + "/mcp", max_message_size=4000, reissue_attempts=0) as client,
    ):
        with pytest.raises(McpError, match="too large"):
            await client.call_tool("execute_sql", {})
        await client.list_tools()  # the client goes on


async def test_a_header_mismatch_makes_the_client_relist_the_tools_and_retry() -> None:
    async def script(seen: Seen, reply: Reply) -> None:
        if seen.rpc_method == "tools/call" and "mcp-param-region" not in seen.headers:
            await reply.json(error(seen, -32020, "Header mismatch: Mcp-Param-Region"), status=400)
            return
        await modern_server(seen, reply)

    app = ScriptedApp(script)
    async with serving(app) as base, open_http_client(base + "/mcp") as client:
        # Called before any tools/list: the client cannot know the header yet.
        outcome = await client.call_tool("execute_sql", {"region": "us-west1"})
        assert outcome.content[0].text == "{'region': 'us-west1'}"  # type: ignore[union-attr]
    methods = [r.rpc_method for r in app.requests]
    # (then the Client lists the tools itself, to check the output of one it never listed)
    assert methods[:4] == ["server/discover", "tools/call", "tools/list", "tools/call"]
    refused, listing, retried = app.requests[1:4]
    assert listing.json["params"]["_meta"] == refused.json["params"]["_meta"]
    assert retried.headers["mcp-param-region"] == "us-west1"
    assert retried.json["id"] != refused.json["id"]


async def test_requests_beyond_the_concurrency_bound_wait_their_turn() -> None:
    release = trio.Event()

    async def script(seen: Seen, reply: Reply) -> None:
        if seen.rpc_method == "tools/call" and seen.json["params"]["name"] == "slow":
            await release.wait()
        await modern_server(seen, reply)

    app = ScriptedApp(script)
    async with (
        serving(app) as base,
        open_http_client(base + "/mcp", max_concurrent_requests=1) as client,
        trio.open_nursery() as nursery,
    ):
        nursery.start_soon(client.call_tool, "slow", {})
        with trio.fail_after(5):
            await app.wait_for(lambda r: r.rpc_method == "tools/call")
        nursery.start_soon(client.call_tool, "fast", {})
        # Every task blocked (a second POST would have reached the app by then).
        await trio.testing.wait_all_tasks_blocked()
        assert len(app.rpc("tools/call")) == 1  # the second waits for the first
        release.set()
    assert len(app.rpc("tools/call")) == 2


async def test_a_modern_only_server_refusing_initialize_is_not_taken_for_http_sse() -> None:
    app = ScriptedApp(modern_server)  # initialize: 404 with a JSON-RPC -32601 body
    async with serving(app) as base:
        with pytest.raises(McpError) as refused, trio.fail_after(10):
            async with open_http_client(base + "/mcp", protocol_version="2025-11-25"):
                pass
    assert refused.value.code == -32601
    assert [r.method for r in app.requests] == ["POST"]  # no GET for an endpoint event


# -- the legacy Streamable HTTP era ---------------------------------------------------------


class LegacyServer:
    """A legacy Streamable HTTP server with sessions, a standalone GET stream it can push
    requests on, and hooks for the tests."""

    def __init__(self) -> None:
        self.app = ScriptedApp(self.handle)
        self.sessions = 0
        self.session: str | None = None
        self.get_stream: Reply | None = None
        self.get_ready = trio.Event()
        self.answers: dict[Any, Any] = {}
        self.answered = trio.Condition()
        self.on_call: Any = None

    async def handle(self, seen: Seen, reply: Reply) -> None:
        session = seen.headers.get("mcp-session-id")
        if seen.method == "DELETE":
            self.session = None
            await reply.empty(200)
            return
        if seen.method == "GET":
            if session != self.session:
                await reply.empty(404)
                return
            await reply.sse()
            self.get_stream = reply
            self.get_ready.set()
            await reply.wait_disconnect()
            return
        body = seen.json
        if body.get("method") == "initialize":
            self.sessions += 1
            self.session = f"session-{self.sessions}"
            await reply.json(
                result(seen, initialize_result()), headers={"mcp-session-id": self.session}
            )
            return
        if session != self.session or session is None:
            await reply.empty(404 if session else 400)
            return
        if "method" not in body:  # an answer to one of our requests
            async with self.answered:
                self.answers[body["id"]] = body
                self.answered.notify_all()
            await reply.empty(202)
            return
        if "id" not in body:
            await reply.empty(202)
            return
        if body["method"] == "tools/list":
            await reply.json(
                result(seen, {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]})
            )
        elif body["method"] == "tools/call" and self.on_call is not None:
            await self.on_call(seen, reply)
        elif body["method"] == "tools/call":
            await reply.json(result(seen, {"content": [{"type": "text", "text": "ok"}]}))
        else:
            await reply.json(error(seen, -32601, "Method not found"))

    async def answer_to(self, id: Any) -> Any:
        async with self.answered:
            while id not in self.answers:
                await self.answered.wait()
            return self.answers[id]


async def roots() -> list[types.Root]:
    return [types.Root(uri="file:///work", name="work")]


async def test_legacy_sessions_headers_get_stream_server_requests_and_delete() -> None:
    server = LegacyServer()

    async def call(seen: Seen, reply: Reply) -> None:
        # A server request on the call's own stream, answered by a POST, then the result.
        await reply.sse()
        await reply.event(id="e1", data="")
        await reply.event({"jsonrpc": "2.0", "id": "r1", "method": "roots/list"})
        answer = await server.answer_to("r1")
        text = answer["result"]["roots"][0]["uri"]
        await reply.event(result(seen, {"content": [{"type": "text", "text": text}]}), id="e2")

    server.on_call = call
    async with serving(server.app) as base:
        async with open_http_client(
            base + "/mcp", protocol_version="2025-11-25", roots=roots
        ) as client:
            assert client.era == "legacy"
            # The GET stream was open before the first request: push a request on it.
            assert server.get_stream is not None
            await server.get_stream.event({"jsonrpc": "2.0", "id": "g1", "method": "roots/list"})
            with trio.fail_after(5):
                pushed = await server.answer_to("g1")
                outcome = await client.call_tool("t", {})
        assert pushed["result"]["roots"][0]["uri"] == "file:///work"
        assert outcome.content[0].text == "file:///work"  # type: ignore[union-attr]
    methods = [(r.method, r.rpc_method) for r in server.app.requests]
    assert methods[:3] == [
        ("POST", "initialize"),
        ("POST", "notifications/initialized"),
        ("GET", None),
    ]
    assert methods[-1] == ("DELETE", None)
    initialize = server.app.requests[0]
    assert "mcp-session-id" not in initialize.headers
    for request in server.app.requests[1:]:
        assert request.headers["mcp-session-id"] == "session-1"
        assert request.headers["mcp-protocol-version"] == "2025-11-25"
    get = server.app.requests[2]
    assert get.headers["accept"] == "text/event-stream"
    assert server.session is None  # DELETE ended it


async def test_a_broken_legacy_stream_is_resumed_after_retry_with_last_event_id() -> None:
    server = LegacyServer()
    ended_at: list[float] = []

    async def call(seen: Seen, reply: Reply) -> None:
        await reply.sse()
        await reply.event(id="call-1", retry=200, data="")
        ended_at.append(trio.current_time())
        # End the connection without the answer; it comes on the resumed stream.

    async def resumed(seen: Seen, reply: Reply) -> None:
        await reply.sse()
        call = server.app.rpc("tools/call")[0]
        await reply.event(
            result(call, {"content": [{"type": "text", "text": "resumed"}]}), id="call-2"
        )
        await reply.wait_disconnect()

    original = server.handle

    async def handle(seen: Seen, reply: Reply) -> None:
        if seen.method == "GET" and "last-event-id" in seen.headers:
            await resumed(seen, reply)
        else:
            await original(seen, reply)

    server.app.script = handle
    server.on_call = call
    async with (
        serving(server.app) as base,
        open_http_client(base + "/mcp", protocol_version="2025-11-25") as client,
    ):
        with trio.fail_after(5):
            outcome = await client.call_tool("t", {})
    assert outcome.content[0].text == "resumed"  # type: ignore[union-attr]
    resume = next(r for r in server.app.requests if "last-event-id" in r.headers)
    assert resume.method == "GET" and resume.headers["last-event-id"] == "call-1"
    assert resume.at - ended_at[0] >= 0.19  # the server's retry: 200 ms


async def test_a_lost_legacy_session_is_reinitialized_and_the_request_retried() -> None:
    server = LegacyServer()
    async with (
        serving(server.app) as base,
        open_http_client(base + "/mcp", protocol_version="2025-11-25") as client,
    ):
        server.session = "forgotten"  # the server restarted
        with trio.fail_after(5):
            tools = await client.list_tools()
    assert [t.name for t in tools] == ["t"]
    assert server.sessions == 2
    listings = server.app.rpc("tools/list")
    assert [r.headers["mcp-session-id"] for r in listings] == ["session-1", "session-2"]
    initializes = server.app.rpc("initialize")
    assert initializes[1].json["params"] == initializes[0].json["params"]
    assert len(server.app.rpc("notifications/initialized")) == 2


async def test_cancelling_a_legacy_call_posts_notifications_cancelled() -> None:
    server = LegacyServer()
    closed = trio.Event()

    async def call(seen: Seen, reply: Reply) -> None:
        await reply.sse()
        await reply.wait_disconnect()
        closed.set()

    server.on_call = call
    async with (
        serving(server.app) as base,
        open_http_client(base + "/mcp", protocol_version="2025-11-25") as client,
    ):
        with trio.move_on_after(0.3):
            await client.call_tool("t", {})
        with trio.fail_after(5):
            await closed.wait()
            cancel = await server.app.wait_for(lambda r: r.rpc_method == "notifications/cancelled")
    call_id = server.app.rpc("tools/call")[0].json["id"]
    assert cancel.json["params"]["requestId"] == call_id


async def test_the_standalone_get_stream_reconnects_with_last_event_id() -> None:
    server = LegacyServer()
    original = server.handle

    async def handle(seen: Seen, reply: Reply) -> None:
        if seen.method == "GET" and "last-event-id" not in seen.headers:
            await reply.sse()
            await reply.event(id="get-1", retry=50, data="")
            return  # the server closes the connection; the client polls again
        await original(seen, reply)

    server.app.script = handle
    async with (
        serving(server.app) as base,
        open_http_client(base + "/mcp", protocol_version="2025-11-25", roots=roots),
    ):
        with trio.fail_after(5):
            await server.get_ready.wait()
            assert server.get_stream is not None
            await server.get_stream.event({"jsonrpc": "2.0", "id": "g1", "method": "roots/list"})
            answer = await server.answer_to("g1")
    assert answer["result"]["roots"][0]["name"] == "work"
    gets = [r for r in server.app.requests if r.method == "GET"]
    assert gets[1].headers["last-event-id"] == "get-1"


async def test_closing_is_bounded_when_the_server_does_not_answer_delete() -> None:
    server = LegacyServer()
    original = server.handle

    async def handle(seen: Seen, reply: Reply) -> None:
        if seen.method == "DELETE":
            await trio.sleep_forever()
        await original(seen, reply)

    server.app.script = handle
    async with serving(server.app) as base:
        async with open_http_client(
            base + "/mcp", protocol_version="2025-11-25", close_timeout=0.2
        ):
            pass
        closed_at = trio.current_time()
        deleted = next(r for r in server.app.requests if r.method == "DELETE")
        assert closed_at - deleted.at < 1


async def test_a_server_without_a_get_stream_is_fine() -> None:
    async def script(seen: Seen, reply: Reply) -> None:
        if seen.method == "GET":
            await reply.empty(405)
        elif seen.rpc_method == "initialize":
            await reply.json(result(seen, initialize_result()))  # no session at all
        elif seen.rpc_method == "tools/list":
            await reply.json(result(seen, {"tools": []}))
        else:
            await reply.empty(202)

    app = ScriptedApp(script)
    async with serving(app) as base, open_http_client(base + "/mcp") as client:
        assert client.era == "legacy"  # the probe got a non-modern answer
        assert await client.list_tools() == []
    assert "mcp-session-id" not in app.requests[-1].headers
    assert not any(r.method == "DELETE" for r in app.requests)  # no session to end


#: Seconds the slow login below takes: past the stdio probe's 5 s default.
SLOW_LOGIN = 5.5


class SlowLogin(httpx.Auth):
    """An authorization flow that takes its time before the first request (a browser
    login, a token endpoint under load, a DPoP nonce retry)."""

    def __init__(self) -> None:
        self.waited = False

    async def async_auth_flow(self, request: httpx.Request) -> Any:
        if not self.waited:
            self.waited = True
            await trio.sleep(SLOW_LOGIN)  # (real time: the request crosses a real socket)
        yield request


@pytest.mark.slow
async def test_a_probe_slowed_by_its_authorization_is_not_taken_for_a_legacy_server() -> None:
    """Over HTTP the era is told by the answer, so the probe may take the handshake's
    deadline: a modern server behind a slow login is still opened as modern (before, the
    probe gave up after 5 s and sent it ``initialize``, which it refuses)."""
    app = ScriptedApp(modern_server)
    async with (
        serving(app) as base,
        open_http_client(base + "/mcp", auth=SlowLogin(), cache=False) as client,
    ):
        assert client.era == "modern"
    assert not app.rpc("initialize")


async def test_the_era_cache_skips_the_probe_next_time() -> None:
    server = LegacyServer()
    cache = EraCache()
    async with serving(server.app) as base:
        for _ in range(2):
            async with open_http_client(base + "/mcp", era_cache=cache):
                pass
    probes = server.app.rpc("server/discover")
    assert len(probes) == 1
    assert len(server.app.rpc("initialize")) == 2


async def test_a_stale_era_in_the_cache_is_forgotten_and_the_era_detected_again() -> None:
    server = LegacyServer()
    cache = EraCache()
    async with serving(server.app) as base:
        cache.remember(era_key(base + "/mcp"), "modern", MODERN)  # it used to be modern
        async with open_http_client(base + "/mcp", era_cache=cache) as client:
            assert client.era == "legacy"
    assert cache.get(era_key(base + "/mcp")) == ("legacy", None)


# -- the 2024-11-05 HTTP+SSE transport ------------------------------------------------------


class OldServer:
    """An HTTP+SSE server: GET /sse opens the event stream (first event: the endpoint),
    POST /messages takes each message (202) and answers on the event stream."""

    def __init__(self, endpoint: str = "/messages?session_id=abc") -> None:
        self.app = ScriptedApp(self.handle)
        self.events: trio.MemorySendChannel[Any] | None = None
        self.end = trio.Event()
        self.endpoint = endpoint

    async def handle(self, seen: Seen, reply: Reply) -> None:
        if seen.path == "/sse" and seen.method == "GET":
            await reply.sse()
            base = seen.headers["host"]  # 127.0.0.1:PORT
            endpoint = self.endpoint.format(base=base, port=base.rsplit(":", 1)[1])
            await reply.event(endpoint, event="endpoint")
            send, receive = trio.open_memory_channel[Any](16)
            self.events = send
            async with trio.open_nursery() as nursery:

                async def ender() -> None:
                    await self.end.wait()
                    await send.aclose()

                nursery.start_soon(ender)
                async for message in receive:
                    await reply.event(message, event="message")
                nursery.cancel_scope.cancel()
            return
        if seen.path == "/messages" and seen.method == "POST":
            assert seen.query == "session_id=abc"
            await reply.empty(202)
            body = seen.json
            assert self.events is not None
            if body.get("method") == "initialize":
                await self.events.send(result(seen, initialize_result("2024-11-05")))
            elif body.get("method") == "tools/list":
                await self.events.send(result(seen, {"tools": []}))
            elif "id" in body and "method" in body:
                await self.events.send(error(seen, -32601, "Method not found"))
            return
        await reply.empty(405)


async def test_an_http_sse_server_is_detected_and_used() -> None:
    server = OldServer()
    async with serving(server.app) as base, open_http_client(base + "/sse") as client:
        assert client.protocol_version == "2024-11-05"
        assert await client.list_tools() == []
        server.end.set()  # the server ends the event stream: the conversation is over

        async def keep_listing() -> None:
            while True:
                await client.list_tools()
                await trio.sleep(0.01)

        with trio.fail_after(5):
            with pytest.raises(ConnectionClosed):
                await keep_listing()
    # The probe and initialize POSTed to the URL were refused (405), then the GET opened it.
    detection = [(r.method, r.path, r.rpc_method) for r in server.app.requests[:3]]
    assert detection == [
        ("POST", "/sse", "server/discover"),
        ("POST", "/sse", "initialize"),
        ("GET", "/sse", None),
    ]
    posts = [r.rpc_method for r in server.app.requests if r.path == "/messages"]
    assert posts[:3] == ["initialize", "notifications/initialized", "tools/list"]


FOREIGN_ENDPOINTS = [
    "http://evil.example/messages?session_id=abc",  # another host
    "//evil.example/messages?session_id=abc",  # the same, scheme-relative
    "https://{base}/messages?session_id=abc",  # another scheme
    "http://127.0.0.1:1/messages?session_id=abc",  # another port
    "http://localhost:{port}/messages?session_id=abc",  # another name for the host
]


@pytest.mark.parametrize("endpoint", FOREIGN_ENDPOINTS)
async def test_an_endpoint_on_another_origin_is_refused(endpoint: str) -> None:
    server = OldServer(endpoint)
    async with serving(server.app) as base:
        with trio.fail_after(5), pytest.raises(ProtocolError) as caught:
            async with open_http_client(base + "/sse", transport="sse"):
                pass
        assert "is not on the origin of" in caught.value.message
        assert caught.value.message.startswith("the HTTP+SSE endpoint event names")
        # Detection refuses it too: the opening fails, saying why.
        with trio.fail_after(5), pytest.raises(McpError, match="is not on the origin of"):
            async with open_http_client(base + "/sse"):
                pass
    assert not [r for r in server.app.requests if r.path == "/messages"]


async def test_an_absolute_endpoint_on_the_same_origin_is_followed() -> None:
    server = OldServer("http://{base}/messages?session_id=abc")
    async with (
        serving(server.app) as base,
        open_http_client(base + "/sse", transport="sse") as client,
    ):
        assert await client.list_tools() == []
    assert [r.rpc_method for r in server.app.requests if r.path == "/messages"][:1] == [
        "initialize"
    ]


@pytest.mark.parametrize(
    ("url", "endpoint", "same"),
    [
        ("http://Example.com/sse", "http://example.com:80/messages", True),
        ("https://example.com:443/sse", "https://EXAMPLE.com/m", True),
        ("http://example.com/sse", "/m?x=1", True),
        ("http://example.com/a/sse", "m", True),
        ("http://example.com/sse", "https://example.com/m", False),
        ("http://example.com/sse", "http://example.com:8080/m", False),
        ("http://example.com/sse", "http://example.com.evil/m", False),
        ("http://example.com/sse", "http://example.com:bad/m", False),
        ("http://example.com/sse", "ftp://example.com/m", False),
        ("http://example.com/sse", "javascript:alert(1)", False),
    ],
)
async def test_which_endpoints_are_on_the_same_origin(url: str, endpoint: str, same: bool) -> None:
    async with httpx.AsyncClient() as http:
        stream = HttpClientStream(url, http)
    if same:
        assert stream._same_origin(endpoint).startswith(("http://", "https://"))
    else:
        with pytest.raises(ProtocolError):
            stream._same_origin(endpoint)


# -- the conformance client example ---------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("version", [MODERN, "2025-11-25"])
async def test_the_conformance_client_example_runs_tools_call(version: str) -> None:
    """``examples/conformance_client.py`` as the harness runs it (the harness itself runs in
    the conformance CI job)."""
    root = Path(__file__).resolve().parent.parent
    add = {
        "name": "add_numbers",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        },
    }

    async def script(seen: Seen, reply: Reply) -> None:
        if seen.method != "POST":
            await reply.empty(405)
        elif seen.rpc_method == "server/discover" and version == MODERN:
            await reply.json(result(seen, DISCOVER))
        elif seen.rpc_method == "initialize" and version != MODERN:
            await reply.json(result(seen, initialize_result(version)))
        elif seen.rpc_method == "tools/list":
            await reply.json(
                result(seen, complete({"tools": [add], "ttlMs": 0, "cacheScope": "private"}))
            )
        elif seen.rpc_method == "tools/call":
            await reply.json(result(seen, complete({"content": [{"type": "text", "text": "5"}]})))
        elif "id" in seen.json:
            await reply.json(error(seen, -32601, "Method not found"), status=404)
        else:
            await reply.empty(202)

    app = ScriptedApp(script)
    env = {
        **os.environ,
        "PYTHONPATH": str(root),
        "MCP_CONFORMANCE_SCENARIO": "tools_call",
        "MCP_CONFORMANCE_PROTOCOL_VERSION": version,
    }
    async with serving(app) as base:
        with trio.fail_after(30):
            run = await trio.run_process(
                [sys.executable, str(root / "examples" / "conformance_client.py"), base + "/mcp"],
                env=env,
                capture_stdout=True,
                capture_stderr=True,
                check=False,
            )
    assert run.returncode == 0, run.stderr.decode()
    call = app.rpc("tools/call")[0]
    assert call.json["params"]["arguments"] == {"a": 2, "b": 3}
    assert (call.headers.get("mcp-protocol-version") == MODERN) == (version == MODERN)
