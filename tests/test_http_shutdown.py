"""A graceful shutdown answers the requests still running at its deadline with a JSON-RPC
error ("the server is shutting down") instead of cutting their connections."""

from __future__ import annotations

import json
from functools import partial

import httpx
import pytest
import trio
import trio.testing
from http_support import initialize, make_server, meta, modern_headers, parse_sse

from trio_mcp import Context, McpError
from trio_mcp.http import open_asgi_app, open_http_client, serve

#: Every test here runs on both HTTP front ends.
pytestmark = pytest.mark.usefixtures("front_end")

SHUTTING_DOWN = "Service Unavailable: the server is shutting down"


async def test_requests_running_at_the_deadline_get_an_error_answer_json_and_sse(
    autojump_clock: trio.abc.Clock,
) -> None:
    server, probe = make_server()

    @server.tool()
    async def report_then_block(ctx: Context) -> str:
        """Report progress (the answer becomes an SSE stream), then wait."""
        await ctx.report_progress(1, 2)
        await probe.release.wait()
        return "released"

    answers: dict[str, tuple[float, httpx.Response]] = {}

    async def post(client: httpx.AsyncClient, name: str, tool: str, progress: bool) -> None:
        envelope = {**meta(), "progressToken": "p"} if progress else meta()
        body = {
            "jsonrpc": "2.0",
            "id": name,
            "method": "tools/call",
            "params": {"name": tool, "arguments": {}, "_meta": envelope},
        }
        response = await client.post("/mcp", json=body, headers=modern_headers("tools/call", tool))
        answers[name] = (trio.current_time(), response)

    async with open_asgi_app(server) as app:
        transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
        async with (
            httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client,
            trio.open_nursery() as nursery,
        ):
            nursery.start_soon(post, client, "json", "block", False)
            nursery.start_soon(post, client, "sse", "report_then_block", True)
            await trio.testing.wait_all_tasks_blocked()
            began = trio.current_time()
            app.begin_shutdown(grace=3.0)
            await trio.sleep(2.9)
            assert answers == {}  # running on until the deadline
    when, response = answers["json"]
    assert when - began == pytest.approx(3.0)
    assert response.status_code == 503
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": "json",
        "error": {"code": -32603, "message": SHUTTING_DOWN},
    }
    assert probe.cancelled.is_set()  # the handler was cancelled
    when, response = answers["sse"]
    assert when - began == pytest.approx(3.0)
    assert response.headers["content-type"] == "text/event-stream"
    events = [json.loads(e.data) for e in parse_sse(response.text) if e.data]
    assert events[0]["method"] == "notifications/progress"
    assert events[-1] == {
        "jsonrpc": "2.0",
        "id": "sse",
        "error": {"code": -32603, "message": SHUTTING_DOWN},
    }


async def test_the_stateless_client_reports_that_the_server_is_shutting_down() -> None:
    """Over real sockets: a call running when ``serve``'s graceful deadline passes fails
    with the server's reason, not with a connection error after retries."""
    server, probe = make_server()
    stop = trio.Event()
    failures: list[McpError] = []
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(
                partial(serve, server, port=0, graceful_timeout=0.3, shutdown_trigger=stop.wait)
            )
            async with open_http_client(f"http://127.0.0.1:{port}/mcp", cache=False) as client:
                assert client.protocol_version == "2026-07-28"

                async def blocked_call() -> None:
                    with pytest.raises(McpError) as raised:
                        await client.call_tool("block", {})
                    failures.append(raised.value)

                nursery.start_soon(blocked_call)
                await probe.started.wait()
                stop.set()
                while not failures:
                    await trio.sleep(0.01)
    assert "the server is shutting down" in str(failures[0])
    assert probe.cancelled.is_set()


async def test_legacy_requests_unanswered_at_the_deadline_get_an_error_event(
    autojump_clock: trio.abc.Clock,
) -> None:
    """Legacy Streamable HTTP: the POST's SSE stream ends with the error."""
    server, probe = make_server()
    answers: list[httpx.Response] = []
    async with open_asgi_app(server) as app:
        transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
        async with (
            httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client,
            trio.open_nursery() as nursery,
        ):
            headers = await initialize(client, "/mcp")

            async def call() -> None:
                body = {
                    "jsonrpc": "2.0",
                    "id": 4,
                    "method": "tools/call",
                    "params": {"name": "progress", "_meta": {"progressToken": "p"}},
                }
                answers.append(await client.post("/mcp", json=body, headers=headers))

            nursery.start_soon(call)
            await trio.sleep(0.005)  # the first progress event went out
            app.begin_shutdown(grace=0.001)
    events = [json.loads(e.data) for e in parse_sse(answers[0].text) if e.data]
    assert events[-1] == {
        "jsonrpc": "2.0",
        "id": 4,
        "error": {"code": -32603, "message": SHUTTING_DOWN},
    }
    assert any(e.get("method") == "notifications/progress" for e in events)


async def test_legacy_json_requests_unanswered_at_the_deadline_get_503_with_retry_after(
    autojump_clock: trio.abc.Clock,
) -> None:
    """Legacy Streamable HTTP, an answer that goes out as JSON: 503 and ``Retry-After``
    (as in the stateless era and as the limits page says), not 200 with the error."""
    server, probe = make_server()
    answers: list[httpx.Response] = []
    async with open_asgi_app(server) as app:
        transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
        async with (
            httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client,
            trio.open_nursery() as nursery,
        ):
            headers = await initialize(client, "/mcp")

            async def call() -> None:
                body = {
                    "jsonrpc": "2.0",
                    "id": 4,
                    "method": "tools/call",
                    "params": {"name": "block"},
                }
                answers.append(await client.post("/mcp", json=body, headers=headers))

            nursery.start_soon(call)
            await probe.started.wait()
            app.begin_shutdown(grace=1.0)
    (answer,) = answers
    assert answer.status_code == 503
    assert answer.headers["retry-after"] == "5"
    assert answer.json() == {
        "jsonrpc": "2.0",
        "id": 4,
        "error": {"code": -32603, "message": SHUTTING_DOWN},
    }


async def test_http_sse_requests_running_at_the_deadline_get_an_error_event() -> None:
    """The 2024-11-05 HTTP+SSE transport: a request still running at the shutdown deadline
    is cancelled and answered with the error on the session's event stream (not cut off)."""
    from http_support import open_sse, running

    from trio_mcp import Server
    from trio_mcp.http import asgi_app

    server = Server("naps")
    started, cancelled = trio.Event(), trio.Event()

    @server.tool()
    async def nap() -> str:
        started.set()
        try:
            await trio.sleep_forever()
        finally:
            cancelled.set()

    app = asgi_app(server)
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2024-11-05",
            "capabilities": {},
            "clientInfo": {"name": "old", "version": "1"},
        },
    }
    with trio.fail_after(30):
        async with (
            running(app) as base,
            httpx.AsyncClient(timeout=10) as client,
            open_sse(client, "GET", base + "/sse") as reader,
        ):
            (endpoint,) = await reader.wait_for(1)
            post_url = base + endpoint.data
            await client.post(post_url, json=initialize)
            await reader.wait_for(2)
            await client.post(
                post_url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}
            )
            call = {
                "jsonrpc": "2.0",
                "id": 7,
                "method": "tools/call",
                "params": {"name": "nap"},
            }
            assert (await client.post(post_url, json=call)).status_code == 202
            await started.wait()  # the call is running
            app.begin_shutdown(grace=0.2)
            events = await reader.wait_for(3)
            assert json.loads(events[2].data) == {
                "jsonrpc": "2.0",
                "id": 7,
                "error": {"code": -32603, "message": SHUTTING_DOWN},
            }
            assert cancelled.is_set()
