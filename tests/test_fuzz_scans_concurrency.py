"""The fuzzer's cross-talk and leaks scans against a server broken under concurrency
(tests/fuzz_targets/concurrency_server.py): answers or progress that reach another client
are caught over HTTP, memory kept per cancelled request and requests lost once enough were
cancelled are caught over stdio; the correct server, the everything server and the tasks
server pass both."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from trio_mcp._fuzz._leaks import process_of_port, usage
from trio_mcp._fuzz._report import FuzzReport
from trio_mcp._fuzz._target import Target
from trio_mcp.fuzz import HttpTarget, StdioTarget, fuzz

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "fuzz_targets" / "concurrency_server.py"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def serve(command: list[str]) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=ENV
    )
    assert process.stdout is not None
    return process, process.stdout.readline().split()[-1]  # ("tasks server on URL")


def stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture
def http_server(request: pytest.FixtureRequest) -> Iterator[str]:
    command = getattr(request, "param", [sys.executable, str(SERVER), "--http"])
    process, url = serve(command)
    try:
        assert url.startswith("http://127.0.0.1:"), url
        yield url
    finally:
        stop(process)


async def scan(target: Target, **options: Any) -> FuzzReport:
    return await fuzz(
        target, max_examples=1, max_steps=2, seed=1, verify=False, time_budget=30, **options
    )


def found(report: FuzzReport) -> dict[str, str]:
    return {f.invariant: f.detail for f in (*report.failures, *report.warnings)}


def scanned(report: FuzzReport) -> set[str]:
    return {name for name in found(report) if name.startswith(("crosstalk-", "leaks-"))}


def broken(bug: str) -> list[str]:
    return [sys.executable, str(SERVER), "--http", bug]


# -- cross-talk ------------------------------------------------------------------------------


async def test_the_correct_server_has_no_cross_talk(http_server: str) -> None:
    report = await scan(HttpTarget(url=http_server), crosstalk_clients=20, leak_requests=100)
    assert scanned(report) == set(), found(report)


@pytest.mark.parametrize("http_server", [broken("mixed-answers")], indirect=True)
async def test_answers_reaching_another_client_are_caught(http_server: str) -> None:
    report = await scan(HttpTarget(url=http_server), crosstalk_clients=20)
    assert scanned(report) == {"crosstalk-answer-own-request"}
    assert "another request's marker xt-" in found(report)["crosstalk-answer-own-request"]


@pytest.mark.parametrize("http_server", [broken("mixed-progress")], indirect=True)
async def test_progress_reaching_another_client_is_caught(http_server: str) -> None:
    report = await scan(HttpTarget(url=http_server), crosstalk_clients=20)
    assert scanned(report) == {"crosstalk-progress-own-request"}
    failure = next(f for f in report.failures if f.invariant == "crosstalk-progress-own-request")
    assert failure.received[0]["received"]  # the message that crossed, for people


# -- leaks -----------------------------------------------------------------------------------


def stdio(bug: str | None = None) -> StdioTarget:
    return StdioTarget(command=[sys.executable, str(SERVER), *([bug] if bug else [])], env=ENV)


async def test_the_correct_server_leaks_nothing_over_stdio() -> None:
    report = await scan(stdio(), leak_requests=100)
    assert scanned(report) == set(), found(report)


async def test_memory_kept_per_cancelled_request_is_caught() -> None:
    report = await scan(stdio("leaks-on-cancel"), leak_requests=100)
    assert scanned(report) == {"leaks-memory-bounded"}
    assert "memory grew by" in found(report)["leaks-memory-bounded"]
    strict = await scan(stdio("leaks-on-cancel"), leak_requests=100, strict=True)
    assert "leaks-memory-bounded" in {f.invariant for f in strict.failures}


async def test_requests_lost_after_cancellations_are_caught() -> None:
    report = await scan(stdio("loses-requests"), leak_requests=100, deadline=2)
    assert scanned(report) == {"leaks-requests-answered"}
    assert "were not answered within 2 s" in found(report)["leaks-requests-answered"]


def test_a_local_servers_process_is_found_by_its_port() -> None:
    process, url = serve([sys.executable, str(SERVER), "--http"])
    try:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        assert process_of_port(port) == process.pid
        held = usage(process.pid)
        assert held is not None and held.rss > 1 << 20 and held.fds > 2
    finally:
        stop(process)


# -- no false positives on our own servers -----------------------------------------------------


EVERYTHING = ROOT / "examples" / "everything_server.py"
TASKS = ROOT / "examples" / "tasks_server.py"


async def test_the_everything_server_passes_over_stdio() -> None:
    target = StdioTarget(command=[sys.executable, str(EVERYTHING)], env=ENV)
    report = await scan(target, leak_requests=100)
    assert scanned(report) == set(), found(report)


@pytest.mark.parametrize(
    "http_server", [[sys.executable, str(TASKS), "--port", "0"]], indirect=True
)
async def test_the_tasks_server_passes_over_http(http_server: str) -> None:
    report = await scan(HttpTarget(url=http_server), crosstalk_clients=20, leak_requests=100)
    assert scanned(report) == set(), found(report)


async def test_answers_after_a_cancellation_was_read_are_caught() -> None:
    """Over stdio the scan knows when the server read a cancellation: it answered a request
    sent after it. (tests/fuzz_targets/answers_after_cancel.py ignores cancellations.)"""
    command = [sys.executable, str(ROOT / "tests" / "fuzz_targets" / "answers_after_cancel.py")]
    report = await scan(StdioTarget(command=command), leak_requests=100)
    assert any(
        f.invariant == "cancelled-request-not-answered"
        and "cancelled requests were answered after a request sent after" in f.detail
        for f in report.failures
    ), report.summary()


async def test_a_server_that_dies_under_the_burst_is_reported_not_fatal() -> None:
    report = await scan(stdio("dies-under-load"), leak_requests=100, deadline=2)
    assert "leaks-requests-answered" in scanned(report), report.summary()


async def test_the_servers_requests_are_answered_so_that_it_can_answer_ours() -> None:
    """A server of the initialize era may ping its client in the middle of a call: the
    scan answers (a ping with a result, anything else with an error), as the examples do."""
    command = [sys.executable, str(ROOT / "tests" / "fuzz_targets" / "pings_the_client.py")]
    report = await scan(StdioTarget(command=command), leak_requests=100, deadline=2)
    assert report.eras == ("legacy",)
    assert scanned(report) == set(), found(report)
