"""Legacy Streamable HTTP (2025-03-26 to 2025-11-25): sessions, routing, resumption, and
the release of everything a session held."""

from __future__ import annotations

import gc
import json
import re
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import httpx
import pytest
import trio
import trio.testing
from http_support import (
    ACCEPT,
    LEGACY,
    Probe,
    initialize,
    make_server,
    open_sse,
    parse_sse,
    running,
)

from trio_mcp import Server
from trio_mcp.http import McpAsgiApp, MemoryEventStore, asgi_app, open_asgi_app
from trio_mcp.jsonrpc import JsonRpcRequest
from trio_mcp.server import RateLimit

#: Every test here runs on both HTTP front ends.
pytestmark = pytest.mark.usefixtures("front_end")


def call(
    id: int, name: str, arguments: dict[str, Any] | None = None, **meta: Any
) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
    if meta:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}


async def settle(app: McpAsgiApp, *, sessions: int, running: int = 0) -> None:
    """Wait until the manager holds ``sessions`` sessions and ``running`` engines, and its
    nursery no task but the reaper and the engines."""
    manager = app.manager
    assert manager is not None
    with trio.fail_after(5):
        while True:
            stats = manager.statistics()
            tasks = len(manager.nursery.child_tasks)
            if stats == {"sessions": sessions, "running": running} and tasks == 1 + running:
                return
            await trio.sleep(0.01)


def standalone_get(session_id: str) -> dict[str, Any]:
    """The ASGI scope of a legacy session's standalone ``GET`` stream."""
    return {
        "type": "http",
        "method": "GET",
        "path": "/mcp",
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"accept", b"text/event-stream"),
            (b"mcp-session-id", session_id.encode()),
            (b"mcp-protocol-version", LEGACY.encode()),
        ],
    }


@asynccontextmanager
async def in_memory(app: McpAsgiApp) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client of ``app`` that calls it in memory (no socket: the clock may be
    Trio's mock clock)."""
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        yield client


def weak_parts(app: McpAsgiApp, headers: dict[str, str]) -> list[weakref.ref[Any]]:
    """Weak references to the session ``headers`` name and what it holds: its protocol
    connection, its engine's stream, and its channels (no strong reference is kept)."""
    assert app.manager is not None
    session = app.manager.sessions[headers["mcp-session-id"]]
    parts: list[Any] = [session, session.connection, session.stream]
    parts += [*session.channels.values(), *session.routes.values()]
    if session.standalone is not None:
        parts.append(session.standalone)
    return [weakref.ref(part) for part in {id(part): part for part in parts}.values()]


async def assert_freed(refs: list[weakref.ref[Any]]) -> None:
    """Every part is garbage once the HTTP handlers still finishing (a DELETE's, after its
    response went out) have returned."""
    with trio.move_on_after(5):
        while True:
            gc.collect()
            if all(ref() is None for ref in refs):
                return
            await trio.sleep(0.01)
    alive = [ref() for ref in refs if ref() is not None]
    assert not alive, [repr(part) for part in alive]


@pytest.fixture
async def served() -> Any:
    server, probe = make_server()
    app = asgi_app(server, engine_linger=0.05, keepalive_interval=0.05)
    async with running(app) as base, httpx.AsyncClient(timeout=10) as client:
        yield client, base + "/mcp", probe, app


async def test_a_session_from_initialize_to_delete(served: Any) -> None:
    client, url, _, app = served
    headers = await initialize(client, url)
    assert re.fullmatch(r"[\x21-\x7e]{16,}", headers["mcp-session-id"])
    assert headers["mcp-protocol-version"] == LEGACY
    r = await client.post(url, json=call(1, "echo", {"text": "hi"}), headers=headers)
    assert r.headers["content-type"] == "application/json"
    assert r.json() == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"content": [{"type": "text", "text": "hi"}]},
    }
    r = await client.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "ping"}, headers=headers)
    assert r.json()["result"] == {}
    r = await client.delete(url, headers=headers)
    assert r.status_code == 200
    r = await client.post(url, json=call(3, "echo", {"text": "x"}), headers=headers)
    assert r.status_code == 404
    await settle(app, sessions=0)


async def test_requests_need_a_known_session(served: Any) -> None:
    client, url, _, _ = served
    r = await client.post(url, json=call(1, "echo", {"text": "x"}), headers={"accept": ACCEPT})
    assert (r.status_code, r.json()["error"]["code"]) == (400, -32600)
    r = await client.post(
        url,
        json=call(1, "echo", {"text": "x"}),
        headers={"accept": ACCEPT, "mcp-session-id": "nope"},
    )
    assert r.status_code == 404
    for method in ("GET", "DELETE"):
        assert (await client.request(method, url, headers={"accept": ACCEPT})).status_code == 400
        r = await client.request(method, url, headers={"accept": ACCEPT, "mcp-session-id": "nope"})
        assert r.status_code == 404


async def test_a_session_is_fully_released_when_it_ends(served: Any) -> None:
    client, url, _, app = served
    headers = await initialize(client, url)
    await settle(app, sessions=1, running=0)  # initialize needs no engine
    r = await client.post(url, json=call(1, "echo", {"text": "x"}), headers=headers)
    assert r.status_code == 200
    await settle(app, sessions=1, running=0)  # the engine went dormant again
    async with open_sse(client, "GET", url, headers=headers) as reader:
        await reader.wait_for(1)  # the priming event
        await settle(app, sessions=1, running=1)  # an open stream keeps the engine
        refs = weak_parts(app, headers)
        assert len(refs) == 4  # session, connection, stream, the standalone channel
        assert (await client.delete(url, headers=headers)).status_code == 200
        assert len(await reader.rest()) == 1  # the stream ends with the session
    await settle(app, sessions=0)
    assert app.event_store is not None and len(app.event_store) == 0  # type: ignore[arg-type]
    await assert_freed(refs)


async def test_idle_sessions_expire() -> None:
    server, _ = make_server()
    app = asgi_app(server, session_idle_timeout=0.2, engine_linger=0.05)
    async with running(app) as base, httpx.AsyncClient() as client:
        headers = await initialize(client, base + "/mcp")
        await settle(app, sessions=1)
        r = await client.post(base + "/mcp", json=call(1, "echo", {"text": "x"}), headers=headers)
        assert r.status_code == 200
        refs = weak_parts(app, headers)
        with trio.fail_after(5):
            while app.manager is not None and app.manager.sessions:
                await trio.sleep(0.05)
        await settle(app, sessions=0)
        await assert_freed(refs)
        r = await client.post(base + "/mcp", json=call(1, "echo", {"text": "x"}), headers=headers)
        assert r.status_code == 404


async def test_shutdown_ends_every_session_and_its_tasks() -> None:
    server, probe = make_server()
    app = asgi_app(server, engine_linger=0.05)
    async with running(app, graceful_timeout=0.5) as base, httpx.AsyncClient(timeout=10) as client:
        headers = await initialize(client, base + "/mcp")
        manager = app.manager
        async with trio.open_nursery() as nursery:
            nursery.start_soon(
                partial(client.post, base + "/mcp", json=call(1, "block"), headers=headers)
            )
            with trio.fail_after(5):
                await probe.started.wait()
            refs = weak_parts(app, headers)
            nursery.cancel_scope.cancel()  # the client leaves; the call goes on (legacy)
    # Leaving `running` shut the app down: the deadline cancelled the call, the sessions ended.
    assert probe.cancelled.is_set()
    assert app.manager is None
    assert manager is not None and manager.sessions == {}
    await assert_freed(refs)


async def test_session_cap_gives_503() -> None:
    server, _ = make_server()
    app = asgi_app(server, max_sessions=2)
    async with running(app) as base, httpx.AsyncClient() as client:
        await initialize(client, base + "/mcp")
        await initialize(client, base + "/mcp")
        r = await client.post(
            base + "/mcp",
            json={
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": LEGACY,
                    "capabilities": {},
                    "clientInfo": {"name": "x", "version": "1"},
                },
            },
            headers={"accept": ACCEPT},
        )
        assert r.status_code == 503
        assert r.headers["retry-after"]


async def test_server_requests_travel_on_the_calls_stream(served: Any) -> None:
    """An elicitation goes out on the tools/call's SSE stream; the client POSTs the answer
    (202) and the result follows on the same stream."""
    client, url, _, _ = served
    headers = await initialize(client, url)
    async with open_sse(client, "POST", url, json=call(5, "ask_name"), headers=headers) as reader:
        assert reader.response.headers["content-type"] == "text/event-stream"
        events = await reader.wait_for(2)  # priming + the elicitation request
        assert events[0].data == "" and events[0].id and events[0].retry == 1000
        request = json.loads(events[1].data)
        assert request["method"] == "elicitation/create"
        answer = {
            "jsonrpc": "2.0",
            "id": request["id"],
            "result": {"action": "accept", "content": {"name": "Ada"}},
        }
        posted = await client.post(url, json=answer, headers=headers)
        assert posted.status_code == 202
        events = await reader.rest()
    final = json.loads(events[-1].data)
    assert final["id"] == 5
    assert final["result"]["content"][0]["text"] == "Hello, Ada!"


async def test_progress_and_logs_stream_with_event_ids(served: Any) -> None:
    client, url, _, _ = served
    headers = await initialize(client, url)
    r = await client.post(url, json=call(1, "progress", progressToken="t"), headers=headers)
    events = parse_sse(r.text)
    ids = [e.id for e in events]
    assert all(ids) and len(set(ids)) == len(ids)
    messages = [json.loads(e.data) for e in events[1:]]
    assert [m.get("method") for m in messages[:6]].count("notifications/progress") == 3
    assert messages[-1]["id"] == 1


async def test_the_standalone_stream_carries_list_changes_and_is_unique(served: Any) -> None:
    client, url, _, app = served
    headers = await initialize(client, url)
    async with open_sse(client, "GET", url, headers=headers) as reader:
        assert reader.response.headers["content-type"] == "text/event-stream"
        await reader.wait_for(1)  # priming
        second = await client.get(url, headers=headers)
        assert second.status_code == 409
        app.server.notify_list_changed("tools")
        events = await reader.wait_for(2)
        assert json.loads(events[1].data)["method"] == "notifications/tools/list_changed"
        with trio.fail_after(5):
            await reader.wait_raw(": keep-alive")


async def test_a_stream_closed_early_resumes_with_last_event_id(served: Any) -> None:
    """SEP-1699: the tool ends its stream; GET with Last-Event-ID replays what came after,
    and the answer follows."""
    client, url, probe, app = served
    headers = await initialize(client, url)
    r = await client.post(url, json=call(9, "poll", progressToken="p"), headers=headers)
    events = parse_sse(r.text)  # the stream ended early: priming and progress, no answer
    assert events[0].data == "" and events[0].retry == 1000
    assert [json.loads(e.data).get("method") for e in events[1:]] == ["notifications/progress"]
    probe.release.set()
    await trio.testing.wait_all_tasks_blocked()  # the answer went into the event store
    resume = {**headers, "last-event-id": events[-1].id or ""}
    r = await client.get(url, headers=resume)
    replay = parse_sse(r.text)
    assert [json.loads(e.data)["id"] for e in replay] == [9]
    assert json.loads(replay[0].data)["result"]["content"][0]["text"] == "after reconnect"
    # Replayed to the end, the stream is forgotten (410: not a 404, the session goes on).
    assert (await client.get(url, headers=resume)).status_code == 410
    assert app.event_store is not None and len(app.event_store) == 0


async def test_a_client_that_lost_its_stream_gets_the_rest_live(served: Any) -> None:
    """Legacy: a disconnect is not a cancellation; resuming attaches to the running call."""
    client, url, probe, _ = served
    headers = await initialize(client, url)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(partial(client.post, url, json=call(6, "block"), headers=headers))
        with trio.fail_after(5):
            await probe.started.wait()
        nursery.cancel_scope.cancel()  # the client leaves before any answer
    # The call goes on; its answer waits in the event store. Nothing is left to happen
    # once every task is blocked, a cancellation included.
    await trio.testing.wait_all_tasks_blocked()
    assert not probe.cancelled.is_set()
    probe.release.set()
    with trio.fail_after(5):
        await probe.finished.wait()


async def test_resuming_attaches_to_a_call_still_running(served: Any) -> None:
    client, url, probe, _ = served
    headers = await initialize(client, url)
    async with open_sse(
        client, "POST", url, json=call(7, "poll", progressToken="p"), headers=headers
    ) as reader:
        events = await reader.rest()  # priming, progress, then the server ends the stream
    resume = {**headers, "last-event-id": events[-1].id or ""}
    async with open_sse(client, "GET", url, headers=resume) as reader:
        await trio.testing.wait_all_tasks_blocked()  # the resumed stream is attached
        probe.release.set()  # the answer comes live on the resumed stream
        events = await reader.rest()
    assert [json.loads(e.data)["id"] for e in events] == [7]


async def test_unknown_event_ids_cannot_be_resumed(served: Any) -> None:
    client, url, _, _ = served
    headers = await initialize(client, url)
    r = await client.get(url, headers={**headers, "last-event-id": "nope/1"})
    assert (r.status_code, r.json()["error"]["code"]) == (410, -32600)


async def test_batches_exist_only_in_2025_03_26(served: Any) -> None:
    client, url, _, _ = served
    old = await initialize(client, url, "2025-03-26")
    batch = [call(1, "echo", {"text": "a"}), call(2, "echo", {"text": "b"})]
    r = await client.post(url, json=batch, headers={**old, "accept": "application/json"})
    answers = sorted(r.json(), key=lambda m: m["id"])
    assert [m["result"]["content"][0]["text"] for m in answers] == ["a", "b"]
    new = await initialize(client, url)
    r = await client.post(url, json=batch, headers=new)
    assert (r.status_code, r.json()["error"]["code"]) == (400, -32600)


async def test_a_batch_that_repeats_a_request_id_is_refused_whole(served: Any) -> None:
    """Issue 11, item 9: the POST's answers are routed by id, so a batch repeating one
    cannot be answered item by item; it is refused (the repeat's answer used to be dropped
    silently)."""
    client, url, _, _ = served
    headers = await initialize(client, url, "2025-03-26")
    batch = [call(1, "echo", {"text": "a"}), call(2, "echo", {"text": "b"})]
    batch.append(call(1, "echo", {"text": "c"}))
    r = await client.post(url, json=batch, headers={**headers, "accept": "application/json"})
    assert r.status_code == 400
    assert r.json() == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {
            "code": -32600,
            "message": "Invalid Request: request id 1 is used more than once in this batch",
        },
    }
    # The session goes on: the same ids, once each, are answered.
    r = await client.post(url, json=batch[:2], headers={**headers, "accept": "application/json"})
    assert sorted(m["result"]["content"][0]["text"] for m in r.json()) == ["a", "b"]


async def test_the_same_request_id_twice_at_once_is_refused(served: Any) -> None:
    client, url, probe, _ = served
    headers = await initialize(client, url)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(partial(client.post, url, json=call(1, "block"), headers=headers))
        with trio.fail_after(5):
            await probe.started.wait()
        r = await client.post(url, json=call(1, "echo", {"text": "x"}), headers=headers)
        assert (r.status_code, r.json()["error"]["code"]) == (400, -32600)
        probe.release.set()


async def test_without_an_event_store_streams_are_not_resumable() -> None:
    server, _ = make_server()
    app = asgi_app(server, event_store=None)
    async with running(app) as base, httpx.AsyncClient() as client:
        headers = await initialize(client, base + "/mcp")
        r = await client.post(
            base + "/mcp", json=call(1, "progress", progressToken="t"), headers=headers
        )
        events = parse_sse(r.text)
        assert all(e.id is None for e in events)
        assert json.loads(events[-1].data)["id"] == 1


async def test_memory_event_store_bounds() -> None:
    store = MemoryEventStore(max_events_per_stream=2, max_streams=2)
    first = await store.append("a", b"1")
    for data in (b"2", b"3", b"4"):
        await store.append("a", data)
    assert await store.replay_after(first) is None  # event 2 was dropped: a gap
    replay = await store.replay_after("a/2")
    assert replay is not None and replay.events == [("a/3", b"3"), ("a/4", b"4")]
    await store.append("b", b"x")
    await store.append("c", b"y")  # evicts "a", the least recently written
    assert await store.replay_after("a/2") is None
    assert len(store) == 2
    await store.discard("b")
    assert len(store) == 1
    assert await store.replay_after("c/9") is None  # never issued


async def test_a_session_ending_while_its_standalone_stream_opens(served: Any) -> None:
    """The session ends (a DELETE, in another task) just as the GET stream's first bytes
    are being sent: the GET ends cleanly, with nothing raised into the ASGI server."""
    client, url, _, app = served
    headers = await initialize(client, url)
    session_id = headers["mcp-session-id"]
    manager = app.manager
    assert manager is not None
    sent: list[dict[str, Any]] = []
    start_seen = trio.Event()

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)
        if message["type"] == "http.response.start":
            start_seen.set()
            while session_id in manager.sessions:  # let the session end meanwhile
                await trio.sleep(0.001)

    async def receive() -> dict[str, Any]:
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    scope = standalone_get(session_id)

    async def end_the_session() -> None:
        await start_seen.wait()
        await manager.sessions[session_id].end()

    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(end_the_session)
            await app(scope, receive, send)
    assert sent[0]["type"] == "http.response.start"
    assert sent[0]["status"] == 200
    assert sent[-1] == {"type": "http.response.body", "body": b"", "more_body": False}
    assert [m for m in sent if not m.get("more_body", False)] == [sent[0], sent[-1]]


async def test_delivering_to_a_running_engine_is_one_trip_through_the_scheduler() -> None:
    """Delivering to a running engine checkpoints once, in the channel send: looking up the
    engine's inbound channel is not a checkpoint of its own (ensure_running still is)."""
    server, _ = make_server()
    app = asgi_app(server, engine_linger=30)
    async with running(app) as base, httpx.AsyncClient(timeout=10) as client:
        headers = await initialize(client, base + "/mcp")
        r = await client.post(base + "/mcp", json=call(1, "echo", {"text": "x"}), headers=headers)
        assert r.json()["result"]["content"][0]["text"] == "x"
        assert app.manager is not None
        session = app.manager.sessions[headers["mcp-session-id"]]
        assert session.running
        looked_up = False
        with trio.CancelScope() as scope:
            scope.cancel()
            inbound = await session._engine_inbound()  # no checkpoint: not cancelled here
            looked_up = True
            assert inbound is session._inbound
            await session.ensure_running()
            raise AssertionError("ensure_running is a checkpoint")
        assert looked_up and scope.cancelled_caught


def _with_a_plain_tool() -> tuple[Server, Probe]:
    server, probe = make_server()

    @server.tool()
    def shout(text: str) -> str:
        """A plain function: the engine's receive loop would answer it without a task."""
        return text.upper()

    return server, probe


def _under(task: trio.lowlevel.Task, nursery: trio.Nursery) -> bool:
    """Whether ``task`` runs in ``nursery`` or in a nursery of one of its descendants."""
    parent = task.parent_nursery
    while parent is not None:
        if parent is nursery:
            return True
        owner = parent.parent_task
        parent = owner.parent_nursery
    return False


class _Spawns(trio.abc.Instrument):
    def __init__(self) -> None:
        self.tasks: list[trio.lowlevel.Task] = []

    def task_spawned(self, task: trio.lowlevel.Task) -> None:
        self.tasks.append(task)


async def test_a_plain_function_tool_call_starts_no_engine() -> None:
    """A call of a plain-function tool in a dormant session is answered in the POST's own
    task: no engine starts for it (the stateless path answers the same way)."""
    app = asgi_app(_with_a_plain_tool()[0], engine_linger=30)
    async with running(app) as base, httpx.AsyncClient(timeout=10) as client:
        headers = await initialize(client, base + "/mcp")
        r = await client.post(base + "/mcp", json=call(1, "shout", {"text": "hi"}), headers=headers)
        assert r.headers["content-type"].startswith("application/json")
        assert r.json()["result"]["content"][0]["text"] == "HI"
        bad = await client.post(base + "/mcp", json=call(2, "shout", {"txt": "x"}), headers=headers)
        assert bad.json()["result"]["isError"] is True
        assert app.manager is not None
        assert app.manager.statistics() == {"sessions": 1, "running": 0}


async def test_with_the_engine_running_a_plain_call_takes_no_task_of_the_engine() -> None:
    """With the engine running (a handler's call, lingering), a plain call is still answered
    in the POST's task: nothing is spawned under the session manager's nursery for it (the
    engine's receive loop would send the answer from a task of its own), and the order of
    answers in the session is kept."""
    app = asgi_app(_with_a_plain_tool()[0], engine_linger=30)
    async with running(app) as base, httpx.AsyncClient(timeout=10) as client:
        headers = await initialize(client, base + "/mcp")
        r = await client.post(base + "/mcp", json=call(1, "echo", {"text": "x"}), headers=headers)
        assert r.json()["result"]["content"][0]["text"] == "x"
        manager = app.manager
        assert manager is not None
        assert manager.sessions[headers["mcp-session-id"]].running
        spawns = _Spawns()
        trio.lowlevel.add_instrument(spawns)
        try:
            r = await client.post(
                base + "/mcp", json=call(2, "shout", {"text": "y"}), headers=headers
            )
        finally:
            trio.lowlevel.remove_instrument(spawns)
        assert r.json()["result"]["content"][0]["text"] == "Y"
        assert [t.name for t in spawns.tasks if _under(t, manager.nursery)] == []
        # The engine still answers what needs a handler, in the same session.
        r = await client.post(base + "/mcp", json=call(3, "echo", {"text": "z"}), headers=headers)
        assert r.json()["result"]["content"][0]["text"] == "z"


async def test_a_plain_call_never_overtakes_a_message_on_its_way_to_the_engine() -> None:
    """A request handed to the running engine, and a plain call delivered by another POST's
    task in the very batch where the engine takes the first (in either order, as trio
    picks): the connection sees them in the order they came, so a plain call reusing the
    id of the request in flight is refused, every time (answering it in its own task while
    the first is still on its way would let it pass).

    wait_all_tasks_blocked: the test's HTTP client is idle, and the blocking calls wait."""
    server, probe = _with_a_plain_tool()
    app = asgi_app(server, engine_linger=30)
    async with running(app) as base, httpx.AsyncClient(timeout=10) as client:
        headers = await initialize(client, base + "/mcp")
        r = await client.post(base + "/mcp", json=call(1, "echo", {"text": "x"}), headers=headers)
        assert r.json()["result"]["content"][0]["text"] == "x"
        assert app.manager is not None
        session = app.manager.sessions[headers["mcp-session-id"]]
        assert session.running
        for attempt in range(20):
            probe.started = trio.Event()  # set by this attempt's blocking call
            id = 100 + attempt
            first = JsonRpcRequest(id, "tools/call", {"name": "block", "arguments": {}})
            second = JsonRpcRequest(id, "tools/call", {"name": "shout", "arguments": {"text": "a"}})
            refused = session.connection.statistics().errors_replied
            go = trio.Event()

            async def deliver_second(go: trio.Event = go, second: JsonRpcRequest = second) -> None:
                await go.wait()
                await session.deliver(second)

            async with trio.open_nursery() as nursery:
                nursery.start_soon(deliver_second)
                await trio.testing.wait_all_tasks_blocked()
                go.set()  # the second runs in the batch where the engine takes the first,
                await session.deliver(first)  # which this hands over, then yields
            with trio.fail_after(5):  # (the blocking calls wait for the shutdown)
                await probe.started.wait()
                await trio.testing.wait_all_tasks_blocked()
            assert session.connection.statistics().errors_replied == refused + 1, attempt


async def test_a_rate_limited_plain_call_still_takes_from_the_callers_bucket() -> None:
    """With ``tool_rate_limit``, plain-function calls are not answered past the limit: they
    go the engine's way, whose dispatcher knows the caller's bucket."""
    server = Server("limited", tool_rate_limit=RateLimit(calls=2, per=3600))

    @server.tool()
    def shout(text: str) -> str:
        """A plain function."""
        return text.upper()

    app = asgi_app(server, engine_linger=30)
    async with running(app) as base, httpx.AsyncClient(timeout=10) as client:
        headers = await initialize(client, base + "/mcp")
        answers = [
            (
                await client.post(
                    base + "/mcp", json=call(n, "shout", {"text": "a"}), headers=headers
                )
            ).json()["result"]
            for n in (1, 2, 3)
        ]
        assert [a.get("isError", False) for a in answers] == [False, False, True]
        assert "Rate limit exceeded" in answers[2]["content"][0]["text"]


#: The documented bound on ending a session (docs/reference/limits.md).
SESSION_END_TIMEOUT = 5.0
HOUR = 3600.0


class StuckEventStore(MemoryEventStore):
    """An event store that takes an hour to discard a session's events."""

    async def discard_session(self, session: str) -> None:
        await trio.sleep(HOUR)
        await super().discard_session(session)


async def test_a_client_that_does_not_read_cannot_hold_the_end_of_its_session(
    autojump_clock: trio.abc.Clock,
) -> None:
    """A DELETE ends the session at once even while the client of its standalone stream
    reads nothing (every write to it would wait an hour): the end lets the stream go, and
    the stream's own exchange ends it, so only that exchange waits for its client."""
    server, _ = make_server()
    async with (
        open_asgi_app(server) as app,
        in_memory(app) as client,
        trio.open_nursery() as nursery,
    ):
        headers = await initialize(client, "/mcp")
        session_id = headers["mcp-session-id"]
        assert app.manager is not None
        session = app.manager.sessions[session_id]

        async def send(message: dict[str, Any]) -> None:
            await trio.sleep(HOUR)

        async def receive() -> dict[str, Any]:
            await trio.sleep_forever()
            raise AssertionError("unreachable")

        nursery.start_soon(app, standalone_get(session_id), receive, send)
        await trio.testing.wait_all_tasks_blocked()
        assert session.standalone is not None  # the GET stream is open, its write stuck
        began = trio.current_time()
        response = await client.delete("/mcp", headers=headers)
        took = trio.current_time() - began
        assert session.closed and session_id not in app.manager.sessions
        nursery.cancel_scope.cancel()
    assert response.status_code == 200
    assert took == 0


async def test_a_stuck_event_store_cannot_hold_the_end_of_a_session(
    autojump_clock: trio.abc.Clock,
) -> None:
    server, _ = make_server()
    async with (
        open_asgi_app(server, event_store=StuckEventStore()) as app,
        in_memory(app) as client,
    ):
        headers = await initialize(client, "/mcp")
        began = trio.current_time()
        response = await client.delete("/mcp", headers=headers)
        took = trio.current_time() - began
        assert app.manager is not None and app.manager.sessions == {}
    assert response.status_code == 200
    assert took == pytest.approx(SESSION_END_TIMEOUT)


async def test_a_stuck_event_store_cannot_hold_the_shutdown(
    autojump_clock: trio.abc.Clock,
) -> None:
    """Leaving the app's block ends every session within one bound in all (they share the
    deadline), though the store would take an hour for each."""
    server, _ = make_server()
    async with open_asgi_app(server, event_store=StuckEventStore()) as app:
        async with in_memory(app) as client:
            for _ in range(3):
                await initialize(client, "/mcp")
        manager = app.manager
        assert manager is not None and len(manager.sessions) == 3
        began = trio.current_time()
    took = trio.current_time() - began
    assert took == pytest.approx(SESSION_END_TIMEOUT)
    assert manager.sessions == {}
