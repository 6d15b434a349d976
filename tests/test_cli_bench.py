"""``trio-mcp bench`` (issue 22): calls/s and latency percentiles of one tool at N in
flight, against real servers (ours over stdio, the npm reference server)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from npm_support import (
    NpmServer,
)

from trio_mcp._cli._bench import BenchResult

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
EVERYTHING = f"{sys.executable} {ROOT / 'examples' / 'everything_server.py'}"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trio_mcp", "bench", *args],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
        cwd=ROOT,
    )


@pytest.mark.slow
def test_every_call_is_counted_and_timed() -> None:
    done = cli(
        "add", "a=2", "b=3", "--stdio", EVERYTHING, "--concurrency", "4", "--calls", "200",
        "--warmup", "10", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    line = json.loads(done.stdout)
    assert line["calls"] == 200 and line["errors"] == 0 and line["concurrency"] == 4
    assert 0 < line["p50_ms"] <= line["p99_ms"]
    assert line["calls_per_second"] > 0


@pytest.mark.slow
def test_failing_calls_are_errors_and_the_exit_status_says_so() -> None:
    done = cli("echo", "--stdio", EVERYTHING, "--calls", "5", "--warmup", "0")  # no text: -32602
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("echo: 5 calls in ") and done.stdout.rstrip().endswith("5 errors")


@pytest.mark.slow
def test_the_npm_reference_server(npm_server_everything: NpmServer) -> None:
    command = " ".join(npm_server_everything.node_command)
    done = cli("echo", "message=hi", "--stdio", command, "--calls", "50", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["calls"] == 50


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--concurrency", "0"], "--concurrency must be 1 or more"),
        (["--duration", "0"], "--duration must be positive"),
        (["--calls", "1000001"], "--calls and --warmup are at most 1,000,000"),
    ],
)
def test_bad_options_are_one_line(options: list[str], message: str) -> None:
    done = cli("echo", "--stdio", EVERYTHING, *options)
    assert done.returncode == 1 and message in done.stderr


def test_percentiles_are_nearest_rank() -> None:
    result = BenchResult(calls=100, errors=0, seconds=2.0, latencies=tuple(range(1, 101)))
    assert result.percentile(0.5) == 50 and result.percentile(0.99) == 99
    assert result.calls_per_second == 50
    empty = BenchResult(calls=0, errors=0, seconds=1.0, latencies=())
    assert empty.summary()["calls"] == 0
