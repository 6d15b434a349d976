"""Fairness over HTTP: what one client may hold (sessions, requests in flight, tool calls)
leaves room for the others, and a refusal is a 429 or 503 with ``Retry-After`` and a
JSON-RPC error body, never a 500.

The app runs in-process (``httpx.ASGITransport``, each client with a peer address of its
own), so the tests run on the autojump clock.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import trio
import trio.testing
from http_support import ACCEPT, initialize, make_server, modern_body, modern_headers

from trio_mcp import Server
from trio_mcp.http import McpAsgiApp, asgi_app, open_asgi_app
from trio_mcp.server import RateLimit

Client = httpx.AsyncClient


@asynccontextmanager
async def peer(app: McpAsgiApp, address: str, **headers: str) -> AsyncIterator[Client]:
    """An HTTP client of ``app`` whose requests come from ``address``."""
    transport = httpx.ASGITransport(app=app, client=(address, 40000))  # type: ignore[arg-type]
    async with httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1", headers=headers, timeout=None
    ) as client:
        yield client


async def call(client: Client, id: int, tool: str, **arguments: Any) -> httpx.Response:
    return await client.post(
        "/mcp",
        json=modern_body(id, "tools/call", {"name": tool, "arguments": arguments}),
        headers=modern_headers("tools/call", tool),
    )


def assert_refused(
    response: httpx.Response, status: int, id: int | None, message: str, code: int = -32603
) -> None:
    assert response.status_code == status, response.text
    assert int(response.headers["retry-after"]) >= 1
    body = response.json()
    assert body["jsonrpc"] == "2.0" and body["id"] == id
    assert body["error"]["code"] == code
    assert message in body["error"]["message"]


def test_the_caps_have_documented_defaults() -> None:
    app = asgi_app(Server("defaults"))
    assert app.max_sessions == 10_000
    assert app.sessions_per_caller.cap == 2_000
    assert app.requests_per_caller.cap == 64
    assert app.modern.admission.backlog == 256
    assert app.rate_limiter is None


async def test_one_peer_cannot_take_every_session(autojump_clock: trio.abc.Clock) -> None:
    """A peer at its cap of sessions gets 429 (and may open one again once it ended one);
    another peer still gets a session."""
    server, _ = make_server()
    async with (
        open_asgi_app(server, max_sessions=10, max_sessions_per_principal=3) as app,
        peer(app, "10.0.0.1") as greedy,
        peer(app, "10.0.0.2") as other,
    ):
        sessions = [await initialize(greedy, "/mcp") for _ in range(3)]
        refused = await greedy.post(
            "/mcp",
            json={
                "jsonrpc": "2.0",
                "id": 7,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "greedy", "version": "1"},
                },
            },
            headers={"accept": ACCEPT},
        )
        assert_refused(refused, 429, 7, "at most 3 sessions per client", code=-32600)
        assert "mcp-session-id" not in refused.headers
        await initialize(other, "/mcp")  # the other peer is not locked out
        assert app.manager is not None and len(app.manager.sessions) == 4
        # Ending a session gives its slot back.
        assert (await greedy.delete("/mcp", headers=sessions[0])).status_code == 200
        await initialize(greedy, "/mcp")
        # Sessions that expire give theirs back too.
        await trio.sleep(app.session_idle_timeout * 2)
        assert app.manager.sessions == {} and app.sessions_per_caller.counts == {}


async def test_principals_are_counted_apart_from_their_peer_address(
    autojump_clock: trio.abc.Clock,
) -> None:
    server, _ = make_server()
    async with (
        open_asgi_app(
            server,
            max_sessions_per_principal=1,
            principal=lambda scope: dict(scope["headers"]).get(b"x-user", b"").decode() or None,
        ) as app,
        peer(app, "10.0.0.1", **{"x-user": "alice"}) as alice,
        peer(app, "10.0.0.1", **{"x-user": "bob"}) as bob,
        peer(app, "10.0.0.1") as anonymous,
    ):
        for client in (alice, bob, anonymous):
            await initialize(client, "/mcp")
        assert app.sessions_per_caller.counts == {
            "principal:alice": 1,
            "principal:bob": 1,
            "peer:10.0.0.1": 1,
        }


async def test_one_peers_slow_calls_do_not_make_another_peers_calls_fail(
    autojump_clock: trio.abc.Clock,
) -> None:
    """With the default cap per caller (64) and 40 handler slots (as many may wait), a
    peer sending 100 slow calls holds 64 and is refused the rest with 429; another
    peer's call waits for a slot and is answered, where it used to fail as busy."""
    server, probe = make_server()
    answers: dict[int, httpx.Response] = {}

    async def greedy_call(client: Client, id: int) -> None:
        answers[id] = await call(client, id, "block")

    async with (
        open_asgi_app(server, session_options={"max_concurrent_requests": 40}) as app,
        peer(app, "10.0.0.1") as greedy,
        peer(app, "10.0.0.2") as other,
        trio.open_nursery() as nursery,
    ):
        for id in range(100):
            nursery.start_soon(greedy_call, greedy, id)
        await trio.testing.wait_all_tasks_blocked()
        refused = [answers[id] for id in sorted(answers)]
        assert len(refused) == 36
        for response in refused:
            assert_refused(response, 429, response.json()["id"], "at most 64 requests")

        async def other_call() -> None:
            answers[1000] = await call(other, 1000, "echo", text="mine")

        nursery.start_soon(other_call)
        await trio.testing.wait_all_tasks_blocked()
        assert 1000 not in answers  # waiting for a slot, not refused
        probe.release.set()
    assert answers[1000].status_code == 200
    assert answers[1000].json()["result"]["content"][0]["text"] == "mine"
    assert sum(r.status_code == 200 for r in answers.values()) == 65
    assert app.requests_per_caller.counts == {}


async def test_past_every_slot_a_request_gets_503_with_retry_after(
    autojump_clock: trio.abc.Clock,
) -> None:
    """When the handler slots and the queue are full, a request gets 503 and Retry-After
    (not the 500 a "server busy" error used to bring)."""
    server, probe = make_server()
    answers: dict[int, httpx.Response] = {}

    async def slow_call(client: Client, id: int) -> None:
        answers[id] = await call(client, id, "block")

    async with (
        open_asgi_app(server, session_options={"max_concurrent_requests": 2}) as app,
        trio.open_nursery() as nursery,
    ):
        for id in range(4):  # two run, two wait
            address = f"10.0.0.{id + 1}"
            client = await nursery.start(_client_task, app, address)
            nursery.start_soon(slow_call, client, id)
        await trio.testing.wait_all_tasks_blocked()
        assert answers == {}
        async with peer(app, "10.0.1.1") as late:
            assert_refused(await call(late, 9, "echo", text="x"), 503, 9, "too many requests")
        probe.release.set()
        await trio.testing.wait_all_tasks_blocked()
        assert [answers[id].status_code for id in range(4)] == [200] * 4
        nursery.cancel_scope.cancel()


async def _client_task(
    app: McpAsgiApp, address: str, *, task_status: trio.TaskStatus[Client]
) -> None:
    async with peer(app, address) as client:
        task_status.started(client)
        await trio.sleep_forever()


async def test_requests_that_answer_the_server_are_not_capped(
    autojump_clock: trio.abc.Clock,
) -> None:
    """Only POSTs carrying requests count: a client at its cap can still send
    notifications and answers (the calls at its cap may be waiting for them)."""
    server, _ = make_server()
    async with (
        open_asgi_app(server, max_requests_per_principal=1) as app,
        peer(app, "10.0.0.1") as client,
    ):
        headers = await initialize(client, "/mcp")
        app.requests_per_caller.counts["peer:10.0.0.1"] = 1  # as if a call were in flight
        note = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
        assert (await client.post("/mcp", json=note, headers=headers)).status_code == 202
        ping = {"jsonrpc": "2.0", "id": 5, "method": "ping"}
        refused = await client.post("/mcp", json=ping, headers=headers)
        assert_refused(refused, 429, 5, "at most 1 requests in flight")
        app.requests_per_caller.counts.clear()


def limited_server() -> tuple[Server, list[str]]:
    server, _ = make_server()
    ran: list[str] = []

    @server.tool()
    async def work(text: str = "") -> str:
        ran.append(text)
        return text

    return server, ran


def rate_refused(response: httpx.Response) -> bool:
    result = response.json()["result"]
    return bool(result.get("isError")) and "Rate limit exceeded" in result["content"][0]["text"]


async def test_tool_rate_limit_is_an_app_option_with_one_bucket_per_peer(
    autojump_clock: trio.abc.Clock,
) -> None:
    """``asgi_app(tool_rate_limit=...)`` limits a server that has none of its own; over
    stateless HTTP without principals each peer address has its own bucket (they used to
    share one)."""
    server, ran = limited_server()
    async with (
        open_asgi_app(server, tool_rate_limit=RateLimit(calls=2, per=10)) as app,
        peer(app, "10.0.0.1") as first,
        peer(app, "10.0.0.2") as second,
    ):
        assert [rate_refused(await call(first, n, "work", text=f"a{n}")) for n in range(3)] == [
            False,
            False,
            True,
        ]
        assert not rate_refused(await call(second, 9, "work", text="b"))
    assert ran == ["a0", "a1", "b"]


async def _legacy_call(client: Client, headers: dict[str, str], id: int) -> httpx.Response:
    body = {
        "jsonrpc": "2.0",
        "id": id,
        "method": "tools/call",
        "params": {"name": "work", "arguments": {"text": str(id)}},
    }
    return await client.post("/mcp", json=body, headers={**headers, "accept": "application/json"})


async def test_a_legacy_client_gets_no_fresh_bucket_from_a_new_or_dormant_session(
    autojump_clock: trio.abc.Clock,
) -> None:
    """The server's ``tool_rate_limit`` over legacy HTTP: one bucket per caller for all its
    sessions, kept while a session's engine is dormant (each engine run used to start with
    a full bucket of its own)."""
    server, ran = limited_server()
    server.tool_rate_limit = RateLimit(calls=2, per=1000)
    async with (
        open_asgi_app(server, engine_linger=1.0) as app,
        peer(app, "10.0.0.1") as client,
    ):
        headers = await initialize(client, "/mcp")
        assert not rate_refused(await _legacy_call(client, headers, 1))
        await trio.sleep(5)  # the engine stops
        assert app.manager is not None and app.manager.statistics()["running"] == 0
        assert not rate_refused(await _legacy_call(client, headers, 2))
        await trio.sleep(5)
        assert rate_refused(await _legacy_call(client, headers, 3))
        another = await initialize(client, "/mcp")
        assert rate_refused(await _legacy_call(client, another, 4))
    assert ran == ["1", "2"]
