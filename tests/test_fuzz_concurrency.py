"""The fuzzer keeps calls in flight, ends on time, and finds what hides in a substring.

- A correct server whose ``slow`` tool takes 300 ms (tests/fuzz_targets/slow_tool.py,
  which logs every slow call it answers): the fuzzer holds several of its calls at once,
  and examples overlap (one ends in the background while the next runs). Both are
  read from the server's own log, not from the clock.
- The time budget ends a run on time, even with a request in flight whose deadline is
  far away, with exit status 0 (nothing failed) and the number of examples reached.
- A server that never answers when a string holds ``{{``
  (tests/fuzz_targets/hangs_on_template.py) is caught as a hang, and its reproduction,
  replayed, hangs again.

Everything goes through the real command line; the runs are started together and
awaited together, to keep the wall time down.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import attrs
import pytest
import trio
import trio.testing

from trio_mcp._fuzz._probe import Catalogue
from trio_mcp._fuzz._report import Progress
from trio_mcp._fuzz._runner import DEFAULT_TIME_BUDGET, FuzzSettings
from trio_mcp._fuzz._runtime import BudgetExhausted, Runtime

ROOT = Path(__file__).resolve().parent.parent
TARGETS = ROOT / "tests" / "fuzz_targets"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

#: The most calls today's rules could hold at once if each tool call were waited for
#: (the ``cancel`` rule starts up to three before it cancels them).
SEQUENTIAL_MOST = 3
BUDGET = 6.0


@attrs.frozen
class Run:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    directory: Path

    def report(self) -> dict[str, object]:
        data = json.loads((self.directory / "report.json").read_text())
        assert isinstance(data, dict)
        return data


def _command(name: str) -> str:
    return f"{sys.executable} {TARGETS / name}.py"


def _start(directory: Path, *args: str) -> tuple[subprocess.Popen[str], float]:
    directory.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-m", "trio_mcp", *args],
        cwd=directory,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return process, time.monotonic()


def _wait(started: tuple[subprocess.Popen[str], float], directory: Path, limit: float) -> Run:
    process, began = started
    try:
        out, err = process.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        return Run(-1, out, err + "\n(timed out)", time.monotonic() - began, directory)
    return Run(process.returncode, out, err, time.monotonic() - began, directory)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    base = tmp_path_factory.mktemp("concurrency")
    slow_log = base / "slow.log"
    quick = ["--quiet", "--report", "report.json", "--startup-timeout", "5"]
    started = {
        # A correct server with a 300 ms tool: every example's calls are answered.
        "slow": _start(
            base / "slow",
            "fuzz", "--stdio", _command("slow_tool"), "--env", f"FUZZ_SLOW_LOG={slow_log}",
            "--max-examples", "40", "--seed", "1", "--deadline", "3", "--time-budget", "0",
            *quick,
        ),
        # A deadline far beyond the budget, and a tool that hangs on zero: the budget must
        # end the run while calls are still owed, without waiting for their deadline.
        "budget": _start(
            base / "budget",
            "fuzz", "--stdio", _command("hangs_on_zero"), "--max-examples", "100000",
            "--seed", "1", "--deadline", "60", "--time-budget", str(BUDGET), *quick,
        ),
        "template": _start(
            base / "template",
            "fuzz", "--stdio", _command("hangs_on_template"), "--max-examples", "200",
            "--seed", "4", "--deadline", "1", "--shrink-budget", "5",
            "--minimize-budget", "15", *quick,
        ),
    }  # fmt: skip
    # Each awaited in a thread of its own, so that each run's time is its own.
    with ThreadPoolExecutor(len(started)) as pool:
        waits = {name: pool.submit(_wait, run, base / name, 240) for name, run in started.items()}
        return {name: wait.result() for name, wait in waits.items()}


def _slow_calls(directory: Path) -> list[tuple[int, float, float, int]]:
    """The slow tool's log: (pid, came, answered, calls held once it came) per answer."""
    lines = (directory.parent / "slow.log").read_text().split()
    fields = [lines[i : i + 4] for i in range(0, len(lines), 4)]
    return [(int(p), float(c), float(a), int(h)) for p, c, a, h in fields]


def test_slow_tool_calls_are_kept_in_flight(runs: dict[str, Run]) -> None:
    run = runs["slow"]
    assert run.returncode == 0, run.stdout + run.stderr
    assert "no invariant failed" in run.stdout
    calls = _slow_calls(run.directory)
    # Seen from the server: more calls held at once than waiting for each tool call (as
    # the fuzzer did) ever allowed.
    assert max(held for *_, held in calls) > SEQUENTIAL_MOST, calls
    # And examples overlap: a slow call of one process was still being answered while
    # another process (a later example) had one under way. Waiting for each example's
    # answers before starting the next cannot do that.
    overlapping = [
        (one, two)
        for one in calls
        for two in calls
        if one[0] != two[0] and one[1] < two[1] < one[2]
    ]
    assert overlapping, calls
    assert run.report()["examples"] >= 40


def test_the_time_budget_ends_the_run_on_time(runs: dict[str, Run]) -> None:
    run = runs["budget"]
    assert run.returncode == 0, run.stdout + run.stderr
    # On time: the budget, plus starting Python and shutting the servers down; far less
    # than the 60 s deadline of the calls still in flight.
    assert run.seconds < BUDGET + 20, run.stdout
    report = run.report()
    assert report["stopped"] == "time budget"
    examples = report["examples"]
    assert isinstance(examples, int) and examples >= 1
    assert f"(time budget spent: reached {examples} of 100000 examples)" in run.stdout
    assert "no invariant failed" in run.stdout


def test_the_default_time_budget() -> None:
    # Finite, and the same for the command line and the library.
    assert DEFAULT_TIME_BUDGET == 120
    assert FuzzSettings().time_budget == DEFAULT_TIME_BUDGET  # what fuzz() runs with
    run = subprocess.run(
        [sys.executable, "-m", "trio_mcp", "fuzz", "--help"],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=60,
    )
    assert "(default 120; 0: no limit)" in " ".join(run.stdout.split()), run.stdout


def test_a_hang_on_a_substring_is_caught_and_replays(runs: dict[str, Run]) -> None:
    run = runs["template"]
    assert run.returncode == 1, run.stdout + run.stderr
    failure = next(f for f in run.report()["failures"] if f["invariant"] == "request-answered")  # type: ignore[attr-defined]
    assert failure["detail"].startswith("hang: no answer to tools/call"), failure
    assert failure["reproduced"] is True
    path = run.directory / "trio-mcp-fuzz" / "request-answered.jsonl"
    sent = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    calls = [s["send"] for s in sent if s.get("send", {}).get("method") == "tools/call"]
    assert calls and "{{" in calls[-1]["params"]["arguments"]["text"], sent
    # Replayed against a fresh server, it hangs again.
    replay = subprocess.run(
        [sys.executable, "-m", "trio_mcp", "replay", str(path), "--stdio",
         _command("hangs_on_template")],
        capture_output=True, text=True, env=ENV, timeout=60,
    )  # fmt: skip
    assert replay.returncode == 1, replay.stdout + replay.stderr
    assert "FAILED request-answered [MUST]: hang: no answer to tools/call" in replay.stdout
    assert "recorded violation request-answered: reproduced" in replay.stdout


def _spent_runtime() -> Runtime:
    """A Runtime whose time budget ran out already (nothing of it is opened)."""

    class NoOpener:
        transport = "stdio"

    return Runtime(
        opener=NoOpener(),  # type: ignore[arg-type]
        catalogue=Catalogue(eras={}),
        progress=Progress(None),
        strict=False,
        per_run=False,
        budget_end=time.monotonic() - 1,
        shrink_budget=0,
        max_message_size=1 << 20,
    )


def test_a_run_cut_by_its_budget_says_so_even_when_hypothesis_keeps_the_exception() -> None:
    # Hypothesis does not always let BudgetExhausted back out: raised while it shrinks or
    # replays an example, it may be reported as another failure or as flakiness, or
    # swallowed. The report must still say the budget ended the run (it said "done").
    runtime = _spent_runtime()

    def test_that_swallows() -> None:
        with pytest.raises(BudgetExhausted):
            runtime.call(trio.lowlevel.checkpoint)

    runtime.run_test(test_that_swallows)
    assert runtime.stopped == "time budget"


def test_a_run_that_ends_by_itself_is_done() -> None:
    runtime = _spent_runtime()
    runtime.run_test(lambda: None)
    assert runtime.stopped == "done"


async def test_a_call_cut_by_the_budget_says_so_even_when_hypothesis_keeps_the_exception(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # The race of the flake, made deterministic: the budget runs out *while* a call into
    # Trio is waiting (a tool call that never ends), and Hypothesis, shrinking or replaying
    # at that moment, keeps the BudgetExhausted it raised. The autojump clock moves the
    # call's budget (an hour) at once; nothing sleeps for real.
    runtime = _spent_runtime()
    runtime.budget_end = time.monotonic() + 3600

    def test_that_swallows() -> None:
        with pytest.raises(BudgetExhausted):
            runtime.call(trio.sleep_forever)

    await trio.to_thread.run_sync(runtime.run_test, test_that_swallows)
    assert runtime.stopped == "time budget"
