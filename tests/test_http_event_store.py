"""The event store of resumable streams (legacy Streamable HTTP): byte budgets per stream,
per session and in total, the oldest evicted first, and what a client gets when it resumes a
stream whose events were evicted (410, never 404: the session goes on)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import trio
from http_support import initialize, parse_sse, running

from trio_mcp import Context, McpError, Server, jsonrpc as rpc
from trio_mcp._http.server._event_store import EVENT_OVERHEAD, STREAM_OVERHEAD
from trio_mcp.http import (
    MemoryEventStore,
    asgi_app,
    close_sse_stream,
    open_http_client,
    open_http_stream,
)

#: Every test here runs on both HTTP front ends.
pytestmark = pytest.mark.usefixtures("front_end")

KB = 1000
EVENT = KB + EVENT_OVERHEAD  # the charge for one event of KB bytes


def charge(*events: int) -> int:
    """What one stream holding ``events`` events of KB bytes is charged."""
    return sum(STREAM_OVERHEAD + n * EVENT for n in events)


async def fill(store: MemoryEventStore, stream: str, count: int, *, session: str = "A") -> str:
    """Append ``count`` events of KB bytes to ``stream``; returns the last id."""
    event_id = ""
    for _ in range(count):
        event_id = await store.append(stream, b"x" * KB, session=session)
    return event_id


async def test_a_stream_over_its_budget_drops_its_oldest_events() -> None:
    store = MemoryEventStore(max_stream_bytes=charge(3), max_session_bytes=charge(3) * 4)
    assert await fill(store, "s", 3) == "s/3"
    assert store.statistics()["bytes"] == store.session_bytes("A") == charge(3)
    await fill(store, "s", 1)  # event 1 goes: resuming from it still works
    assert store.statistics() == {"streams": 1, "events": 3, "sessions": 1, "bytes": charge(3)}
    replay = await store.replay_after("s/1")
    assert replay is not None and [e for e, _ in replay.events] == ["s/2", "s/3", "s/4"]
    assert replay.session == "A"
    await fill(store, "s", 1)  # event 2 goes: resuming from 1 would skip it
    assert await store.replay_after("s/1") is None
    replay = await store.replay_after("s/2")
    assert replay is not None and [e for e, _ in replay.events] == ["s/3", "s/4", "s/5"]


async def test_an_event_larger_than_a_stream_budget_is_not_kept() -> None:
    store = MemoryEventStore(max_stream_bytes=charge(2))
    first = await store.append("s", b"", session="A")  # a priming event
    assert store.statistics()["bytes"] == STREAM_OVERHEAD + EVENT_OVERHEAD
    assert await store.append("s", b"x" * (3 * KB), session="A") == "s/2"
    # Nothing of the stream is kept but its own record; nothing before the event can be
    # resumed (it would skip it), what comes after it can.
    assert store.statistics() == {"streams": 1, "events": 0, "sessions": 1, "bytes": charge(0)}
    assert await store.replay_after(first) is None
    await fill(store, "s", 1)
    replay = await store.replay_after("s/2")
    assert replay is not None and [e for e, _ in replay.events] == ["s/3"]


async def test_a_session_over_its_budget_loses_its_least_recently_written_stream() -> None:
    store = MemoryEventStore(max_stream_bytes=charge(2), max_session_bytes=charge(2, 2, 1))
    a1 = await fill(store, "a1", 2)
    await fill(store, "b1", 2, session="B")  # another session: never touched by A's budget
    await fill(store, "a2", 2)
    await fill(store, "a3", 1)
    assert store.session_bytes("A") == charge(2, 2, 1)  # exactly at the budget
    a2 = await fill(store, "a2", 1)  # a2 is written again (its first event dropped)
    await fill(store, "a3", 1)  # over the budget: a1, the oldest, goes
    assert await store.replay_after(a1) is None  # evicted whole
    assert await store.replay_after(a2) is not None
    assert store.session_bytes("A") == charge(2, 2) <= store.max_session_bytes
    assert store.session_bytes("B") == charge(2)
    assert store.statistics()["bytes"] == charge(2, 2, 2)
    assert len(store) == 3


async def test_the_store_over_its_budget_loses_the_least_recently_written_stream() -> None:
    store = MemoryEventStore(
        max_stream_bytes=charge(2), max_session_bytes=charge(2), max_bytes=charge(2, 2, 2)
    )
    first = {}
    for session in "ABC":
        first[session] = await store.append(session.lower(), b"x" * KB, session=session)
        await fill(store, session.lower(), 1, session=session)
    first["A"] = await fill(store, "a", 1)  # a is written again: b is the oldest
    first["D"] = await fill(store, "d", 1, session="D")  # over the total: b goes
    assert [await store.replay_after(first[s]) is not None for s in "ABCD"] == [
        True,
        False,
        True,
        True,
    ]
    assert store.statistics() == {
        "streams": 3,
        "events": 5,
        "sessions": 3,
        "bytes": charge(2, 2, 1),
    }
    assert store.session_bytes("B") == 0
    await store.discard_session("A")
    await store.discard("c")
    await store.discard("c")  # (idempotent)
    await store.discard_session("D")
    assert store.statistics() == {"streams": 0, "events": 0, "sessions": 0, "bytes": 0}


async def test_ids_are_never_issued_twice_not_even_for_an_evicted_stream() -> None:
    """A stream evicted and then written again (a call still running whose early events
    went) gets new ids: a client holding an old one cannot resume past what it missed."""
    store = MemoryEventStore(max_stream_bytes=charge(1), max_session_bytes=charge(1))
    old = await fill(store, "s", 1)
    await fill(store, "t", 1)  # evicts s
    assert await store.replay_after(old) is None
    new = [await fill(store, "s", 1) for _ in range(3)]  # s again (and t evicted)
    assert old not in new and len(set(new)) == 3
    assert await store.replay_after(old) is None
    replay = await store.replay_after(new[1])
    assert replay is not None and [e for e, _ in replay.events] == [new[2]]


async def test_the_budgets_must_nest() -> None:
    with pytest.raises(ValueError, match="byte budgets"):
        MemoryEventStore(max_stream_bytes=10 * KB, max_session_bytes=5 * KB)
    with pytest.raises(ValueError, match="byte budgets"):
        MemoryEventStore(max_session_bytes=5 * KB, max_bytes=4 * KB, max_stream_bytes=4 * KB)


@pytest.mark.parametrize(
    "event_id",
    ["s/\u00b2", "s/" + "9" * 5000, "s/01", "s/0", "s/-1", "s/ 1", "s/1 ", "\u00df/1", "s", ""],
)
async def test_malformed_event_ids_are_unknown(event_id: str) -> None:
    store = MemoryEventStore()
    await fill(store, "s", 2)
    assert await store.replay_after(event_id) is None


# -- through the app ---------------------------------------------------------------------


def big_server() -> Server:
    server = Server("big-answers", version="1")

    @server.tool()
    async def big(ctx: Context, size: int) -> str:
        """Close the request's stream (the client now must resume it), then answer."""
        await close_sse_stream(ctx)
        return "x" * size

    return server


def call(id: int, size: int) -> dict[str, Any]:
    params = {"name": "big", "arguments": {"size": size}}
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}


async def stored(store: MemoryEventStore, priming_id: str) -> None:
    """Wait until the answer of the stream ``priming_id`` began is in the store (its handler
    answers after the POST ended; the newest stream is never the one evicted)."""
    with trio.fail_after(5):
        while not getattr(await store.replay_after(priming_id), "events", None):
            await trio.sleep(0.01)


async def test_a_client_resuming_an_evicted_stream_gets_410_and_its_session_goes_on() -> None:
    """Abandoned answers are evicted past the session's budget, oldest first; resuming one
    gets 410 Gone with a JSON-RPC error saying so (a 404 would tell the client that its
    session ended); the newest are still resumable and the session still works."""
    store = MemoryEventStore(max_stream_bytes=8 * KB, max_session_bytes=24 * KB)
    app = asgi_app(big_server(), event_store=store, engine_linger=0.05)
    async with running(app) as base, httpx.AsyncClient(timeout=10) as client:
        url = base + "/mcp"
        headers = await initialize(client, url)
        session = headers["mcp-session-id"]
        resume_from: list[str] = []
        for id in range(1, 6):
            r = await client.post(url, json=call(id, 5 * KB), headers=headers)
            (priming,) = parse_sse(r.text)  # the stream ended before the answer
            assert priming.id is not None
            resume_from.append(priming.id)
            await stored(store, priming.id)
            assert store.session_bytes(session) <= 24 * KB
        # Each stream: its record, the priming event and the answer (5 KB and its frame).
        assert store.statistics()["streams"] == 3  # 24 KB hold three: the first two went

        r = await client.get(url, headers={**headers, "last-event-id": resume_from[0]})
        assert r.status_code == 410
        error = r.json()["error"]
        assert error["code"] == -32600
        assert "cannot be resumed" in error["message"]
        assert error["data"] == {"lastEventId": resume_from[0]}

        r = await client.get(url, headers={**headers, "last-event-id": resume_from[4]})
        assert r.status_code == 200
        (answer,) = parse_sse(r.text)
        assert json.loads(answer.data)["id"] == 5

        r = await client.post(
            url, json={"jsonrpc": "2.0", "id": 9, "method": "ping"}, headers=headers
        )
        assert r.json() == {"jsonrpc": "2.0", "id": 9, "result": {}}
        assert (await client.delete(url, headers=headers)).status_code == 200
        assert store.statistics() == {"streams": 0, "events": 0, "sessions": 0, "bytes": 0}


async def test_our_client_fails_a_call_at_once_when_its_stream_cannot_be_resumed() -> None:
    """An answer too large for the store is not kept: the client resuming its stream gets
    410 and fails the call with the server's reason, rather than retrying."""
    store = MemoryEventStore(max_stream_bytes=4 * KB)
    app = asgi_app(big_server(), event_store=store, retry_ms=10)
    async with (
        running(app) as base,
        open_http_client(base + "/mcp", protocol_version="2025-11-25") as client,
    ):
        with trio.fail_after(5), pytest.raises(McpError, match="cannot be resumed"):
            await client.call_tool("big", {"size": 10 * KB})
        result = await client.call_tool("big", {"size": KB})
        assert result.content[0].text == "x" * KB  # type: ignore[union-attr]


async def test_our_client_reopens_its_standalone_stream_when_it_cannot_be_resumed() -> None:
    """The standalone GET stream breaks and its events were evicted meanwhile: resuming it
    gets 410, so the client opens a new one (without Last-Event-ID), rather than giving up
    the stream and with it every later message of the server's own."""
    store = MemoryEventStore(max_streams=1)
    app = asgi_app(big_server(), event_store=store, retry_ms=10)
    hello = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    async with running(app) as base, open_http_stream(base + "/mcp") as stream:
        await stream.send(rpc.JsonRpcRequest(0, "initialize", hello))
        assert isinstance(await stream.receive(), rpc.ResultResponse)
        await stream.send(rpc.JsonRpcNotification("notifications/initialized"))  # opens the stream
        assert app.manager is not None
        (session,) = app.manager.sessions.values()
        first = await carrier(session)
        await store.append("another", b"", session="another")  # takes the only slot
        assert session.standalone is not None
        session.standalone.let_go()  # its connection breaks
        assert await carrier(session, not_=first) is not first
        app.server.notify_list_changed("tools")
        with trio.fail_after(5):
            message = await stream.receive()
        assert message == rpc.JsonRpcNotification("notifications/tools/list_changed")


async def carrier(session: Any, not_: object = None) -> object:
    """The response that carries ``session``'s standalone stream, once there is one (other
    than ``not_``)."""
    with trio.fail_after(5):
        while True:
            channel = session.standalone
            if channel is not None and channel.writer is not None and channel.writer is not not_:
                return channel.writer
            await trio.sleep(0.01)
