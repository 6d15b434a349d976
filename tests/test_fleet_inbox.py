"""The inbox of a fleet's worker, on a real redis-server: messages between two workers
arrive in order; a worker whose liveness key expired is refused (``send`` is False and
nothing is left for it); what was accepted survives Redis stopped and started again, and
the reader goes on by itself; a handler that waits holds entries back in Redis up to the
inbox's size, past which ``send`` raises ``InboxFull``, and none is lost."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import coredis
import pytest
import trio
from redis_support import RedisProcess

from trio_mcp import Server
from trio_mcp._fleet._fleet import open_fleet
from trio_mcp._fleet._inbox import Inbox, InboxFull, InboxUnavailable
from trio_mcp.fleet import RedisState

pytestmark = pytest.mark.slow

#: Every wait on a real Redis or a real reader is bounded by this (it never decides a test).
BOUND = 10


@asynccontextmanager
async def running(url: str, prefix: str, **options: float) -> AsyncIterator[Inbox]:
    """An inbox on its own client, announced and read until the block ends."""
    async with coredis.Redis.from_url(url) as client, trio.open_nursery() as nursery:
        inbox = Inbox(client, prefix=prefix, timeout=2.0, **options)  # type: ignore[arg-type]
        await inbox.announce()
        nursery.start_soon(inbox.run)
        yield inbox
        nursery.cancel_scope.cancel()


def collector(
    inbox: Inbox, kind: str = "m"
) -> tuple[list[bytes], trio.MemoryReceiveChannel[bytes]]:
    """Payloads of ``kind`` arriving at ``inbox``: a list, and a channel that hears each."""
    got: list[bytes] = []
    send, receive = trio.open_memory_channel[bytes](1000)

    async def handle(payload: bytes) -> None:
        got.append(payload)
        send.send_nowait(payload)

    inbox.on(kind, handle)
    return got, receive


async def expect(receive: trio.MemoryReceiveChannel[bytes], count: int) -> list[bytes]:
    with trio.fail_after(BOUND):
        return [await receive.receive() for _ in range(count)]


@pytest.fixture
def prefix() -> str:
    return f"test-{uuid.uuid4().hex}:"


async def test_messages_between_two_workers_arrive_in_order(
    redis_url: str,
    prefix: str,
) -> None:
    async with running(redis_url, prefix) as a, running(redis_url, prefix) as b:
        assert a.worker_id != b.worker_id
        _, at_a = collector(a)
        _, at_b = collector(b)
        for i in range(50):
            assert await a.send(b.worker_id, "m", b"to b %d" % i)
            assert await b.send(a.worker_id, "m", b"to a %d" % i)
        assert await expect(at_b, 50) == [b"to b %d" % i for i in range(50)]
        assert await expect(at_a, 50) == [b"to a %d" % i for i in range(50)]
        assert await a.alive(b.worker_id) and await b.alive(a.worker_id)
        assert b.delivered == 50 and b.failed == 0


async def test_an_entry_of_unknown_kind_is_counted_and_the_reader_goes_on(
    redis_url: str,
    prefix: str,
) -> None:
    async with running(redis_url, prefix) as a, running(redis_url, prefix) as b:
        _, at_b = collector(b)

        async def raises(payload: bytes) -> None:
            raise RuntimeError(payload)

        b.on("bad", raises)
        assert await a.send(b.worker_id, "nobody-handles-this", b"x")
        assert await a.send(b.worker_id, "bad", b"y")
        assert await a.send(b.worker_id, "m", b"z")
        assert await expect(at_b, 1) == [b"z"]
        assert b.failed == 2


async def test_send_to_a_worker_whose_liveness_key_expired_is_false(
    redis_url: str,
    prefix: str,
) -> None:
    async with (
        coredis.Redis.from_url(redis_url) as client,
        running(redis_url, prefix) as a,
    ):
        # A worker that announced itself once, then stopped (it died).
        gone = Inbox(client, prefix=prefix, worker_ttl=0.3, refresh=0.1)
        await gone.announce()
        assert await a.alive(gone.worker_id)
        with trio.fail_after(BOUND):
            while await a.alive(gone.worker_id):
                await trio.sleep(0.05)
        assert await a.send(gone.worker_id, "m", b"lost?") is False
        assert not await client.exists([f"{prefix}in:{gone.worker_id}"])
        assert await a.send("never-was", "m", b"x") is False


async def test_what_was_accepted_survives_redis_restarted_and_the_reader_recovers(
    durable_redis: RedisProcess, prefix: str
) -> None:
    release = trio.Event()
    holding = trio.Event()
    async with running(durable_redis.url, prefix) as a, running(durable_redis.url, prefix) as b:
        got, at_b = collector(b)

        async def held(payload: bytes) -> None:
            holding.set()
            await release.wait()
            got.append(payload)
            at_b_send.send_nowait(payload)

        at_b_send, at_b = trio.open_memory_channel[bytes](100)
        b.on("held", held)
        assert await a.send(b.worker_id, "held", b"0")
        with trio.fail_after(BOUND):
            await holding.wait()
        # Accepted while b's reader is busy: they wait in Redis.
        for i in range(1, 6):
            assert await a.send(b.worker_id, "held", b"%d" % i)

        durable_redis.stop()
        with pytest.raises(InboxUnavailable):
            await a.send(b.worker_id, "held", b"refused")
        durable_redis.start()

        release.set()
        assert await expect(at_b, 6) == [b"%d" % i for i in range(6)]
        # The reader reads again by itself: a message sent now arrives too.
        with trio.fail_after(BOUND):
            while not await a.alive(b.worker_id):
                await trio.sleep(0.05)
        assert await a.send(b.worker_id, "held", b"after")
        assert await expect(at_b, 1) == [b"after"]
        assert got == [*(b"%d" % i for i in range(6)), b"after"]


async def test_a_waiting_handler_holds_entries_in_redis_up_to_the_size_then_send_refuses(
    redis_url: str,
    prefix: str,
) -> None:
    release = trio.Event()
    holding = trio.Event()
    send, receive = trio.open_memory_channel[bytes](100)
    async with running(redis_url, prefix, size=5) as a, running(redis_url, prefix, size=5) as b:

        async def slow(payload: bytes) -> None:
            holding.set()
            await release.wait()
            send.send_nowait(payload)

        b.on("m", slow)
        accepted: list[bytes] = []
        assert await a.send(b.worker_id, "m", b"first")
        accepted.append(b"first")
        with trio.fail_after(BOUND):
            await holding.wait()

        async def fill() -> None:
            for i in range(100):
                payload = b"%d" % i
                assert await a.send(b.worker_id, "m", payload)
                accepted.append(payload)

        with pytest.raises(InboxFull, match="5 unread entries"):
            await fill()
        assert 4 <= len(accepted) <= 5  # the first may still count until trimmed
        release.set()
        assert await expect(receive, len(accepted)) == accepted
        # Read entries are trimmed: the inbox takes new ones again.
        assert await a.send(b.worker_id, "m", b"again")
        assert await expect(receive, 1) == [b"again"]


async def test_open_fleet_runs_each_workers_inbox(
    redis_url: str,
    prefix: str,
) -> None:
    state = RedisState(url=redis_url, prefix=prefix, worker_ttl=2.0)
    async with (
        open_fleet(Server("one"), state) as one,
        open_fleet(Server("two"), state) as two,
    ):
        assert one.inbox.worker_ttl == 2.0 and one.inbox.refresh < 2.0
        _, at_two = collector(two.inbox)
        assert await one.inbox.alive(two.inbox.worker_id)
        assert await one.inbox.send(two.inbox.worker_id, "m", b"hello")
        assert await expect(at_two, 1) == [b"hello"]


@pytest.mark.parametrize(
    ("option", "value", "error"),
    [("inbox_size", 0, ValueError), ("inbox_size", 1.5, TypeError), ("worker_ttl", -1, ValueError)],
)
def test_the_inbox_options_are_checked_naming_the_option(
    option: str, value: object, error: type[Exception]
) -> None:
    with pytest.raises(error, match=option):
        RedisState(url="redis://127.0.0.1:1/0", **{option: value})  # type: ignore[arg-type]


async def test_a_worker_that_redis_forgot_rejoins_and_says_so(
    redis_url: str,
    prefix: str,
) -> None:
    async with (
        coredis.Redis.from_url(redis_url) as client,
        running(redis_url, prefix, worker_ttl=2.0, refresh=0.1) as a,
        running(redis_url, prefix) as b,
    ):
        assert a.rejoins == 0
        _, at_a = collector(a)
        # Redis loses what it held (a restart without persistence).
        await client.delete([f"{prefix}w:{a.worker_id}"])
        assert await b.send(a.worker_id, "m", b"lost?") is False
        with trio.fail_after(BOUND):
            await a.wait_rejoined()
        assert a.rejoins == 1
        assert await b.send(a.worker_id, "m", b"found")
        assert await expect(at_a, 1) == [b"found"]
