"""Durable tasks across a server killed with SIGKILL: ``examples/tasks_server.py`` on a
SQLite file and on a real redis-server. After the restart a finished task's result is
still there, and the task that was running reads ``failed`` (never unknown, never
``working`` forever)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import trio

from trio_mcp import McpError
from trio_mcp.http import open_http_client

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow


@contextmanager
def tasks_server(store: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    process = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "examples" / "tasks_server.py"),
            "--port",
            "0",
            "--store",
            store,
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # the server says where it listens (or dies)
        assert line.startswith("tasks server on "), line
        yield process, line.split()[-1]
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)


async def start_two(url: str) -> tuple[str, str]:
    """One finished task and one still running; their ids."""
    async with open_http_client(url) as client:
        async with client.open_tool_task("slow", {"seconds": 0.05}) as done:
            await done.result()
            done_id = done.detach()
        async with client.open_tool_task("slow", {"seconds": 600}) as running:
            assert await running.poll() == "working"
            running_id = running.detach()
    return done_id, running_id


async def check_after_restart(url: str, done_id: str, running_id: str) -> None:
    async with open_http_client(url) as client:
        async with client.open_task(done_id) as done:
            result = await done.result()
        assert result.content[0].text == "slept 0.05 s"  # type: ignore[union-attr]
        with trio.fail_after(20):  # a Redis worker's lease must lapse first (1 s here)
            async with client.open_task(running_id) as orphan:
                while await orphan.poll() == "working":
                    await trio.sleep(0.1)
                with pytest.raises(McpError, match="stopped before the task finished"):
                    await orphan.result()


async def killed_and_restarted(store: str) -> None:
    with tasks_server(store) as (process, url):
        with trio.fail_after(30):
            done_id, running_id = await start_two(url)
        process.send_signal(signal.SIGKILL)
    with tasks_server(store) as (_, url):
        with trio.fail_after(60):
            await check_after_restart(url, done_id, running_id)


async def test_sqlite_tasks_survive_sigkill(tmp_path: Path) -> None:
    await killed_and_restarted(f"sqlite:///{tmp_path}/tasks.db")


async def test_redis_tasks_survive_sigkill(redis_url: str) -> None:
    await killed_and_restarted(f"{redis_url}?lease=1")
