"""A task store that fails never makes a zombie server (issue 21, failure 2): a task's
outcome that cannot be written is written again until the store takes it, requests that
need the store meanwhile are refused with ``RetryLater`` ("unavailable"; over HTTP 503 and
``Retry-After``), requests that do not go on, the outage is logged once when it begins and
once when it ends, and the server recovers by itself. With a fake store (the clock
jumps), a real SQLite file locked by another connection, and a real Redis killed and
started again."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
from http_support import meta, modern_body, modern_headers, running
from redis_support import RedisProcess
from test_server_tasks import Recorder, make_server, opted_in, poll_until

from trio_mcp import RetryLater
from trio_mcp.http import asgi_app
from trio_mcp.server import TASKS_EXTENSION
from trio_mcp.tasks import MemoryTaskStore, open_redis_task_store, open_sqlite_task_store

FAILED = "the task store failed"
BACK = "the task store answers again"


class FlakyStore(MemoryTaskStore):
    """A store that raises while ``down`` (a database that went away)."""

    down = False

    def _check(self) -> None:
        if self.down:
            raise ConnectionError("the store is away")

    async def create(self, record: Any) -> None:
        self._check()
        await super().create(record)

    async def get(self, task_id: str) -> Any:
        self._check()
        return await super().get(task_id)

    async def update(self, task_id: str, change: Any) -> Any:
        self._check()
        return await super().update(task_id, change)

    async def delete_expired(self) -> int:
        self._check()
        return await super().delete_expired()


def logged(caplog: pytest.LogCaptureFixture, text: str) -> int:
    return sum(text in record.getMessage() for record in caplog.records)


async def test_an_outage_is_retried_refused_and_recovered_from(
    autojump_clock: trio.abc.Clock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "trio_mcp.server")
    store = FlakyStore()
    recorder = Recorder()
    async with opted_in(make_server(recorder, store=store)) as raw:
        created = await raw.request("tools/call", {"name": "slow", "arguments": {"seconds": 10}})
        store.down = True
        await trio.sleep(100)  # the task finished long ago; its outcome cannot be written
        assert recorder.events == ["start True", "done"]
        with pytest.raises(RetryLater) as refused:
            await raw.request("tasks/get", {"taskId": created["taskId"]})
        assert refused.value.reason == "unavailable" and refused.value.retry_after == 5
        with pytest.raises(RetryLater):
            await raw.request("tools/call", {"name": "slow", "arguments": {"seconds": 1}})
        # What does not need the store goes on.
        plain = await raw.request("tools/call", {"name": "plain", "arguments": {"text": "hi"}})
        assert plain["content"][0]["text"] == "hi"
        assert logged(caplog, FAILED) == 1  # once for the outage, not per retry
        store.down = False
        await trio.sleep(6)  # the longest wait between two tries is 5 s
        done = await raw.request("tasks/get", {"taskId": created["taskId"]})
        assert done["status"] == "completed"
        assert done["result"]["content"][0]["text"] == "slept 10"
        assert logged(caplog, BACK) == 1
        again = await raw.request("tools/call", {"name": "slow", "arguments": {"seconds": 1}})
        assert (await poll_until(raw, again["taskId"], "completed"))["status"] == "completed"


@pytest.mark.slow
@pytest.mark.usefixtures("front_end")
async def test_a_locked_sqlite_file_over_http(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Another connection holds the SQLite file's write lock while a task ends (SQLite
    waits 5 s for it, then fails): creation gets 503 + Retry-After meanwhile, a plain call
    answers, and once the lock is released the task reads ``completed``. Real time."""
    caplog.set_level(logging.WARNING, "trio_mcp.server")
    path = tmp_path / "tasks.db"
    recorder = Recorder()
    async with open_sqlite_task_store(path) as store:
        app = asgi_app(make_server(recorder, store=store))
        task_meta = meta(extensions={TASKS_EXTENSION: {}})

        def call(name: str, arguments: dict[str, Any], id: int = 1) -> dict[str, Any]:
            body = modern_body(id, "tools/call", {"name": name, "arguments": arguments})
            body["params"]["_meta"] = task_meta
            return body

        async with running(app) as base, httpx.AsyncClient(timeout=30) as client:
            url = f"{base}/mcp"
            headers = modern_headers("tools/call", "slow")
            with trio.fail_after(60):
                created = (
                    await client.post(url, json=call("slow", {"seconds": 0.5}), headers=headers)
                ).json()
                task_id = created["result"]["taskId"]
                blocker = sqlite3.connect(path, isolation_level=None)
                blocker.execute("BEGIN EXCLUSIVE")
                try:
                    while logged(caplog, FAILED) == 0:  # the outcome's write failed
                        await trio.sleep(0.1)
                    assert recorder.events == ["start True", "done"]
                    refused = await client.post(
                        url, json=call("slow", {"seconds": 0}), headers=headers
                    )
                    assert refused.status_code == 503
                    assert refused.headers["retry-after"] == "5"
                    assert refused.json()["error"]["data"] == {
                        "retryAfter": 5,
                        "reason": "unavailable",
                    }
                    plain = await client.post(
                        url,
                        json=modern_body(
                            2, "tools/call", {"name": "plain", "arguments": {"text": "x"}}
                        ),
                        headers=modern_headers("tools/call", "plain"),
                    )
                    assert plain.status_code == 200
                finally:
                    blocker.rollback()
                    blocker.close()
                get = modern_body(3, "tasks/get", {"taskId": task_id})
                get["params"]["_meta"] = task_meta
                while True:
                    answer = await client.post(
                        url, json=get, headers=modern_headers("tasks/get", task_id)
                    )
                    assert answer.status_code in (200, 503), answer.text
                    if (
                        answer.status_code == 200
                        and answer.json()["result"]["status"] == "completed"
                    ):
                        break
                    await trio.sleep(0.1)
            assert logged(caplog, BACK) >= 1


@pytest.mark.slow
async def test_redis_killed_mid_task_and_started_again(
    durable_redis: RedisProcess, caplog: pytest.LogCaptureFixture
) -> None:
    """The Redis behind the store dies while a task runs and comes back (its append-only
    file kept the records): the task's outcome is written once it is back, meanwhile
    ``tasks/get`` is refused, and no worker restarts. Real time."""
    caplog.set_level(logging.WARNING, "trio_mcp.server")
    recorder = Recorder()
    async with (
        open_redis_task_store(durable_redis.url, lease=30) as store,
        opted_in(make_server(recorder, store=store)) as raw,
    ):
        with trio.fail_after(60):
            created = await raw.request(
                "tools/call", {"name": "slow", "arguments": {"seconds": 0.5}}
            )
            await trio.to_thread.run_sync(durable_redis.kill)
            while logged(caplog, FAILED) == 0:
                await trio.sleep(0.05)
            assert recorder.events == ["start True", "done"]
            with pytest.raises(RetryLater) as refused:
                await raw.request("tasks/get", {"taskId": created["taskId"]})
            assert refused.value.reason == "unavailable"
            await trio.to_thread.run_sync(durable_redis.start)
            done = await poll_until_answered(raw, created["taskId"])
            assert done["status"] == "completed"
            assert done["result"]["content"][0]["text"] == "slept 0.5"
    assert logged(caplog, BACK) >= 1


async def poll_until_answered(raw: Any, task_id: str) -> dict[str, Any]:
    """``tasks/get`` until the store answers with a definite status."""
    while True:
        try:
            task = await raw.request("tasks/get", {"taskId": task_id})
        except RetryLater:
            await trio.sleep(0.1)
            continue
        if task["status"] in ("completed", "failed", "cancelled"):
            return task  # type: ignore[no-any-return]
        await trio.sleep(0.1)
