"""The Redis event store: the semantics of :class:`MemoryEventStore` (both stores run the
same tests), shared by every worker, so that ``Last-Event-ID`` resumes on another worker
than the one that wrote the events, also after that worker's client is gone."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Callable

import coredis
import pytest
import trio

from trio_mcp._http.server._event_store import (
    EVENT_OVERHEAD,
    STREAM_OVERHEAD,
    EventStore,
    MemoryEventStore,
)
from trio_mcp._http.server._redis_event_store import RedisEventStore

KB = 1000


def charge(*events: int) -> int:
    """What one stream holding ``events`` events of KB bytes is charged."""
    return sum(STREAM_OVERHEAD + n * (KB + EVENT_OVERHEAD) for n in events)


StoreMaker = Callable[..., EventStore]


@pytest.fixture(params=["memory", "redis"])
async def make_store(request: pytest.FixtureRequest) -> AsyncIterator[StoreMaker]:
    """Makes stores of one kind; Redis stores made by one test share a fresh prefix, each
    over its own client (as two workers would)."""
    if request.param == "memory":
        yield lambda **bounds: MemoryEventStore(**bounds)
        return
    url = request.getfixturevalue("redis_url")
    prefix = f"test-{uuid.uuid4().hex}:"
    async with (
        coredis.Redis.from_url(url) as one,
        coredis.Redis.from_url(url) as two,
    ):
        clients = [one, two]

        def make(**bounds: int) -> EventStore:
            clients.reverse()  # each store made gets the other client, as a worker would
            return RedisEventStore(clients[0], prefix=prefix, **bounds)

        yield make


async def fill(store: EventStore, stream: str, count: int, *, session: str = "A") -> str:
    event_id = ""
    for _ in range(count):
        event_id = await store.append(stream, b"x" * KB, session=session)
    return event_id


async def test_events_replay_after_an_id_in_order(make_store: StoreMaker) -> None:
    store = make_store()
    ids = [await store.append("s", f"m{n}".encode(), session="A") for n in range(4)]
    assert ids == ["s/1", "s/2", "s/3", "s/4"]
    replay = await store.replay_after("s/2")
    assert replay is not None
    assert replay.events == [("s/3", b"m2"), ("s/4", b"m3")]
    assert replay.session == "A" and replay.stream_id == "s"
    last = await store.replay_after("s/4")
    assert last is not None and last.events == []


@pytest.mark.parametrize("event_id", ["s/9", "nope", "s/0", "x/1", "s/1\n", "s/abc"])
async def test_unknown_or_malformed_ids_cannot_resume(
    make_store: StoreMaker, event_id: str
) -> None:
    store = make_store()
    await store.append("s", b"m", session="A")
    assert await store.replay_after(event_id) is None


async def test_a_stream_over_its_count_drops_its_oldest_events(make_store: StoreMaker) -> None:
    store = make_store(max_events_per_stream=2)
    await fill(store, "s", 3)
    replay = await store.replay_after("s/1")  # event 1 went: resuming from it still works
    assert replay is not None and [e for e, _ in replay.events] == ["s/2", "s/3"]
    await fill(store, "s", 1)  # event 2 goes: resuming from 1 would skip it
    assert await store.replay_after("s/1") is None


async def test_a_stream_over_its_bytes_drops_its_oldest_events(make_store: StoreMaker) -> None:
    store = make_store(max_stream_bytes=charge(3), max_session_bytes=charge(3) * 4)
    await fill(store, "s", 5)
    assert await store.replay_after("s/1") is None
    replay = await store.replay_after("s/2")
    assert replay is not None and [e for e, _ in replay.events] == ["s/3", "s/4", "s/5"]


async def test_an_event_larger_than_the_stream_budget_is_not_kept(
    make_store: StoreMaker,
) -> None:
    store = make_store(max_stream_bytes=charge(2))
    first = await store.append("s", b"", session="A")
    big = await store.append("s", b"x" * charge(2), session="A")
    assert await store.replay_after(first) is None  # it would skip the big one
    replay = await store.replay_after(big)
    assert replay is not None and replay.events == []


async def test_the_session_budget_evicts_its_least_recent_stream(make_store: StoreMaker) -> None:
    store = make_store(max_stream_bytes=charge(2), max_session_bytes=charge(2, 2, 1))
    a = await fill(store, "a", 2)
    await fill(store, "b", 2)
    other = await fill(store, "c", 2, session="B")  # another session's: untouched
    await fill(store, "d", 2)  # session A is over budget: stream a goes
    assert await store.replay_after(a) is None
    assert await store.replay_after("b/3") is not None
    assert await store.replay_after(other) is not None


async def test_the_stream_count_evicts_the_least_recently_written(
    make_store: StoreMaker,
) -> None:
    store = make_store(max_streams=2)
    a = await store.append("a", b"1", session="A")
    b = await store.append("b", b"2", session="A")
    await store.append("a", b"3", session="A")  # a is written again: b is older now
    await store.append("c", b"4", session="B")
    assert await store.replay_after(b) is None
    assert await store.replay_after(a) is not None


async def test_the_total_budget_evicts_across_sessions(make_store: StoreMaker) -> None:
    store = make_store(
        max_stream_bytes=charge(2), max_session_bytes=charge(2), max_bytes=charge(2, 2)
    )
    a = await fill(store, "a", 2, session="A")
    b = await fill(store, "b", 2, session="B")
    c = await fill(store, "c", 1, session="C")
    assert await store.replay_after(a) is None
    assert await store.replay_after(b) is not None
    assert await store.replay_after(c) is not None


async def test_discard_and_discard_session_forget_streams(make_store: StoreMaker) -> None:
    store = make_store()
    a = await store.append("a", b"1", session="A")
    b = await store.append("b", b"2", session="A")
    c = await store.append("c", b"3", session="B")
    await store.discard("a")
    await store.discard("never")
    assert await store.replay_after(a) is None
    await store.discard_session("A")
    assert await store.replay_after(b) is None
    assert await store.replay_after(c) is not None
    # An id is never issued twice, not even for a stream written again after it went.
    assert await store.append("a", b"4", session="A") == "a/4"
    assert await store.replay_after(a) is None


async def test_another_worker_resumes_after_the_writer_is_gone(redis_url: str) -> None:
    prefix = f"test-{uuid.uuid4().hex}:"
    async with coredis.Redis.from_url(redis_url) as writer_client:
        writer = RedisEventStore(writer_client, prefix=prefix)
        first = await writer.append("s", b"", session="A")
        for n in range(3):
            await writer.append("s", f"m{n}".encode(), session="A")
    # The writer's connection is closed; a new worker (its own client) takes over.
    async with coredis.Redis.from_url(redis_url) as reader_client:
        reader = RedisEventStore(reader_client, prefix=prefix)
        replay = await reader.replay_after(first)
        assert replay is not None and replay.session == "A"
        assert replay.events == [("s/2", b"m0"), ("s/3", b"m1"), ("s/4", b"m2")]
        # Writes from both workers interleave in one order, nothing lost or repeated.
        assert await reader.append("s", b"r", session="A") == "s/5"
        again = await reader.replay_after("s/3")
        assert again is not None and again.events == [("s/4", b"m2"), ("s/5", b"r")]


async def test_concurrent_appends_from_two_workers_lose_nothing(redis_url: str) -> None:
    prefix = f"test-{uuid.uuid4().hex}:"
    async with (
        coredis.Redis.from_url(redis_url) as one,
        coredis.Redis.from_url(redis_url) as two,
    ):
        stores = [RedisEventStore(one, prefix=prefix), RedisEventStore(two, prefix=prefix)]
        first = await stores[0].append("s", b"", session="A")
        with trio.fail_after(10):
            async with trio.open_nursery() as nursery:
                for i, store in enumerate(stores):
                    for n in range(20):
                        nursery.start_soon(store.append, "s", f"{i}:{n}".encode())
        replay = await stores[1].replay_after(first)
        assert replay is not None
        assert sorted(d for _, d in replay.events) == sorted(
            f"{i}:{n}".encode() for i in range(2) for n in range(20)
        )
        assert len({e for e, _ in replay.events}) == 40


def test_bounds_are_checked() -> None:
    client: coredis.Redis[bytes] = coredis.Redis()
    with pytest.raises(ValueError, match="byte budgets"):
        RedisEventStore(client, max_stream_bytes=10)
    with pytest.raises(ValueError, match="timeout"):
        RedisEventStore(client, timeout=0)


_WRITER = """
import sys, trio, coredis
from trio_mcp._http.server._redis_event_store import RedisEventStore

async def main(url, prefix):
    async with coredis.Redis.from_url(url) as client:
        store = RedisEventStore(client, prefix=prefix)
        for n in range(5):
            print(await store.append("s", f"m{n}".encode(), session="A"), flush=True)
        await trio.sleep_forever()  # killed here, its connection still open

trio.run(main, sys.argv[1], sys.argv[2])
"""


async def test_a_killed_writer_process_is_resumed_by_another(redis_url: str) -> None:
    prefix = f"test-{uuid.uuid4().hex}:"
    with trio.fail_after(30):
        writer = await trio.lowlevel.open_process(
            [sys.executable, "-c", _WRITER, redis_url, prefix], stdout=subprocess.PIPE
        )
        try:
            assert writer.stdout is not None
            printed = b""
            while printed.count(b"\n") < 5:
                chunk = await writer.stdout.receive_some()
                assert chunk, "the writer ended before writing its events"
                printed += chunk
        finally:
            writer.kill()  # SIGKILL: no cleanup in the writer
            await writer.wait()
        assert printed.split() == [b"s/1", b"s/2", b"s/3", b"s/4", b"s/5"]
    async with coredis.Redis.from_url(redis_url) as client:
        replay = await RedisEventStore(client, prefix=prefix).replay_after("s/2")
    assert replay is not None
    assert replay.events == [("s/3", b"m2"), ("s/4", b"m3"), ("s/5", b"m4")]
