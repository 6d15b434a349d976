"""The fuzzer against deliberately broken servers (tests/fuzz_targets/): it must catch each
one, shrink it to a short reproduction, and ``trio-mcp replay`` must reproduce it; a
correct server must pass.

Everything goes through the real command line. The fuzzing runs, then the replays,
run concurrently (one process each) to keep the wall time down; each test below
checks one server's outcome.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import attrs
import pytest

ROOT = Path(__file__).resolve().parent.parent
TARGETS = ROOT / "tests" / "fuzz_targets"
SPEC_DIR = Path(os.environ.get("TRIO_MCP_SPEC_DIR", ROOT.parent / "shared" / "spec"))
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

#: Each broken server, the requirements its bug breaks (the first is the one it is
#: written to break; a wrongly echoed id can also collide with an answered one), and the
#: most messages its reproduction may need (a cancellation needs the call, the cancel and
#: a later request).
BROKEN = {
    "answers_after_cancel": (("cancelled-request-not-answered",), 5),
    "wrong_unknown_method_code": (("method-not-found-code",), 3),
    "crashes_on_bad_json": (("server-alive",), 3),
    "hangs_on_zero": (("request-answered",), 3),
    "logs_to_stdout": (("valid-jsonrpc-only",), 3),
    "breaks_output_schema": (("structured-content-matches-output-schema",), 3),
    "echoes_wrong_id": (("response-id-matches-request", "one-response-per-request"), 3),
}
#: The budget, the same for every server. It is counted in examples, not seconds, so that
#: a busy machine makes the run slower, not weaker (the time budget is only a safety net);
#: with the seed fixed, the run sends the same messages every time.
FUZZ_OPTIONS = [
    "--max-examples", "15",
    "--max-steps", "20",
    "--seed", "1",
    "--deadline", "1",
    "--startup-timeout", "2",
    "--cancel-wait", "0.3",
    "--time-budget", "150",
    "--shrink-budget", "3",
    "--minimize-budget", "12",
    "--quiet",
]  # fmt: skip

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


@attrs.frozen
class Outcome:
    returncode: int
    stdout: str
    stderr: str
    report: dict[str, Any] | None
    replay: subprocess.CompletedProcess[str] | None


def _command(name: str) -> str:
    return f"{sys.executable} {TARGETS / name}.py"


def _spawn(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "trio_mcp", *args],
        cwd=cwd,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(process: subprocess.Popen[str], deadline: float) -> tuple[int, str, str]:
    try:
        out, err = process.communicate(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        return -1, out, err + "\n(timed out)"
    return process.returncode, out, err


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    base = tmp_path_factory.mktemp("fuzz")
    spec = ["--spec-dir", str(SPEC_DIR)] if SPEC_DIR.exists() else []
    runs = {}
    for name in [*BROKEN, "good"]:
        directory = base / name
        directory.mkdir()
        runs[name] = _spawn(
            ["fuzz", "--stdio", _command(name), *FUZZ_OPTIONS, *spec, "--report", "report.json"],
            directory,
        )
    deadline = time.monotonic() + 200
    finished = {name: _finish(process, deadline) for name, process in runs.items()}
    replays = {}
    for name, (invariants, _) in BROKEN.items():
        for invariant in invariants:
            path = base / name / "trio-mcp-fuzz" / f"{invariant}.jsonl"
            if path.exists():
                replays[name] = _spawn(
                    ["replay", str(path), "--stdio", _command(name), *spec], base / name
                )
                break
    deadline = time.monotonic() + 80
    replayed = {name: _finish(process, deadline) for name, process in replays.items()}
    results = {}
    for name, (code, out, err) in finished.items():
        report_path = base / name / "report.json"
        report = json.loads(report_path.read_text()) if report_path.exists() else None
        replay = None
        if name in replayed:
            replay = subprocess.CompletedProcess([], *replayed[name])
        results[name] = Outcome(code, out, err, report, replay)
    return results


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_each_broken_server_is_caught_shrunk_and_replayed(
    outcomes: dict[str, Outcome], name: str
) -> None:
    invariants, most = BROKEN[name]
    outcome = outcomes[name]
    assert outcome.returncode == 1, outcome.stdout + outcome.stderr
    assert outcome.report is not None, outcome.stderr
    assert not outcome.report["ok"]
    failed = {f["invariant"]: f for f in outcome.report["failures"]}
    caught = [i for i in invariants if i in failed]
    assert caught, outcome.stdout
    invariant = caught[0]
    failure = failed[invariant]
    # Shrunk: a handful of messages at most (the handshake, when the era is legacy, aside).
    handshake = 2 if failure["era"] == "legacy" else 0
    assert failure["messagesSent"] <= most + handshake, outcome.stdout
    assert failure["reproduced"] is True, outcome.stdout
    assert f"FAILED {invariant}" in outcome.stdout
    # The reproduction replays, and shows the violation again.
    replay = outcome.replay
    assert replay is not None
    assert replay.returncode == 1, replay.stdout + replay.stderr
    assert f"FAILED {invariant}" in replay.stdout
    assert f"recorded violation {invariant}: reproduced" in replay.stdout


def test_a_correct_server_passes(outcomes: dict[str, Outcome]) -> None:
    outcome = outcomes["good"]
    assert outcome.returncode == 0, outcome.stdout + outcome.stderr
    assert outcome.report is not None
    assert outcome.report["ok"]
    assert outcome.report["failures"] == []
    assert outcome.report["examples"] >= 15
    assert set(outcome.report["eras"]) == {"legacy", "modern"}
    # The run really exercised the server: most rules ran.
    assert len(outcome.report["rules"]) >= 15, outcome.report["rules"]
    assert "no invariant failed" in outcome.stdout
