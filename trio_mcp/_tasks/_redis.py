"""Tasks kept in Redis, through coredis (which runs on Trio): the store a fleet of
workers shares.

Each task is one key holding its record as JSON, expiring with the task's TTL. A change is
a compare-and-set (a small Lua script), retried when another worker changed the record in
between, so a terminal status is final across the fleet too.

Workers die without notice, so a worker's liveness is a lease: the key
``<prefix>runner:<runner>`` that :func:`open_redis_task_store` renews in its own nursery.
A non-terminal task whose runner's lease has lapsed is recorded ``failed`` with
:data:`~trio_mcp.tasks.RUNNER_GONE` by whichever worker next reads it.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import trio

from . import _lazy
from ._record import TaskPosition, TaskRecord, TaskUpdate
from ._store import ORPHANED, TaskStore

if TYPE_CHECKING:
    import coredis

__all__ = ["RedisTaskStore", "open_redis_task_store"]

log = logging.getLogger("trio_mcp.tasks")

_COMPARE_AND_SET = """
local current = redis.call('GET', KEYS[1])
if not current then return -1 end
if current ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
return 1
"""


class RedisTaskStore(TaskStore):
    """A :class:`~trio_mcp.tasks.TaskStore` in Redis. Made by :func:`open_redis_task_store`,
    which owns the client and the lease."""

    def __init__(
        self,
        client: coredis.Redis[bytes],
        *,
        prefix: str = "trio-mcp:",
        lease: float = 10.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(clock=clock)
        self._redis = client
        self.prefix = prefix
        self.lease = lease
        self._cas: Any = client.register_script(_COMPARE_AND_SET)

    def _key(self, task_id: str) -> str:
        return f"{self.prefix}task:{task_id}"

    def _owned_key(self, owner: str | None) -> str:
        """The sorted set of ``owner``'s task ids, by creation (for ``tasks/list``)."""
        return f"{self.prefix}owned:" + ("\0" if owner is None else f"p:{owner}")

    def _runner_key(self, runner: str) -> str:
        return f"{self.prefix}runner:{runner}"

    async def renew_lease(self) -> None:
        """Say this runner is alive for another :attr:`lease` seconds."""
        await self._redis.set(self._runner_key(self.runner), b"1", px=math.ceil(self.lease * 1000))

    async def release_lease(self) -> None:
        """Say this runner has stopped: its unfinished tasks read as failed from now on."""
        await self._redis.delete([self._runner_key(self.runner)])

    async def create(self, record: TaskRecord) -> None:
        expires = None
        if record.ttl_ms is not None:
            expires = math.ceil(record.created_at * 1000 + record.ttl_ms)
        created = await self._redis.set(
            self._key(record.task_id),
            record.dumps(),
            condition=_lazy.coredis.PureToken.NX,
            pxat=expires,
        )
        if not created:
            raise ValueError(f"a task {record.task_id!r} exists")
        owned = self._owned_key(record.owner)
        await self._redis.zadd(owned, {record.task_id: record.created_at})
        # Expired tasks leave their ids behind: each creation drops up to two of the
        # oldest that are gone, so an owner's set stays about the size of its live tasks.
        oldest = await self._redis.zrange(owned, 0, 1)
        gone = [
            member
            for member, exists in zip(
                oldest,
                [await self._redis.exists([self._key(_text(m))]) for m in oldest],
                strict=True,
            )
            if not exists
        ]
        if gone:
            await self._redis.zrem(owned, gone)

    async def _read(self, task_id: str) -> tuple[bytes, TaskRecord] | None:
        data = await self._redis.get(self._key(task_id))
        if data is None:
            return None
        record = TaskRecord.loads(data)
        if record.expired(self.clock()):
            return None
        return data, record

    async def _orphaned(self, record: TaskRecord) -> bool:
        if record.terminal or record.runner is None or record.runner == self.runner:
            return False
        return not await self._redis.exists([self._runner_key(record.runner)])

    async def get(self, task_id: str) -> TaskRecord | None:
        read = await self._read(task_id)
        if read is None:
            return None
        record = read[1]
        if await self._orphaned(record):
            return await self.update(task_id, ORPHANED)
        return record

    async def update(self, task_id: str, change: TaskUpdate) -> TaskRecord | None:
        while True:
            read = await self._read(task_id)
            if read is None:
                return None
            data, record = read
            if change is not ORPHANED and await self._orphaned(record):
                change_now = ORPHANED
            else:
                change_now = change
            new = change_now.apply(record, self.clock())
            if new is record:
                return record
            swapped = await self._cas(keys=[self._key(task_id)], args=[data, new.dumps()])
            if swapped == 1:
                return new
            if swapped == -1:
                return None
            # Another worker changed the record in between: read it again.

    async def list_owned(
        self, owner: str | None, *, after: TaskPosition | None, limit: int
    ) -> list[TaskRecord]:
        owned = self._owned_key(owner)
        start = after[0] if after is not None else float("-inf")
        found: list[TaskRecord] = []
        offset = 0
        while len(found) < limit:
            batch = await self._redis.zrange(
                owned,
                start,
                float("inf"),
                sortby=_lazy.coredis.PureToken.BYSCORE,
                offset=offset,
                count=limit * 2,
            )
            if not batch:
                break
            offset += len(batch)
            ids = [_text(member) for member in batch]
            records = await self._redis.mget([self._key(task_id) for task_id in ids])
            gone = []
            for task_id, data in zip(ids, records, strict=True):
                record = None if data is None else TaskRecord.loads(data)
                if record is None or record.expired(self.clock()):
                    gone.append(task_id)
                elif after is None or record.position > after:
                    found.append(record)
            if gone:
                await self._redis.zrem(owned, gone)
                offset -= len(gone)
        found.sort(key=lambda record: record.position)
        listed = []
        for record in found[:limit]:
            if await self._orphaned(record):
                record = await self.update(record.task_id, ORPHANED) or record
            listed.append(record)
        return listed

    async def delete_expired(self) -> int:
        """Redis expires task keys by itself: nothing to do."""
        await trio.lowlevel.checkpoint()
        return 0


@asynccontextmanager
async def open_redis_task_store(
    url: str,
    *,
    prefix: str = "trio-mcp:",
    lease: float = 10.0,
    clock: Callable[[], float] = time.time,
) -> AsyncIterator[RedisTaskStore]:
    """Connect to the Redis at ``url`` (``redis://host:port/db``) and keep this worker's
    lease alive while the block runs.

    Blocks until connected. The lease is renewed every ``lease / 3`` seconds by a task in
    this context manager's own nursery (a failed renewal is logged and tried again at the
    next turn); leaving the block cancels it and deletes the lease,
    so tasks this worker left unfinished read as ``failed`` at once.

    Args:
        url: the Redis server.
        prefix: put before every key, so several servers can share one database.
        lease: seconds a worker counts as alive after its last renewal (default 10): the
            longest a dead worker's task can still read as ``working``.
        clock: wall-clock seconds since the epoch.
    """
    client: coredis.Redis[bytes] = _lazy.coredis.Redis.from_url(url)
    async with client:
        store = RedisTaskStore(client, prefix=prefix, lease=lease, clock=clock)
        await store.renew_lease()
        async with trio.open_nursery() as nursery:

            async def keep_alive() -> None:
                while True:
                    await trio.sleep(lease / 3)
                    try:
                        await store.renew_lease()
                    except Exception as exc:  # noqa: BLE001 - a blip must not stop the server
                        # Try again next time; if Redis stays away past the lease, other
                        # workers rightly read this worker's tasks as failed.
                        log.warning("could not renew the task worker's lease: %r", exc)

            nursery.start_soon(keep_alive)
            try:
                yield store
            finally:
                nursery.cancel_scope.cancel()
                with trio.move_on_after(1) as cleanup:
                    cleanup.shield = True
                    await store.release_lease()


def _text(member: object) -> str:
    return member.decode() if isinstance(member, bytes) else str(member)
