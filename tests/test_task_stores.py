"""Task stores (memory, SQLite, Redis): one contract for all three, then what each adds
(bounds, the single-process lock, leases) and durability across a process killed with
SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import stat
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import attrs
import jsonschema
import pytest
import trio
from spec_support import SPEC_DIR

from trio_mcp.tasks import (
    RUNNER_GONE,
    MemoryTaskStore,
    TaskRecord,
    TaskStore,
    TaskStoreFull,
    TaskUpdate,
    open_redis_task_store,
    open_sqlite_task_store,
    open_task_store,
)

ROOT = Path(__file__).resolve().parent.parent


class FakeClock:
    """Wall-clock seconds that only move when a test says so."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["memory", "sqlite", "redis"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[FakeClock], Any]:
    kind = request.param

    @asynccontextmanager
    async def make(clock: FakeClock) -> AsyncIterator[TaskStore]:
        if kind == "memory":
            yield MemoryTaskStore(clock=clock)
        elif kind == "sqlite":
            async with open_sqlite_task_store(tmp_path / "tasks.db", clock=clock) as store:
                yield store
        else:
            url = request.getfixturevalue("redis_url")
            prefix = f"test:{request.node.name}:{time.monotonic_ns()}:"
            async with open_redis_task_store(url, prefix=prefix, clock=clock) as store:
                yield store

    return make


async def test_a_created_task_reads_back_and_ids_are_unique(make_store: Any) -> None:
    clock = FakeClock()
    async with make_store(clock) as store:
        record = store.new_record(owner="alice", ttl_ms=60_000, poll_interval_ms=500)
        await store.create(record)
        assert await store.get(record.task_id) == record
        with pytest.raises(ValueError, match="exists"):
            await store.create(record)
        assert await store.get("no-such-task") is None
        assert await store.update("no-such-task", TaskUpdate(status="cancelled")) is None


async def test_status_moves_forward_and_terminal_is_final(make_store: Any) -> None:
    clock = FakeClock()
    async with make_store(clock) as store:
        record = store.new_record(owner=None, ttl_ms=None)
        await store.create(record)
        asking = TaskUpdate(status="input_required", input_requests={"k1": {"method": "x"}})
        clock.now += 1
        after = await store.update(record.task_id, asking)
        assert after is not None and after.status == "input_required"
        assert after.input_requests == {"k1": {"method": "x"}}
        assert after.updated_at == record.created_at + 1
        back = await store.update(record.task_id, TaskUpdate(status="working"))
        assert back is not None and back.status == "working" and back.input_requests is None
        done = await store.update(
            record.task_id, TaskUpdate(status="completed", result={"content": []})
        )
        assert done is not None and done.status == "completed" and done.runner is None
        clock.now += 1
        late = await store.update(record.task_id, TaskUpdate(status="cancelled"))
        assert late == done
        assert await store.get(record.task_id) == done


async def test_racing_terminal_updates_leave_exactly_one(make_store: Any) -> None:
    clock = FakeClock()
    async with make_store(clock) as store:
        record = store.new_record(owner=None, ttl_ms=None)
        await store.create(record)
        outcomes: list[TaskRecord | None] = []

        async def move(change: TaskUpdate) -> None:
            outcomes.append(await store.update(record.task_id, change))

        async with trio.open_nursery() as nursery:
            for _ in range(5):
                nursery.start_soon(move, TaskUpdate(status="cancelled"))
                nursery.start_soon(move, TaskUpdate(status="completed", result={"n": 1}))
        final = await store.get(record.task_id)
        assert final is not None and final.terminal
        assert all(outcome == final for outcome in outcomes)


async def test_a_task_is_gone_once_its_ttl_runs_out(make_store: Any) -> None:
    clock = FakeClock()
    async with make_store(clock) as store:
        short = store.new_record(owner=None, ttl_ms=1_000)
        forever = store.new_record(owner=None, ttl_ms=None)
        await store.create(short)
        await store.create(forever)
        clock.now += 0.999
        assert await store.get(short.task_id) == short
        clock.now += 0.001
        assert await store.get(short.task_id) is None
        assert await store.update(short.task_id, TaskUpdate(status="cancelled")) is None
        await store.delete_expired()
        assert await store.get(forever.task_id) == forever


@pytest.mark.parametrize(
    "status", ["working", "input_required", "completed", "failed", "cancelled"]
)
def test_the_wire_form_is_a_detailed_task(status: str) -> None:
    schema_path = SPEC_DIR / "ext-tasks-schema.json"
    if not schema_path.exists():
        pytest.skip(f"the spec schemas are not at {SPEC_DIR}")
    schema = json.loads(schema_path.read_text())
    store = MemoryTaskStore()
    record = store.new_record(owner="alice", ttl_ms=None, poll_interval_ms=250)
    payload: dict[str, Any] = {
        "input_required": {
            "input_requests": {
                "ask": {
                    "method": "elicitation/create",
                    "params": {
                        "message": "Go on?",
                        "requestedSchema": {"type": "object", "properties": {}},
                    },
                }
            }
        },
        "completed": {"result": {"content": [], "isError": True}},
        "failed": {"error": {"code": -32603, "message": "boom"}},
    }.get(status, {})
    wire = TaskUpdate(status=status, **payload).apply(record, record.created_at).wire()  # type: ignore[arg-type]
    validator = jsonschema.Draft202012Validator({**schema, "$ref": "#/$defs/DetailedTask"})
    validator.validate(wire)
    assert wire["createdAt"].endswith("Z")
    for key in ("result", "error", "inputRequests"):
        assert (key in wire) == (
            key
            == {"completed": "result", "failed": "error", "input_required": "inputRequests"}.get(
                status
            )
        )


async def test_memory_store_makes_room_from_expired_then_oldest_terminal() -> None:
    clock = FakeClock()
    store = MemoryTaskStore(max_tasks=3, clock=clock)
    live = store.new_record(owner=None, ttl_ms=None)
    old_done = store.new_record(owner=None, ttl_ms=None)
    expiring = store.new_record(owner=None, ttl_ms=10)
    for record in (live, old_done, expiring):
        await store.create(record)
    await store.update(old_done.task_id, TaskUpdate(status="completed", result={}))
    clock.now += 1
    fourth = store.new_record(owner=None, ttl_ms=None)
    await store.create(fourth)  # the expired one goes
    assert len(store) == 3 and await store.get(old_done.task_id) is not None
    fifth = store.new_record(owner=None, ttl_ms=None)
    await store.create(fifth)  # then the oldest terminal one
    assert await store.get(old_done.task_id) is None
    with pytest.raises(TaskStoreFull):
        await store.create(store.new_record(owner=None, ttl_ms=None))
    assert {await store.get(r.task_id) is not None for r in (live, fourth, fifth)} == {True}


async def test_one_process_owns_a_sqlite_file(tmp_path: Path) -> None:
    async with open_sqlite_task_store(tmp_path / "t.db"):
        with pytest.raises(RuntimeError, match="another process"):
            async with open_sqlite_task_store(tmp_path / "t.db"):
                pass  # pragma: no cover
    async with open_sqlite_task_store(tmp_path / "t.db"):
        pass  # free again once the first closed


async def test_open_task_store_by_url(tmp_path: Path) -> None:
    async with open_task_store("memory:") as store:
        assert isinstance(store, MemoryTaskStore)
    async with open_task_store(f"sqlite:///{tmp_path}/x.db") as store:
        await store.create(record := store.new_record(owner=None, ttl_ms=None))
    async with open_task_store(f"sqlite:///{tmp_path}/x.db") as store:
        found = await store.get(record.task_id)
        assert found is not None and found.status == "failed"  # its runner is gone
    with pytest.raises(ValueError, match="no task store"):
        async with open_task_store("postgres://x"):
            pass  # pragma: no cover


# A child process that records one finished and one unfinished task, says their ids, and
# waits to be killed.
CHILD = """
import sys, trio
from trio_mcp.tasks import TaskUpdate, open_task_store

async def main(url):
    async with open_task_store(url) as store:
        done = store.new_record(owner="alice", ttl_ms=None)
        running = store.new_record(owner="alice", ttl_ms=None)
        await store.create(done)
        await store.create(running)
        await store.update(done.task_id, TaskUpdate(status="completed", result={"content": [{"type": "text", "text": "42"}]}))
        print(done.task_id, running.task_id, flush=True)
        await trio.sleep_forever()

trio.run(main, sys.argv[1])
"""


def _run_and_kill(url: str, env: dict[str, str] | None = None) -> tuple[str, str]:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, url],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        done, running = line.split()
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
    return done, running


@pytest.mark.slow
async def test_sqlite_tasks_survive_a_killed_process(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/tasks.db"
    done, running = await trio.to_thread.run_sync(_run_and_kill, url)
    async with open_task_store(url) as store:
        finished = await store.get(done)
        assert finished is not None and finished.status == "completed"
        assert finished.result == {"content": [{"type": "text", "text": "42"}]}
        orphan = await store.get(running)
        assert orphan is not None and orphan.status == "failed"
        assert orphan.error == RUNNER_GONE and orphan.owner == "alice"


@pytest.mark.slow
async def test_redis_tasks_survive_a_killed_worker(redis_url: str) -> None:
    done, running = await trio.to_thread.run_sync(_run_and_kill, redis_url)
    # The killed worker's lease (10 s by default) has not lapsed: its task still reads as
    # working to another live worker...
    async with open_redis_task_store(redis_url, lease=0.5) as store:
        finished = await store.get(done)
        assert finished is not None and finished.status == "completed"
        assert finished.result == {"content": [{"type": "text", "text": "42"}]}
        still = await store.get(running)
        assert still is not None and still.status == "working"
        # ...until the lease lapses; then it is failed, for good.
        await store._redis.delete([store._runner_key(still.runner or "")])
        orphan = await store.get(running)
        assert orphan is not None and orphan.status == "failed" and orphan.error == RUNNER_GONE
        assert (await store.get(running)) == orphan


async def test_a_redis_worker_that_leaves_fails_its_unfinished_tasks(redis_url: str) -> None:
    prefix = f"leave:{time.monotonic_ns()}:"
    async with open_redis_task_store(redis_url, prefix=prefix) as worker:
        record = worker.new_record(owner=None, ttl_ms=None)
        await worker.create(record)
        async with open_redis_task_store(redis_url, prefix=prefix) as other:
            seen = await other.get(record.task_id)
            assert seen is not None and seen.status == "working"
    async with open_redis_task_store(redis_url, prefix=prefix) as later:
        gone = await later.get(record.task_id)
        assert gone is not None and gone.status == "failed"


async def test_a_redis_lease_is_renewed_while_the_store_is_open(
    redis_url: str,
) -> None:
    prefix = f"lease:{time.monotonic_ns()}:"
    async with open_redis_task_store(redis_url, prefix=prefix, lease=0.3) as worker:
        record = worker.new_record(owner=None, ttl_ms=None)
        await worker.create(record)
        async with open_redis_task_store(redis_url, prefix=prefix) as other:
            for _ in range(4):  # well past one lease: renewals keep it alive
                await trio.sleep(0.2)
                seen = await other.get(record.task_id)
                assert seen is not None and seen.status == "working"


async def test_a_failed_lease_renewal_is_logged_and_tried_again(
    redis_url: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    prefix = f"blip:{time.monotonic_ns()}:"
    async with open_redis_task_store(redis_url, prefix=prefix, lease=0.3) as worker:
        renew = worker.renew_lease
        calls = 0
        tried_again = trio.Event()

        async def flaky() -> None:
            nonlocal calls
            calls += 1
            if calls == 1:
                raise ConnectionError("redis went away for a moment")
            await renew()
            tried_again.set()

        worker.renew_lease = flaky  # type: ignore[method-assign]
        with trio.fail_after(5):
            await tried_again.wait()
    assert "could not renew the task worker's lease" in caplog.text


# -- the SQLite file's mode and opening errors (issue 21, failure 9; failure 2's start) ----


async def test_the_sqlite_task_file_and_its_wal_are_private(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    old = os.umask(0o022)  # a usual umask: files would be 0644
    try:
        async with open_sqlite_task_store(path) as store:
            await store.create(store.new_record(owner="alice", ttl_ms=60_000))
            modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in tmp_path.iterdir()}
    finally:
        os.umask(old)
    assert modes["tasks.db"] == 0o600
    assert modes["tasks.db-wal"] == 0o600
    assert modes["tasks.db.lock"] == 0o600


async def test_an_existing_task_file_others_can_read_is_made_private(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    path.touch(mode=0o644)
    path.chmod(0o644)
    async with open_sqlite_task_store(path):
        pass
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


async def test_a_corrupt_task_file_is_refused_with_its_name_and_the_reason(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    path.write_bytes(b"this is not a database, just bytes " * 200)
    with pytest.raises(RuntimeError) as refused:
        async with open_sqlite_task_store(path):
            pass
    message = str(refused.value)
    assert f"cannot open the SQLite task store {path}" in message
    assert "not a database" in message
    # And the lock is released: a good file opens afterwards in the same process.
    path.unlink()
    async with open_sqlite_task_store(path):
        pass


async def test_a_symbolic_link_as_task_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.db"
    target.write_bytes(b"")
    path = tmp_path / "tasks.db"
    path.symlink_to(target)
    with pytest.raises(RuntimeError, match="cannot open the SQLite task store"):
        async with open_sqlite_task_store(path):
            pass


async def test_an_owners_tasks_list_oldest_first_a_page_at_a_time(make_store: Any) -> None:
    clock = FakeClock()
    async with make_store(clock) as store:
        alices = []
        for n in range(5):
            record = store.new_record(owner="alice", ttl_ms=None if n != 2 else 10_000)
            await store.create(record)
            alices.append(record)
            if n % 2:
                clock.now += 1  # two tasks share each creation time: ties go by id
        await store.create(store.new_record(owner="bob", ttl_ms=None))
        await store.create(store.new_record(owner=None, ttl_ms=None))
        expected = sorted(alices, key=lambda r: r.position)
        first = await store.list_owned("alice", after=None, limit=3)
        assert first == expected[:3]
        rest = await store.list_owned("alice", after=first[-1].position, limit=3)
        assert rest == expected[3:]
        assert [r.owner for r in await store.list_owned(None, after=None, limit=10)] == [None]
        assert await store.list_owned("carol", after=None, limit=10) == []
        clock.now += 10  # alices[2] expires
        listed = await store.list_owned("alice", after=None, limit=10)
        assert alices[2] not in listed and len(listed) == 4
        assert type(store).can_list()


async def test_a_sqlite_task_file_of_an_earlier_version_gains_the_listing(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    clock = FakeClock()
    record = MemoryTaskStore(clock=clock).new_record(owner="alice", ttl_ms=None)
    record = attrs.evolve(record, runner=None, status="completed")
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE tasks (task_id TEXT PRIMARY KEY, expires_at REAL, "
        "terminal INTEGER NOT NULL, record BLOB NOT NULL)"
    )
    db.execute("INSERT INTO tasks VALUES (?, ?, 1, ?)", (record.task_id, None, record.dumps()))
    db.commit()
    db.close()
    async with open_sqlite_task_store(path, clock=clock) as store:
        assert await store.list_owned("alice", after=None, limit=5) == [record]
        clock.now += 1  # created later, so listed after it (ties would go by random id)
        fresh = store.new_record(owner="alice", ttl_ms=None)
        await store.create(fresh)
        assert [r.task_id for r in await store.list_owned("alice", after=None, limit=5)] == [
            record.task_id,
            fresh.task_id,
        ]
