"""The HTTP+SSE transport of 2024-11-05 across a fleet, with real worker processes on a real
redis-server: the SSE stream on worker A, its POSTs on worker B, the answers on A's stream;
another principal's POST is refused as for an unknown session; once the stream closed, B
answers 404; while Redis is away, B answers 503 with ``Retry-After`` and a JSON-RPC error,
A (which holds the session) goes on, and B forwards again once Redis is back. The sessions
per principal are capped across the workers, for both legacy transports together."""

from __future__ import annotations

import json
from typing import Any

import coredis
import httpx
import pytest
import trio
import trio.testing
from http_support import ACCEPT, LEGACY, SseReader, initialize, open_sse
from redis_support import RedisProcess
from test_fleet_state import workers

from trio_mcp import Server, _jsonrpc as rpc
from trio_mcp._http.server._exchange import ResponseWriter
from trio_mcp._http.server._sse_2024 import SseTransport, _Held, _SseStream
from trio_mcp._transports._stream import Received

pytestmark = pytest.mark.slow

#: Every wait on the workers is bounded by this (it never decides a test).
BOUND = 15

ALICE = {"x-user": "alice"}


def base_of(mcp_url: str) -> str:
    return mcp_url.removesuffix("/mcp")


def request(id: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": params or {}}


def echo(id: int, text: str) -> dict[str, Any]:
    return request(id, "tools/call", {"name": "echo", "arguments": {"text": text}})


INITIALIZE = request(
    1,
    "initialize",
    {
        "protocolVersion": "2024-11-05",
        "capabilities": {},
        "clientInfo": {"name": "old", "version": "1"},
    },
)

INITIALIZE_2025 = request(
    0,
    "initialize",
    {
        "protocolVersion": LEGACY,
        "capabilities": {},
        "clientInfo": {"name": "new", "version": "1"},
    },
)


async def answers(reader: SseReader, count: int) -> list[dict[str, Any]]:
    """The next ``count`` messages of the stream (after the endpoint event)."""
    with trio.fail_after(BOUND):
        events = await reader.wait_for(1 + count)
    return [json.loads(event.data) for event in events[1:]]


async def open_session(
    client: httpx.AsyncClient, reader: SseReader, post_base: str
) -> tuple[str, list[dict[str, Any]]]:
    """Initialize the session of ``reader``'s stream through ``post_base``; its POST URL."""
    with trio.fail_after(BOUND):
        (endpoint,) = await reader.wait_for(1)
    assert endpoint.event == "endpoint"
    post_url = post_base + endpoint.data
    r = await client.post(post_url, json=INITIALIZE, headers=ALICE)
    assert (r.status_code, r.text) == (202, "Accepted")
    (initialized,) = await answers(reader, 1)
    assert initialized["result"]["protocolVersion"] == "2024-11-05"
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await client.post(post_url, json=note, headers=ALICE)).status_code == 202
    return post_url, [initialized]


async def test_posts_on_another_worker_reach_the_session_and_end_with_its_stream(
    durable_redis: RedisProcess,
) -> None:
    with workers(durable_redis.url) as (a, b):
        a_base, b_base = base_of(a), base_of(b)
        async with httpx.AsyncClient(timeout=BOUND) as client:
            async with open_sse(client, "GET", a_base + "/sse", headers=ALICE) as reader:
                post_url, seen = await open_session(client, reader, b_base)
                for i in range(2, 12):
                    r = await client.post(post_url, json=echo(i, f"t{i}"), headers=ALICE)
                    assert (r.status_code, r.text) == (202, "Accepted")
                got = (await answers(reader, 1 + 10))[1:]
                assert sorted(m["id"] for m in got) == list(range(2, 12))
                for message in got:
                    assert message["result"]["content"][0]["text"] == f"t{message['id']}"

                # Another principal, or none, is told what an unknown session gets.
                unknown = b_base + "/messages?session_id=never-was"
                nobody = await client.post(unknown, json=echo(50, "x"), headers=ALICE)
                for headers in ({"x-user": "mallory"}, {}):
                    r = await client.post(post_url, json=echo(50, "x"), headers=headers)
                    assert (r.status_code, r.json()) == (404, nobody.json())
                # A body that is not JSON is the forwarding worker's to refuse.
                bad = await client.post(
                    post_url,
                    content=b"{oops",
                    headers={**ALICE, "content-type": "application/json"},
                )
                assert bad.status_code == 400
                r = await client.post(post_url, json=echo(60, "last"), headers=ALICE)
                assert r.status_code == 202
                (last,) = (await answers(reader, 1 + 10 + 1))[-1:]
                assert last["id"] == 60
            # The stream closed on A: the session ended everywhere.
            with trio.fail_after(BOUND):
                while (
                    await client.post(post_url, json=echo(70, "gone?"), headers=ALICE)
                ).status_code == 202:
                    await trio.sleep(0.05)
            r = await client.post(post_url, json=echo(71, "gone"), headers=ALICE)
            assert r.status_code == 404
            assert seen


async def test_redis_away_gives_503_on_the_forwarding_worker_and_the_fleet_recovers(
    durable_redis: RedisProcess,
) -> None:
    with workers(durable_redis.url) as (a, b):
        a_base, b_base = base_of(a), base_of(b)
        async with (
            httpx.AsyncClient(timeout=BOUND) as client,
            open_sse(client, "GET", a_base + "/sse", headers=ALICE) as reader,
        ):
            post_url, _ = await open_session(client, reader, b_base)
            durable_redis.stop()
            r = await client.post(post_url, json=echo(2, "away"), headers=ALICE)
            assert r.status_code == 503
            assert int(r.headers["retry-after"]) > 0
            body = r.json()
            assert body["error"]["data"] == {"retryAfter": 5, "reason": "unavailable"}
            assert "Redis" in body["error"]["message"]
            # A new stream needs Redis in a fleet: refused the same way.
            opened = await client.get(
                b_base + "/sse", headers={**ALICE, "accept": "text/event-stream"}
            )
            assert opened.status_code == 503 and "retry-after" in opened.headers
            # So does a new Streamable HTTP session (its caller's sessions are counted there).
            r = await client.post(a, json=INITIALIZE_2025, headers={**ALICE, "accept": ACCEPT})
            assert r.status_code == 503 and "retry-after" in r.headers
            assert r.json()["error"]["data"] == {"retryAfter": 5, "reason": "unavailable"}
            # The worker holding the session needs no Redis for it.
            a_url = a_base + post_url.removeprefix(b_base)
            r = await client.post(a_url, json=echo(3, "on a"), headers=ALICE)
            assert r.status_code == 202
            on_a = (await answers(reader, 2))[-1]
            assert on_a["id"] == 3
            durable_redis.start()
            # B forwards again, by itself, once Redis answers.
            with trio.fail_after(BOUND):
                while (
                    await client.post(post_url, json=echo(4, "back"), headers=ALICE)
                ).status_code != 202:
                    await trio.sleep(0.1)
            back = (await answers(reader, 3))[-1]
            assert back["id"] == 4


class Answers:
    """Stands in for the fleet's part on the worker holding the sessions: records the word
    each forwarded message's worker would be sent."""

    def __init__(self) -> None:
        self.said: list[tuple[str, str]] = []
        self.unclaimed = 0

    async def answer(self, reply: tuple[str, str], outcome: str) -> None:
        await trio.lowlevel.checkpoint()
        self.said.append((reply[1], outcome))


async def test_a_forwarded_message_is_acknowledged_once_its_session_took_it(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """The worker holding a session tells the worker a POST reached that its session took
    the message only once it did (only then is that POST answered 202, so a later POST
    cannot overtake it). A session that takes nothing (its client floods it) has the
    messages past its queue refused ("busy": 503 there), and holds up no other session; a
    message for a session that is not here, or another principal's, is answered "gone"."""
    transport = SseTransport(Server("owner"), message_path="/messages", inbound_buffer=1)
    answers = Answers()
    transport.fleet = answers  # type: ignore[assignment]

    async def nothing(message: dict[str, Any]) -> None:
        await trio.lowlevel.checkpoint()

    writer = ResponseWriter(nothing, json_ok=False)
    unused, _ = trio.open_memory_channel[bytes](0)
    stuck, stuck_receive = trio.open_memory_channel[Received](0)
    flooded = _Held(stuck, "alice", _SseStream(writer, stuck_receive, unused))
    other_send, other_receive = trio.open_memory_channel[Received](10)
    other = _Held(other_send, "bob", _SseStream(writer, other_receive, unused))
    transport.sessions.update(s=flooded, t=other)

    def message(body: dict[str, Any]) -> Received:
        return rpc.parse(json.dumps(body).encode())

    async with trio.open_nursery() as nursery:
        transport._forwarding(nursery, flooded, answers)  # type: ignore[arg-type]
        transport._forwarding(nursery, other, answers)  # type: ignore[arg-type]
        started = trio.current_time()
        for n in range(2):  # one waits for the session, one in the queue
            await transport._deliver_forwarded("s", "alice", message(echo(n, "x")), ("b", f"s{n}"))
            await trio.testing.wait_all_tasks_blocked()
        assert answers.said == []  # not taken yet: no word, so no 202
        await transport._deliver_forwarded("s", "alice", message(echo(2, "x")), ("b", "s2"))
        await trio.testing.wait_all_tasks_blocked()
        assert answers.said == [("s2", "busy")] and transport.forwards_refused == 1
        # Another session's messages are not held up.
        await transport._deliver_forwarded("t", "bob", message(echo(8, "y")), ("b", "t8"))
        await trio.testing.wait_all_tasks_blocked()
        got = other_receive.receive_nowait()
        assert isinstance(got, rpc.JsonRpcRequest) and got.id == 8
        assert answers.said[-1] == ("t8", "taken")
        # Another principal's message, or one for a session not here: "gone" (404).
        await transport._deliver_forwarded("s", "mallory", message(echo(9, "x")), ("b", "m9"))
        await transport._deliver_forwarded("x", "alice", message(echo(9, "x")), ("b", "x9"))
        assert answers.said[-2:] == [("m9", "gone"), ("x9", "gone")]
        assert trio.current_time() == started  # nothing above waited
        # The flooded session takes its messages, in order: each acknowledged only then.
        for n in range(2):
            taken = await stuck_receive.receive()
            assert isinstance(taken, rpc.JsonRpcRequest) and taken.id == n
            await trio.testing.wait_all_tasks_blocked()
            assert answers.said[-1] == (f"s{n}", "taken")
        nursery.cancel_scope.cancel()


async def test_the_sessions_per_principal_cap_holds_across_workers_and_both_transports(
    durable_redis: RedisProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLEET_SESSIONS_PER_PRINCIPAL", "2")
    with workers(durable_redis.url) as (a, b):
        a_base, b_base = base_of(a), base_of(b)
        sse = {**ALICE, "accept": "text/event-stream"}
        async with (
            httpx.AsyncClient(timeout=BOUND, headers=ALICE) as alice,
            httpx.AsyncClient(timeout=BOUND, headers={"x-user": "bob"}) as bob,
        ):
            async with open_sse(alice, "GET", a_base + "/sse", headers=sse) as reader:
                with trio.fail_after(BOUND):
                    await reader.wait_for(1)
                second = await initialize(alice, b)  # alice's second, on the other worker
                # A third is refused on either worker, by either transport.
                r = await alice.post(a, json=INITIALIZE_2025, headers={"accept": ACCEPT})
                assert r.status_code == 429 and "retry-after" in r.headers
                assert "at most 2 sessions" in r.json()["error"]["message"]
                r = await alice.get(b_base + "/sse", headers=sse)
                assert r.status_code == 429 and "retry-after" in r.headers
                await initialize(bob, a)  # bob has a cap of his own
            # The stream ended on A: its slot is free on B too.
            with trio.fail_after(BOUND):
                while (
                    await alice.post(b, json=INITIALIZE_2025, headers={"accept": ACCEPT})
                ).status_code != 200:
                    await trio.sleep(0.05)
            assert (
                await alice.post(a, json=INITIALIZE_2025, headers={"accept": ACCEPT})
            ).status_code == 429
            # A Streamable HTTP session deleted on B frees its slot on A.
            assert (await alice.delete(b, headers=second)).status_code == 200
            with trio.fail_after(BOUND):
                while (
                    await alice.post(a, json=INITIALIZE_2025, headers={"accept": ACCEPT})
                ).status_code != 200:
                    await trio.sleep(0.05)


async def test_sessions_come_back_when_redis_lost_its_data(durable_redis: RedisProcess) -> None:
    with workers(durable_redis.url) as (a, b):
        a_base, b_base = base_of(a), base_of(b)
        async with (
            httpx.AsyncClient(timeout=BOUND) as client,
            open_sse(client, "GET", a_base + "/sse", headers=ALICE) as reader,
        ):
            post_url, _ = await open_session(client, reader, b_base)
            async with coredis.Redis.from_url(durable_redis.url) as direct:
                await direct.flushall()
            # Within about a second, A finds Redis forgot it and records its session again.
            with trio.fail_after(BOUND):
                while (
                    await client.post(post_url, json=echo(2, "again"), headers=ALICE)
                ).status_code != 202:
                    await trio.sleep(0.1)
            assert (await answers(reader, 2))[-1]["id"] == 2


async def test_a_post_forwarded_costs_one_round_trip_on_the_worker_it_reached(
    durable_redis: RedisProcess,
) -> None:
    """The session's record is read and the POST appended to its holder's inbox in one
    script: Redis's MONITOR sees the record's ``GET`` run by the script, never sent by a
    worker before it."""
    with workers(durable_redis.url) as (a, b):
        a_base, b_base = base_of(a), base_of(b)
        async with (
            httpx.AsyncClient(timeout=BOUND) as client,
            open_sse(client, "GET", a_base + "/sse", headers=ALICE) as reader,
        ):
            post_url, _ = await open_session(client, reader, b_base)
            monitor = await trio.open_tcp_stream("127.0.0.1", durable_redis.port)
            async with monitor:
                await monitor.send_all(b"MONITOR\r\n")
                seen = b""
                with trio.fail_after(BOUND):
                    while b"+OK" not in seen:
                        seen += await monitor.receive_some(65536)
                for i in range(2, 12):
                    r = await client.post(post_url, json=echo(i, f"t{i}"), headers=ALICE)
                    assert (r.status_code, r.text) == (202, "Accepted")
                async with coredis.Redis.from_url(durable_redis.url) as control:
                    await control.echo(b"the-posts-were-sent")
                with trio.fail_after(BOUND):
                    while b"the-posts-were-sent" not in seen:
                        seen += await monitor.receive_some(65536)
            assert len(await answers(reader, 1 + 10)) == 11
    gets = [line for line in seen.decode().splitlines() if ' "GET" ' in line.upper()]
    assert len([line for line in gets if "lua]" in line]) == 10, gets
    assert [line for line in gets if "lua]" not in line] == []
