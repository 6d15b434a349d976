"""CI fuzzes our own everything server, over stdio and over HTTP, and it must pass.

Budgets are small here (the ``ci`` Hypothesis profile); ``HYPOTHESIS_PROFILE=deep``
multiplies them for a long run.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from trio_mcp.fuzz import FuzzReport, HttpTarget, StdioTarget, fuzz

ROOT = Path(__file__).resolve().parent.parent
SPEC_DIR = Path(os.environ.get("TRIO_MCP_SPEC_DIR", ROOT.parent / "shared" / "spec"))
TARGETS = ROOT / "tests" / "fuzz_targets"

EVERYTHING_SERVER = ROOT / "examples" / "everything_server.py"
#: Serves it on 127.0.0.1 (a free port) and names its URL on stderr.
HTTP_SERVER_COMMAND = [sys.executable, str(EVERYTHING_SERVER), "--http", "0"]

ENV = {"PYTHONPATH": os.pathsep.join([str(ROOT), str(TARGETS)])}

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


def examples(ci: int) -> int:
    """``ci`` examples under the default profile, many more under ``deep``."""
    return ci if settings.default.max_examples <= 100 else ci * 20


def spec_dir() -> Path | None:
    return SPEC_DIR if SPEC_DIR.exists() else None


def passed(report: FuzzReport) -> None:
    assert not report.failures, report.summary()
    assert report.examples >= 1
    print(report.summary())


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_our_server_over_stdio(version: str) -> None:
    target = StdioTarget(
        command=[sys.executable, str(EVERYTHING_SERVER)], env=ENV, process="per-run"
    )
    report = await fuzz(
        target,
        protocol_version=version,
        max_examples=examples(12),
        seed=20260728,
        deadline=5,
        cancel_wait=0.3,
        time_budget=90,
        spec_dir=spec_dir(),
    )
    passed(report)
    assert report.eras == (("modern",) if version == "2026-07-28" else ("legacy",))
    assert len(report.rules) >= 10, report.rules


async def test_our_server_with_a_process_per_example() -> None:
    target = StdioTarget(command=[sys.executable, str(EVERYTHING_SERVER)], env=ENV)
    report = await fuzz(
        target,
        max_examples=examples(4),
        seed=7,
        deadline=5,
        cancel_wait=0.3,
        time_budget=60,
        spec_dir=spec_dir(),
    )
    passed(report)
    assert set(report.eras) == {"legacy", "modern"}


@pytest.fixture
def http_url(tmp_path: Path) -> Iterator[str]:
    log = tmp_path / "server.err"
    with log.open("w") as stderr:
        process = subprocess.Popen(
            HTTP_SERVER_COMMAND,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            env={**os.environ, **ENV},
        )
    try:
        deadline = time.monotonic() + 20
        while (found := re.search(r"http://127\.0\.0\.1:\d+/mcp", log.read_text())) is None:
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.05)
        yield found.group()
    finally:
        process.terminate()
        # SIGTERM is a graceful shutdown, not a crash.
        assert process.wait(10) == 0, log.read_text()[-2000:]


async def test_our_server_over_http(http_url: str) -> None:
    report = await fuzz(
        HttpTarget(url=http_url),
        # (More than over stdio: an example runs a random subset of the rules, and the
        # HTTP-only ones must be among them.)
        max_examples=examples(30),
        # (A seed whose run reaches every HTTP rule: with a fixed seed the rules run are
        # the same every time, see test_fuzz_runs.py.)
        seed=1,
        deadline=5,
        cancel_wait=0.3,
        time_budget=90,
        spec_dir=spec_dir(),
    )
    passed(report)
    assert set(report.eras) == {"legacy", "modern"}
    # The HTTP-only rules ran: headers, and the session's GET, resumption and DELETE.
    assert "http_headers" in report.rules
    assert "http_session" in report.rules, report.rules
