"""Initialize-era sessions across a fleet (Streamable HTTP, 2025-03-26 to 2025-11-25), with
real worker processes on a real redis-server and a client that sends each request to a
different worker: a session initialized on one worker is served by every worker (its
requests forwarded to the one that holds it), ends everywhere, is "not found" for anyone
else, and survives its worker's death."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs
import coredis
import httpx
import pytest
import trio
from http_support import ACCEPT, LEGACY, open_sse, parse_sse
from process_support import terminated_at_exit
from redis_support import RedisProcess

HERE = Path(__file__).resolve().parent

pytestmark = pytest.mark.slow


@attrs.frozen
class Worker:
    url: str
    process: subprocess.Popen[str]

    @property
    def pid(self) -> str:
        return str(self.process.pid)


@contextmanager
def workers(
    state: str, count: int = 3, idle: float = 600.0, *, graceful: bool = False
) -> Iterator[list[Worker]]:
    """``count`` fleet members sharing ``state``, ending sessions idle for ``idle`` s
    (``graceful``: shutting down gracefully on SIGTERM)."""
    mode = ["sigterm"] if graceful else []
    processes = [
        subprocess.Popen(
            [sys.executable, str(HERE / "fleet_sessions_app.py"), state, str(idle), *mode],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(count)
    ]
    with terminated_at_exit(processes):
        found = []
        for process in processes:
            assert process.stdout is not None
            port = int(process.stdout.readline())
            found.append(Worker(f"http://127.0.0.1:{port}/mcp", process))
        yield found


def request(id: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": params or {}}


def call(id: int, tool: str, **arguments: Any) -> dict[str, Any]:
    return request(id, "tools/call", {"name": tool, "arguments": arguments})


async def initialize(
    client: httpx.AsyncClient, url: str, user: str = "alice", capabilities: Any = None
) -> dict[str, str]:
    """Open a session on ``url`` as ``user``; returns the headers its requests carry."""
    params = {
        "protocolVersion": LEGACY,
        "capabilities": capabilities or {},
        "clientInfo": {"name": "test", "version": "1"},
    }
    answer = await client.post(
        url, json=request(0, "initialize", params), headers={"accept": ACCEPT, "x-user": user}
    )
    assert answer.status_code == 200, answer.text
    headers = {
        "mcp-session-id": answer.headers["mcp-session-id"],
        "mcp-protocol-version": LEGACY,
        "accept": ACCEPT,
        "x-user": user,
    }
    done = await client.post(
        url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
    )
    assert done.status_code == 202, done.text
    return headers


def answer_of(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC answer of a POST (JSON, or the last event of its SSE stream)."""
    assert response.status_code == 200, (response.status_code, response.text)
    if response.headers["content-type"].startswith("text/event-stream"):
        events = [e for e in parse_sse(response.text) if e.data]
        return httpx.Response(200, content=events[-1].data).json()  # type: ignore[no-any-return]
    return response.json()  # type: ignore[no-any-return]


def text_of(response: httpx.Response) -> str:
    answer = answer_of(response)
    assert "result" in answer, answer
    return answer["result"]["content"][0]["text"]  # type: ignore[no-any-return]


async def test_any_worker_serves_a_session_and_a_delete_anywhere_ends_it_everywhere(
    redis: RedisProcess,
) -> None:
    with workers(redis.url) as (a, b, c):
        async with httpx.AsyncClient(timeout=10) as client:
            headers = await initialize(client, a.url)
            # Every worker serves it; the tools run on A, which holds it.
            for n, worker in enumerate((b, c, a, b), start=1):
                answer = await client.post(worker.url, json=call(n, "where"), headers=headers)
                assert text_of(answer) == a.pid
            # Another principal, or an id never issued: "not found", the same on every worker.
            unknown = {**headers, "mcp-session-id": "never-issued"}
            for worker in (a, b, c):
                for wrong in ({**headers, "x-user": "bob"}, unknown):
                    refused = await client.post(worker.url, json=call(9, "where"), headers=wrong)
                    assert refused.status_code == 404, refused.text
                    assert refused.json()["error"]["message"] == "Session not found"
            # A DELETE on C ends it on A (which held it), and B says it ended.
            assert (await client.delete(c.url, headers=headers)).status_code == 200
            for worker in (b, a):
                gone = await client.post(worker.url, json=call(10, "where"), headers=headers)
                assert gone.status_code == 404, gone.text
                assert gone.json()["error"]["message"] == "Session not found (it ended)"


async def test_a_standalone_stream_on_one_worker_hears_what_the_owner_sends(
    redis: RedisProcess,
) -> None:
    """GET on B attaches to the standalone stream of the session held by A: a list change
    raised by a tool (called through C) reaches it."""
    with workers(redis.url) as (a, b, c):
        async with httpx.AsyncClient(timeout=10) as client:
            headers = await initialize(client, a.url)
            async with open_sse(client, "GET", b.url, headers=headers) as stream:
                with trio.fail_after(10):
                    await stream.wait_for(1)  # the priming event: attached
                assert text_of(await client.post(c.url, json=call(1, "grow"), headers=headers))
                with trio.fail_after(10):
                    while not any("list_changed" in e.data for e in stream.events):
                        await stream.wait_for(len(stream.events) + 1)


async def test_a_sampling_round_trip_across_three_workers(redis: RedisProcess) -> None:
    """The handler on A asks the client's model; the question reaches the client on the
    stream of its POST to B; the client answers with a POST to C; the handler hears it
    and its answer ends the stream on B."""
    with workers(redis.url) as (a, b, c):
        async with httpx.AsyncClient(timeout=10) as client:
            headers = await initialize(client, a.url, capabilities={"sampling": {}})
            asked = call(1, "ask", question="colour?")
            async with open_sse(client, "POST", b.url, json=asked, headers=headers) as stream:
                with trio.fail_after(10):
                    while not any("sampling/createMessage" in e.data for e in stream.events):
                        await stream.wait_for(len(stream.events) + 1)
                question = next(
                    httpx.Response(200, content=e.data).json()
                    for e in stream.events
                    if "sampling/createMessage" in e.data
                )
                reply = {
                    "jsonrpc": "2.0",
                    "id": question["id"],
                    "result": {
                        "role": "assistant",
                        "content": {"type": "text", "text": "blue"},
                        "model": "test",
                    },
                }
                taken = await client.post(c.url, json=reply, headers=headers)
                assert taken.status_code == 202, taken.text
                with trio.fail_after(10):
                    events = await stream.rest()
            last = httpx.Response(200, content=events[-1].data).json()
            assert last["result"]["content"][0]["text"] == f"{a.pid} heard: blue"


async def test_a_cancellation_sent_to_another_worker_cancels_the_handler(
    redis: RedisProcess,
) -> None:
    with workers(redis.url) as (a, b, c):
        async with httpx.AsyncClient(timeout=10) as client:
            headers = await initialize(client, a.url)
            hang = call(7, "hang", name="first")
            hang["params"]["_meta"] = {"progressToken": "p"}
            async with open_sse(client, "POST", b.url, json=hang, headers=headers) as stream:
                with trio.fail_after(10):
                    await stream.wait_for(2)  # priming, progress: the handler runs on A
                cancel = {
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": 7, "reason": "changed my mind"},
                }
                taken = await client.post(c.url, json=cancel, headers=headers)
                assert taken.status_code == 202, taken.text
                with trio.fail_after(10):
                    await stream.rest()  # the stream ends, with no answer
            assert not any('"result"' in e.data for e in stream.events)
            with trio.fail_after(10):
                while True:
                    seen = await client.post(c.url, json=call(8, "was_cancelled"), headers=headers)
                    if text_of(seen) == "first":
                        break


async def test_the_owner_killed_mid_stream_the_stream_resumes_on_another_worker(
    redis: RedisProcess,
) -> None:
    """A is SIGKILLed while its handler streams progress to the client through B. B ends
    the stream once A is gone; a GET with Last-Event-ID on C takes the session over and
    replays from the shared store exactly what followed that event (nothing lost, nothing
    twice); the session goes on, served by C."""
    with workers(redis.url) as (a, b, c):
        async with httpx.AsyncClient(timeout=30) as client:
            headers = await initialize(client, a.url)
            counting = call(1, "count", upto=1000, pause=0.05)
            counting["params"]["_meta"] = {"progressToken": "p"}
            async with open_sse(client, "POST", b.url, json=counting, headers=headers) as stream:
                with trio.fail_after(10):
                    await stream.wait_for(4)  # priming, progress 1, 2, 3
                os.kill(a.process.pid, signal.SIGKILL)
                a.process.wait()
                with trio.fail_after(20):
                    seen = await stream.rest()  # B ends it once A's liveness key expired
            assert all(e.id for e in seen)
            assert not any('"result"' in e.data for e in seen)  # its answer is lost
            # The client resumes from the 3rd event it saw, on C.
            resumed_from = seen[2]
            resume = {**headers, "last-event-id": resumed_from.id}
            async with open_sse(client, "GET", c.url, headers=resume) as again:
                with trio.fail_after(20):
                    replayed = await again.rest()
            assert again.response.status_code == 200
            assert [(e.id, e.data) for e in replayed] == [(e.id, e.data) for e in seen[3:]]
            # The session goes on: C holds it now, and B forwards to C.
            for worker in (b, c):
                answer = await client.post(worker.url, json=call(2, "where"), headers=headers)
                assert text_of(answer) == c.pid


async def test_redis_stopped_mid_session(durable_redis: RedisProcess) -> None:
    """While Redis is away, a request for the session on a worker that does not hold it
    gets 503 with Retry-After and a JSON-RPC error; the worker that holds it still serves
    it; when Redis is back, every worker serves it again, with no worker restarted."""
    with workers(durable_redis.url) as (a, b, _):
        async with httpx.AsyncClient(timeout=30) as client:
            headers = await initialize(client, a.url)
            assert text_of(await client.post(b.url, json=call(1, "where"), headers=headers))
            durable_redis.stop()
            refused = await client.post(b.url, json=call(2, "where"), headers=headers)
            assert refused.status_code == 503, refused.text
            assert int(refused.headers["retry-after"]) > 0
            assert refused.json()["error"]["code"] == -32603
            assert "Redis" in refused.json()["error"]["message"]
            assert text_of(await client.post(a.url, json=call(3, "where"), headers=headers))
            # A streamed answer too: its events carry no ids (no store kept them).
            counting = call(5, "count", upto=3)
            counting["params"]["_meta"] = {"progressToken": "p"}
            streamed = await client.post(a.url, json=counting, headers=headers)
            assert text_of(streamed) == "counted to 3"
            assert not any(e.id for e in parse_sse(streamed.text))
            durable_redis.start()
            with trio.fail_after(20):
                while True:
                    again = await client.post(b.url, json=call(4, "where"), headers=headers)
                    if again.status_code == 200:
                        break
                    assert again.status_code == 503, again.text
                    await trio.sleep(0.2)  # real workers reconnecting: bounded above
            assert text_of(again) == a.pid


async def test_a_stream_left_on_one_worker_resumes_on_another_while_its_owner_lives(
    redis: RedisProcess,
) -> None:
    """The client leaves its POST stream on B mid-way; the owner A lets it go and goes on
    writing to the shared store; Last-Event-ID on C replays what was missed and carries
    the rest, to the answer."""
    with workers(redis.url) as (a, b, c):
        async with httpx.AsyncClient(timeout=30) as client:
            headers = await initialize(client, a.url)
            counting = call(1, "count", upto=20, pause=0.05)
            counting["params"]["_meta"] = {"progressToken": "p"}
            async with open_sse(client, "POST", b.url, json=counting, headers=headers) as stream:
                with trio.fail_after(10):
                    seen = list(await stream.wait_for(3))  # priming, progress 1, 2
            resume = {**headers, "last-event-id": seen[-1].id}
            async with open_sse(client, "GET", c.url, headers=resume) as again:
                with trio.fail_after(20):
                    rest = await again.rest()
            progress = [
                httpx.Response(200, content=e.data).json()["params"]["progress"]
                for e in seen[1:] + rest[:-1]
            ]
            assert progress == list(range(1, 21))  # nothing lost, nothing twice
            answer = httpx.Response(200, content=rest[-1].data).json()
            assert answer["result"]["content"][0]["text"] == "counted to 20"


async def test_idle_expiry_on_the_owner_ends_the_session_everywhere(
    redis: RedisProcess,
) -> None:
    with workers(redis.url, count=2, idle=0.5) as (a, b):
        async with httpx.AsyncClient(timeout=10) as client:
            headers = await initialize(client, a.url)
            with trio.fail_after(10):
                while True:
                    # Real workers: each request is activity, so the next comes after more
                    # than the idle timeout (the owner's reaper looks every 0.125 s).
                    await trio.sleep(1.0)
                    gone = await client.post(b.url, json=call(1, "where"), headers=headers)
                    if gone.status_code == 404:
                        break
            assert gone.json()["error"]["message"] == "Session not found (it ended)"


async def test_a_worker_carrying_a_standalone_stream_dies_and_the_stream_opens_elsewhere(
    redis: RedisProcess,
) -> None:
    """B carries the standalone stream of A's session and is SIGKILLed: A lets the stream
    go once B's liveness key expired, so a GET on C opens it (409 until then), and hears
    what A sends."""
    with workers(redis.url) as (a, b, c):
        async with httpx.AsyncClient(timeout=30) as client:
            headers = await initialize(client, a.url)
            async with open_sse(client, "GET", b.url, headers=headers) as stream:
                with trio.fail_after(10):
                    await stream.wait_for(1)
                os.kill(b.process.pid, signal.SIGKILL)
                b.process.wait()
            # Within worker_ttl (5 s) and two liveness checks (2 s each), well before A's
            # next keep-alive (15 s) would find B gone.
            with trio.fail_after(13):
                while True:
                    async with open_sse(client, "GET", c.url, headers=headers) as again:
                        if again.response.status_code == 200:
                            await again.wait_for(1)
                            assert text_of(
                                await client.post(a.url, json=call(1, "grow"), headers=headers)
                            )
                            while not any("list_changed" in e.data for e in again.events):
                                await again.wait_for(len(again.events) + 1)
                            break
                        assert again.response.status_code == 409
                    await trio.sleep(0.5)  # real workers: bounded by the fail_after


async def slots(redis: RedisProcess) -> set[bytes]:
    """Every ``<worker> <session>`` slot of the fleet's per-caller session caps."""
    async with coredis.Redis.from_url(redis.url) as client:
        keys = [key async for key in client.scan_iter(match="*caps:sessions:*")]
        return {member for key in keys for member in await client.smembers(key)}


async def test_a_session_left_at_a_graceful_shutdown_keeps_its_slot_until_taken_over(
    redis: RedisProcess,
) -> None:
    """A worker shutting down gracefully leaves its sessions in Redis for takeover, and
    their slots in the fleet's caps with them (as a worker that dies would): the worker
    that takes one over moves its slot to itself, so the session counts once, always."""
    with workers(redis.url, count=2, graceful=True) as (a, b):
        async with httpx.AsyncClient(timeout=30) as client:
            headers = await initialize(client, a.url)
            session_id = headers["mcp-session-id"].encode()
            held = await slots(redis)
            assert len(held) == 1 and next(iter(held)).endswith(b" " + session_id)
            a.process.send_signal(signal.SIGTERM)
            with trio.fail_after(20):
                while a.process.poll() is None:
                    await trio.sleep(0.05)
            assert a.process.returncode == 0
            assert await slots(redis) == held  # kept with the session
            with trio.fail_after(30):  # until a's liveness key lapses: 503, then B takes it
                while True:
                    answer = await client.post(b.url, json=call(1, "where"), headers=headers)
                    if answer.status_code != 503:
                        break
                    await trio.sleep(0.2)
            assert text_of(answer) == b.pid
            moved = await slots(redis)
            assert len(moved) == 1 and moved != held
            assert next(iter(moved)).endswith(b" " + session_id)
