"""Tasks across a fleet (issue 23): two worker processes on different ports share a real
Redis task store; a task started on one is read on the other, and ``tasks/cancel`` answered
by the other stops the work where it runs (the handler observes the cancellation). The same
with ``examples/tasks_server.py --redis URL`` as the workers."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
from http_support import meta, modern_body, modern_headers
from process_support import terminated_at_exit

from trio_mcp.http import open_http_client
from trio_mcp.server import TASKS_EXTENSION
from trio_mcp.types import ElicitResult

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE.parent / "examples" / "tasks_server.py"

pytestmark = pytest.mark.slow


def worker(port: int, store: str, log: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(HERE / "fleet_app.py"), str(port), store, str(log)],
        stdout=subprocess.PIPE,
        text=True,
    )


@pytest.fixture
def fleet(redis_url: str, tmp_path: Path) -> Iterator[tuple[list[str], Path]]:
    log = tmp_path / "log"
    log.touch()
    workers = [worker(0, redis_url, log) for _ in range(2)]
    with terminated_at_exit(workers):
        urls = []
        for process in workers:
            assert process.stdout is not None
            urls.append(f"http://127.0.0.1:{int(process.stdout.readline())}/mcp")
        yield urls, log


def rpc(url: str, id: int, method: str, params: dict[str, Any], name: str | None = None) -> Any:
    body = modern_body(id, method, params)
    body["params"]["_meta"] = meta(elicitation={"form": {}}, extensions={TASKS_EXTENSION: {}})
    answer = httpx.post(url, json=body, headers=modern_headers(method, name), timeout=10)
    assert answer.status_code == 200, answer.text
    return answer.json()["result"]


def wait_for(log: Path, line: str, limit: float = 20) -> list[str]:
    deadline = time.monotonic() + limit
    while True:
        lines = log.read_text().splitlines()
        if any(entry.startswith(line) for entry in lines):
            return lines
        assert time.monotonic() < deadline, (line, lines)
        time.sleep(0.05)


def test_a_task_cancelled_through_another_worker_stops_where_it_runs(
    fleet: tuple[list[str], Path],
) -> None:
    (a, b), log = fleet
    created = rpc(a, 1, "tools/call", {"name": "hold", "arguments": {"seconds": 600}}, "hold")
    task_id = created["taskId"]
    started = wait_for(log, "started")
    # The other worker reads it from the shared store ...
    assert rpc(b, 2, "tasks/get", {"taskId": task_id}, task_id)["status"] == "working"
    # ... and cancels it: the handler on the first worker sees its cancellation.
    rpc(b, 3, "tasks/cancel", {"taskId": task_id}, task_id)
    lines = wait_for(log, "cancelled", limit=10)
    assert lines[lines.index(started[0]) + 1].split()[1] == started[0].split()[1]
    for url in (a, b):
        assert rpc(url, 4, "tasks/get", {"taskId": task_id}, task_id)["status"] == "cancelled"
    assert not any(line.startswith("done") for line in log.read_text().splitlines())


def test_input_answered_through_another_worker_reaches_the_task(
    fleet: tuple[list[str], Path],
) -> None:
    """The task runs on the first worker and waits for input; the client answers with
    ``tasks/update`` on the second, which records the answers; the first hands them to the
    task within the poll interval."""
    (a, b), log = fleet
    created = rpc(a, 1, "tools/call", {"name": "confirm", "arguments": {}}, "confirm")
    task_id = created["taskId"]
    deadline = time.monotonic() + 20
    while (task := rpc(b, 2, "tasks/get", {"taskId": task_id}, task_id))["status"] != (
        "input_required"
    ):
        assert time.monotonic() < deadline, task
        time.sleep(0.05)
    (key,) = task["inputRequests"]
    rpc(b, 3, "tasks/update", {"taskId": task_id, "inputResponses": {
        key: {"action": "accept", "content": {"ok": True}},
    }}, task_id)  # fmt: skip
    wait_for(log, "answered accept", limit=10)
    deadline = time.monotonic() + 20
    while (done := rpc(a, 4, "tasks/get", {"taskId": task_id}, task_id))["status"] != "completed":
        assert time.monotonic() < deadline, done
        time.sleep(0.05)
    assert done["result"]["content"][0]["text"] == "confirmed: True"


# -- examples/tasks_server.py as fleet members -----------------------------------------------


@contextmanager
def tasks_servers(redis: str, count: int = 2) -> Iterator[list[str]]:
    """``count`` ``examples/tasks_server.py --redis URL`` workers; their MCP URLs."""
    command = [sys.executable, str(EXAMPLE), "--port", "0", "--redis", redis]
    processes = [subprocess.Popen(command, stdout=subprocess.PIPE, text=True) for _ in range(count)]
    with terminated_at_exit(processes):
        urls = []
        for process in processes:
            assert process.stdout is not None
            line = process.stdout.readline()  # the server says where it listens (or dies)
            assert line.startswith("tasks server on "), line
            urls.append(line.split()[-1])
        yield urls


async def answer_name(params: Any) -> ElicitResult:
    return ElicitResult(action="accept", content={"name": "Ada"})


async def test_the_tasks_example_runs_as_a_fleet(redis_url: str) -> None:
    """A task created through one worker of ``examples/tasks_server.py --redis`` is read,
    answered (``tasks/update``) and cancelled through the other."""
    with tasks_servers(redis_url) as (a, b), trio.fail_after(60):
        async with (
            open_http_client(a, elicitation=answer_name) as on_a,
            open_http_client(b, elicitation=answer_name) as on_b,
        ):
            # ``ask`` runs on a and waits for a name; b reads it, answers it, and gets its
            # outcome (b's client answers the input request with tasks/update, on b: a's
            # handle was detached before it polled).
            async with on_a.open_tool_task("ask") as asking:
                ask_id = asking.detach()
            async with on_b.open_task(ask_id) as asked:
                result = await asked.result()
            assert result.content[0].text == "Hello, Ada!"  # type: ignore[union-attr]
            # ``slow`` runs on a; b reads it and cancels it; a reads it cancelled.
            async with on_a.open_tool_task("slow", {"seconds": 600}) as slow:
                slow_id = slow.detach()
            async with on_b.open_task(slow_id) as seen:
                assert await seen.poll() == "working"
                await seen.cancel()
            async with on_a.open_task(slow_id) as again:
                assert await again.poll() == "cancelled"
