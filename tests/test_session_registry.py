"""The session registry: live / ended / unknown as one principal sees it, the same for the
in-memory and the Redis registry; a session ended through one worker's registry reads as
ended through another's."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable

import coredis
import pytest

from tests.redis_support import redis_url  # noqa: F401 - the fixture
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


async def test_a_redis_session_expires_with_its_idle_timeout(redis_url: str) -> None:  # noqa: F811
    async with coredis.Redis.from_url(redis_url) as client:
        prefix = f"test-{uuid.uuid4().hex}:"
        registry = RedisSessionRegistry(client, prefix=prefix, idle_timeout=60)
        await registry.register(record())
        key = f"{prefix}live:s1"
        assert 59_000 < await client.pttl(key) <= 60_000  # Redis expires it, for every worker
        await client.pexpire(key, 10_000)
        await registry.touch("s1")  # activity moves the expiry on
        assert await client.pttl(key) > 59_000
