"""The sessions each caller holds across a fleet, on a real redis-server: the cap holds
over slots taken by different workers; a slot given back frees it for every worker; the
slots of a worker whose liveness key is gone stop counting; Redis away: ``take`` raises
``CapsUnavailable``, and a give-back that failed is made at the next take."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import coredis
import pytest
import trio
from redis_support import RedisProcess

from trio_mcp._fleet._caps import CapsUnavailable, FleetCaps

pytestmark = pytest.mark.slow


@pytest.fixture
async def client(redis_url: str) -> AsyncIterator[coredis.Redis[bytes]]:
    async with coredis.Redis.from_url(redis_url) as client:
        yield client


async def worker(
    client: coredis.Redis[bytes], prefix: str, name: str, *, alive: bool = True
) -> FleetCaps:
    if alive:
        await client.set(f"{prefix}w:{name}", b"1", px=60_000)
    return FleetCaps(client, prefix=prefix, worker_id=name, what="sessions", cap=2, timeout=2)


async def test_the_cap_holds_across_workers_and_a_slot_given_back_frees_it_everywhere(
    client: coredis.Redis[bytes],
) -> None:
    prefix = f"test-{uuid.uuid4().hex}:"
    a, b = await worker(client, prefix, "a"), await worker(client, prefix, "b")
    assert await a.take("principal:alice", "s1")
    assert await b.take("principal:alice", "s2")
    assert not await a.take("principal:alice", "s3")
    assert not await b.take("principal:alice", "s3")
    assert await a.take("principal:bob", "s4")  # another caller has its own cap
    await b.give_back("principal:alice", "s2")
    assert await a.take("principal:alice", "s3")
    assert "2 sessions per client" in a.refusal()


async def test_the_slots_of_a_worker_that_is_gone_stop_counting(
    client: coredis.Redis[bytes],
) -> None:
    prefix = f"test-{uuid.uuid4().hex}:"
    gone = await worker(client, prefix, "gone")
    a = await worker(client, prefix, "a")
    assert await gone.take("principal:alice", "s1")
    assert await gone.take("principal:alice", "s2")
    assert not await a.take("principal:alice", "s3")
    await client.delete([f"{prefix}w:gone"])  # its liveness key expired
    assert await a.take("principal:alice", "s3")
    assert await a.take("principal:alice", "s4")
    assert not await a.take("principal:alice", "s5")


async def test_redis_away_take_raises_and_a_failed_give_back_is_made_later(
    durable_redis: RedisProcess,
) -> None:
    prefix = f"test-{uuid.uuid4().hex}:"
    async with coredis.Redis.from_url(durable_redis.url) as client:
        a = await worker(client, prefix, "a")
        assert await a.take("principal:alice", "s1")
        assert await a.take("principal:alice", "s2")
        durable_redis.stop()
        with pytest.raises(CapsUnavailable, match="Redis"):
            await a.take("principal:alice", "s3")
        with trio.fail_after(10):
            await a.give_back("principal:alice", "s2")  # cannot: owed
        durable_redis.start()
        await client.set(f"{prefix}w:a", b"1", px=60_000)
        assert await a.take("principal:alice", "s3")  # s2 given back first
        assert not await a.take("principal:alice", "s4")


async def test_a_slot_moves_with_the_session_taken_over_and_is_taken_again_if_it_lapsed(
    client: coredis.Redis[bytes],
) -> None:
    prefix = f"test-{uuid.uuid4().hex}:"
    gone = await worker(client, prefix, "gone")
    a = await worker(client, prefix, "a")
    assert await gone.take("principal:alice", "s1")
    assert await a.take("principal:alice", "s2")
    # At the cap, the session taken over still counts (once), now as a's.
    assert await a.move("principal:alice", "s1", "gone")
    key = f"{prefix}caps:sessions:principal:alice"
    assert await client.smembers(key) == {b"a s1", b"a s2"}
    assert not await a.take("principal:alice", "s3")
    # Its slot lapsed (given back) and the caller is at the cap: nothing counted.
    await a.give_back("principal:alice", "s1")
    assert await a.take("principal:alice", "s3")
    assert not await a.move("principal:alice", "s1", "gone")
    assert await client.smembers(key) == {b"a s2", b"a s3"}
    # Below the cap, a lapsed slot is taken again.
    await a.give_back("principal:alice", "s3")
    assert await a.move("principal:alice", "s1", "gone")
    assert await client.smembers(key) == {b"a s1", b"a s2"}
