"""The session registry: live / ended / unknown as one principal sees it, the same for the
in-memory and the Redis registry; a session ended through one worker's registry reads as
ended through another's."""

from __future__ import annotations

import math
import uuid
from collections.abc import AsyncIterator, Callable

import attrs
import coredis
import pytest

from trio_mcp._http.server._session_registry import (
    MemorySessionRegistry,
    RedisSessionRegistry,
    SessionRecord,
    SessionRegistry,
    SessionState,
)


@pytest.fixture(params=["memory", "redis"])
async def registries(
    request: pytest.FixtureRequest,
) -> AsyncIterator[Callable[[], SessionRegistry]]:
    """Makes registry views that share one store (two workers' views, for Redis)."""
    if request.param == "memory":
        shared = MemorySessionRegistry()
        yield lambda: shared
        return
    url = request.getfixturevalue("redis_url")
    prefix = f"test-{uuid.uuid4().hex}:"
    async with coredis.Redis.from_url(url) as one, coredis.Redis.from_url(url) as two:
        clients = [one, two]

        def make() -> SessionRegistry:
            clients.reverse()
            return RedisSessionRegistry(clients[0], prefix=prefix)

        yield make


def record(session_id: str = "s1", principal: str = "alice") -> SessionRecord:
    return SessionRecord(
        session_id=session_id,
        protocol_version="2025-06-18",
        principal=principal,
        owner="worker-a",
        capabilities={"sampling": {}},
    )


async def test_live_ended_and_unknown(registries: Callable[[], SessionRegistry]) -> None:
    a, b = registries(), registries()
    await a.register(record())
    state, found = await b.lookup("s1", "alice")
    assert state is SessionState.LIVE and found is not None
    assert found.owner == "worker-a" and found.capabilities == {"sampling": {}}
    assert await b.lookup("never", "alice") == (SessionState.UNKNOWN, None)
    assert await b.end("s1") is True
    assert await a.lookup("s1", "alice") == (SessionState.ENDED, None)
    assert await a.end("s1") is False


async def test_another_principal_sees_not_found(registries: Callable[[], SessionRegistry]) -> None:
    a, b = registries(), registries()
    await a.register(record())
    assert await b.lookup("s1", "mallory") == (SessionState.UNKNOWN, None)
    await a.end("s1")
    assert await b.lookup("s1", "mallory") == (SessionState.UNKNOWN, None)


async def test_memory_sessions_expire_and_are_bounded() -> None:
    now = [1000.0]
    registry = MemorySessionRegistry(idle_timeout=10, max_sessions=2, clock=lambda: now[0])
    await registry.register(record("s1"))
    now[0] += 8
    await registry.touch("s1")
    now[0] += 8
    assert (await registry.lookup("s1", "alice"))[0] is SessionState.LIVE
    now[0] += 11
    assert await registry.lookup("s1", "alice") == (SessionState.ENDED, None)
    await registry.register(record("s2"))
    await registry.register(record("s3"))
    with pytest.raises(ValueError, match="at most 2 sessions"):
        await registry.register(record("s4"))


async def test_a_redis_session_expires_with_its_idle_timeout(redis_url: str) -> None:
    async with coredis.Redis.from_url(redis_url) as client:
        prefix = f"test-{uuid.uuid4().hex}:"
        registry = RedisSessionRegistry(client, prefix=prefix, idle_timeout=60)
        await registry.register(record())
        key = f"{prefix}live:s1"
        assert 59_000 < await client.pttl(key) <= 60_000  # Redis expires it, for every worker
        await client.pexpire(key, 10_000)
        await registry.touch("s1")  # activity moves the expiry on
        assert await client.pttl(key) > 59_000


async def test_one_worker_takes_a_session_over(registries: Callable[[], SessionRegistry]) -> None:
    """Two workers taking over one session (its owner died): a compare-and-set, one wins,
    and the record keeps what the owner wrote (initialize params included)."""
    a, b = registries(), registries()
    await a.register(attrs.evolve(record(), initialize={"protocolVersion": "2025-06-18"}))
    _, seen_by_a = await a.lookup("s1", "alice")
    _, seen_by_b = await b.lookup("s1", "alice")
    assert seen_by_a is not None and seen_by_b is not None
    taken = await b.take_over(seen_by_b, "worker-b")
    assert taken is not None and taken.owner == "worker-b"
    assert await a.take_over(seen_by_a, "worker-c") is None
    state, found = await a.lookup("s1", "alice")
    assert state is SessionState.LIVE and found is not None
    assert found.owner == "worker-b" and found.initialize == {"protocolVersion": "2025-06-18"}
    await a.end("s1")
    assert await b.take_over(found, "worker-c") is None


async def test_a_redis_registry_without_idle_expiry(redis_url: str) -> None:
    async with coredis.Redis.from_url(redis_url) as client:
        registry = RedisSessionRegistry(
            client, prefix=f"test-{uuid.uuid4().hex}:", idle_timeout=math.inf
        )
        await registry.register(record())
        await registry.touch("s1")
        assert await client.pttl(f"{registry.prefix}live:s1") == -1  # no expiry
        assert (await registry.lookup("s1", "alice"))[0] is SessionState.LIVE
