"""The HTTP+SSE transport of 2024-11-05 across a fleet, with real worker processes on a real
redis-server: the SSE stream on worker A, its POSTs on worker B, the answers on A's stream;
another principal's POST is refused as for an unknown session; once the stream closed, B
answers 404; while Redis is away, B answers 503 with ``Retry-After`` and a JSON-RPC error,
A (which holds the session) goes on, and B forwards again once Redis is back."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
import trio.testing
from http_support import SseReader, open_sse
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


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[RedisProcess]:
    # Durable: what Redis held survives it being stopped, as with a production Redis.
    process = RedisProcess(tmp_path, durable=True)
    process.start()
    try:
        yield process
    finally:
        process.stop()


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
    redis: RedisProcess,
) -> None:
    with workers(redis.url) as (a, b):
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
    redis: RedisProcess,
) -> None:
    with workers(redis.url) as (a, b):
        a_base, b_base = base_of(a), base_of(b)
        async with (
            httpx.AsyncClient(timeout=BOUND) as client,
            open_sse(client, "GET", a_base + "/sse", headers=ALICE) as reader,
        ):
            post_url, _ = await open_session(client, reader, b_base)
            redis.stop()
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
            # The worker holding the session needs no Redis for it.
            a_url = a_base + post_url.removeprefix(b_base)
            r = await client.post(a_url, json=echo(3, "on a"), headers=ALICE)
            assert r.status_code == 202
            on_a = (await answers(reader, 2))[-1]
            assert on_a["id"] == 3
            redis.start()
            # B forwards again, by itself, once Redis answers.
            with trio.fail_after(BOUND):
                while (
                    await client.post(post_url, json=echo(4, "back"), headers=ALICE)
                ).status_code != 202:
                    await trio.sleep(0.1)
            back = (await answers(reader, 3))[-1]
            assert back["id"] == 4


async def test_a_forwarded_message_its_session_does_not_take_in_time_is_answered_busy(
    autojump_clock: trio.testing.MockClock,
) -> None:
    transport = SseTransport(Server("owner"), message_path="/messages")
    written: list[bytes] = []

    async def asgi_send(message: dict[str, Any]) -> None:
        written.append(message.get("body", b""))

    writer = ResponseWriter(asgi_send, json_ok=False)
    await writer.open_sse()
    # A session that takes nothing (its client floods it).
    inbound, receive = trio.open_memory_channel[Received](0)
    transport.sessions["s"] = _Held(inbound, "alice", _SseStream(writer, receive))
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    await transport._deliver_forwarded("s", "alice", rpc.parse(json.dumps(note).encode()))
    assert transport.forwards_dropped == 1 and b"".join(written) == b""
    await transport._deliver_forwarded("s", "alice", rpc.parse(json.dumps(echo(7, "x")).encode()))
    assert transport.forwards_dropped == 2
    (data,) = [line for line in b"".join(written).split(b"\n") if line.startswith(b"data:")]
    error = json.loads(data.removeprefix(b"data:"))
    assert error["id"] == 7
    assert error["error"]["data"] == {"retryAfter": 1, "reason": "busy"}
    # Another principal's message for it is not delivered (and not answered).
    await transport._deliver_forwarded("s", "mallory", rpc.parse(json.dumps(echo(8, "x")).encode()))
    assert transport.forwards_dropped == 2
