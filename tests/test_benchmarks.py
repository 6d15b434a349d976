"""Every benchmark in ``benchmarks/`` still runs and measures what it says, on the smallest
load that exercises all its code (a few dozen calls, one round): a benchmark that no test
runs breaks silently, and its figures in the docs can no longer be reproduced.

Nothing here asserts a speed (performance lives in the benchmarks' own reports, as ratios);
each test asserts that the run finished, that every server or variant it measures answered
(no error rows) and that its figures are there and positive.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from redis_support import redis_binary

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "benchmarks"

# Each benchmark runs as a child process; on starved cores a few take a minute.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def bench(script: str, *args: str, timeout: float = 240) -> str:
    """Run ``benchmarks/<script>`` with ``args``; its standard output. Fails the test, with
    its output, if it exits non-zero."""
    run = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert run.returncode == 0, (
        f"{script} {' '.join(args)}:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    )
    return run.stdout


def positive(value: Any) -> bool:
    return isinstance(value, int | float) and value > 0


def test_stdio_bench_measures_every_server_at_every_depth() -> None:
    report = json.loads(
        bench("stdio_bench.py", "--rounds", "1", "--depths", "1,4", "--n", "40", "--json")
    )
    assert set(report["medians"]) == {"trio_mcp", "sdk_lowlevel", "floor"}
    for name, row in report["medians"].items():
        for key in ("startup_ms", "rss_mb", "d1_calls_per_s", "d4_calls_per_s", "d1_p50_ms"):
            assert positive(row[key]), (name, key, row)
    assert positive(report["ratios"]["d1_rate_vs_sdk"])
    assert positive(report["ratios"]["d4_rate_vs_floor"])


def test_http_bench_measures_every_server_in_both_eras(tmp_path: Path) -> None:
    out = tmp_path / "http.json"
    only = "trio_mcp,sdk,hypercorn,trio_mcp-2w"
    bench(
        "http_bench.py",
        *("--rounds", "1", "--calls", "40", "--warmup", "5", "--sessions", "20"),
        *("--settle", "0", "--only", only, "--json", str(out)),
    )
    rows = json.loads(out.read_text())["rows"]
    assert [row for row in rows if "error" in row] == []
    measured = {(row["server"], row["era"]) for row in rows if "c1" in row}
    for server in only.split(","):
        assert (server, "modern") in measured, (server, measured)
    assert ("trio_mcp", "legacy") in measured and ("sdk", "legacy") in measured
    for row in rows:
        if "c1" in row:
            assert positive(row["c1"]["calls_per_s"]), row
            assert positive(row["c8"]["calls_per_s"]), row


def test_client_cost_measures_both_clients() -> None:
    report = json.loads(bench("client_cost.py", "--rounds", "1", "--n", "50", "--json"))
    for impl in ("trio_mcp", "sdk"):
        assert positive(report["medians"][impl]["client_cpu_us"]), report
    assert positive(report["cpu_ratio"])


def test_roundtrip_memory_measures_the_floor_and_both_eras() -> None:
    report = json.loads(bench("roundtrip_memory.py", "--calls", "100", "--rounds", "1", "--json"))
    for key in ("floor_us", "legacy_us", "modern_us", "ratio_legacy", "cpu_ratio_modern"):
        assert positive(report[key]), (key, report)


def rows(out: str, *labels: str) -> dict[str, list[float]]:
    """The figures on the line of each of ``labels`` in a benchmark's table (the numbers
    after the label); fails naming a label with no line or a line with no figures."""
    found = {}
    for label in labels:
        line = next((line for line in out.splitlines() if line.strip().startswith(label)), None)
        assert line is not None, f"no line {label!r} in:\n{out}"
        figures = [float(n.replace(",", "")) for n in NUMBER.findall(line.strip()[len(label) :])]
        assert figures, f"no figures on {line!r}"
        found[label] = figures
    return found


NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def test_tasks_bench_runs_on_every_store(redis_url: str) -> None:
    out = bench("tasks_bench.py", "--n", "20", "--rounds", "2", "--redis", redis_url)
    for label, (created, polled) in rows(
        out, "memory", "sqlite FULL", "sqlite NORMAL", "redis"
    ).items():
        assert created > 0 and polled > 0, (label, out)


FLEET_ROWS = ("1 process", "1 worker + Redis", "2 workers + Redis", "4 workers + Redis")


def test_fleet_bench_measures_the_fleet_in_the_modern_era() -> None:
    redis_binary()  # skips (or fails under CI) without redis-server
    out = bench("fleet_bench.py", "--rounds", "1", "--calls", "40", "--warmup", "5")
    assert "errors, e.g." not in out, out
    for label, figures in rows(out, *FLEET_ROWS).items():
        # Per connection count: calls/s, p50/p99 ms, Redis commands per call.
        assert len(figures) == 12 and all(figures[i] > 0 for i in (0, 4, 8)), (label, out)
    assert "2 workers + Redis vs 1 process (c8):" in out


def test_fleet_bench_measures_sessions_forwarded_between_workers() -> None:
    redis_binary()
    out = bench(
        "fleet_bench.py",
        *("--rounds", "1", "--calls", "40", "--warmup", "5", "--era", "legacy"),
        *("--spread", "--sessions", "10", "--sse-calls", "20"),
    )
    assert "errors, e.g." not in out, out
    figures = rows(out, *FLEET_ROWS, "2 processes, spread", "POSTs local", "POSTs forwarded")
    spread = figures["2 processes, spread"]
    assert spread[0] > 0 and spread[3] > 0, out  # calls were forwarded, and cost Redis
    assert figures["POSTs forwarded"][0] > 0, out
    assert re.search(r"per session opened: [\d.]+ Redis commands, \d+ bytes", out), out


def test_inbox_bench_measures_the_hops_and_the_floor() -> None:
    redis_binary()
    out = bench("inbox_bench.py", "--exchanges", "20", "--rounds", "1")
    figures = rows(
        out,
        "message and answer, through the inbox:",
        "message and answer, raw sockets:",
        "one PING from Trio (coredis):",
    )
    assert all(values[0] > 0 for values in figures.values()), out


def test_auth_cost_measures_each_token_kind() -> None:
    out = bench("auth_cost.py", "--calls", "20", "--rounds", "1")
    for label, (same, new) in rows(out, "RS256 bearer", "ES256 bearer", "ES256 DPoP").items():
        assert same > 0 and new > 0, (label, out)
    through = bench("auth_cost.py", "--through-app", "--calls", "20", "--rounds", "1")
    for label, (per_call, _added) in rows(through, "none", "RS256", "ES256", "DPoP").items():
        assert per_call > 0, (label, through)


def test_event_store_memory_measures_what_abandoned_answers_pin() -> None:
    out = bench("event_store_memory.py", "--calls", "5", "--answer-bytes", "1000")
    assert re.search(r"5 abandoned answers of 1000 bytes: .* store: 5 streams", out), out


def test_http_profile_adds_up_the_time_by_package() -> None:
    out = bench("http_profile.py", "--calls", "50", "--warmup", "5")
    assert re.search(r"\d+\.\d%\s+trio_mcp MCP work", out), out
    assert re.search(r"[\d.]+/call\s+trio/_core/_run.py:\d+ reschedule", out), out


def test_startup_measures_imports_and_models() -> None:
    out = bench("startup.py", "--runs", "2")
    (figures,) = rows(out, str(ROOT)).values()
    assert len(figures) == 3 and all(f > 0 for f in figures), out
    models = bench("startup.py", "--models")
    assert re.search(r"import trio_mcp creates \d+ models", models), models
