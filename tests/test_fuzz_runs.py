"""Whole fuzzing runs in this process against the tiny correct server (tests/fuzz_targets/good.py):
the same seed sends the same messages, and ``process="per-run"`` fuzzes both eras.

Every connection the fuzzer opens is recorded (by wrapping :meth:`Opener.open`), so a test
can read exactly what was sent on each, in the order the connections were opened.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from trio_mcp._fuzz._connection import Connection
from trio_mcp._fuzz._opener import Opener
from trio_mcp._fuzz._runtime import Runtime
from trio_mcp._fuzz._steps import Send, step_to_json
from trio_mcp.fuzz import FuzzReport, StdioTarget, fuzz

GOOD = Path(__file__).resolve().parent / "fuzz_targets" / "good.py"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[Connection]:
    """Every connection the fuzzer opens (probes, examples, replays), in order."""
    connections: list[Connection] = []
    original = Opener.open

    async def open_and_record(self: Opener, era: str) -> Connection:
        connection = await original(self, era)
        connections.append(connection)
        return connection

    monkeypatch.setattr(Opener, "open", open_and_record)
    return connections


def sent(connections: list[Connection]) -> list[list[dict[str, Any]]]:
    """What went out on each connection: every step that sends, as its reproduction line."""
    return [[step_to_json(s) for s in c.steps if isinstance(s, Send)] for c in connections]


async def run(seed: int, **options: Any) -> FuzzReport:
    return await fuzz(
        StdioTarget(command=[sys.executable, str(GOOD)], **options),
        max_examples=12,
        max_steps=12,
        seed=seed,
        deadline=5,
        startup_timeout=10,
        cancel_wait=0.2,
        # Generous: no run may be cut short by time, so that nothing but the seed (and the
        # server's answers, which the tiny server gives deterministically) decides what
        # is sent.
        time_budget=150,
    )


async def test_the_same_seed_sends_the_same_messages(opened: list[Connection]) -> None:
    first = await run(1234)
    first_sent = sent(opened)
    opened.clear()
    second = await run(1234)
    second_sent = sent(opened)
    opened.clear()
    other = await run(4321)
    other_sent = sent(opened)

    assert first.ok and second.ok and other.ok, first.summary()
    assert first.examples == second.examples >= 12
    # Message for message, connection for connection, probes included: every request,
    # id, argument, malformed byte and HTTP-free pause.
    assert len(first_sent) == len(second_sent)
    for number, (one, two) in enumerate(zip(first_sent, second_sent, strict=True)):
        assert one == two, f"connection {number} differs"
    assert sum(len(c) for c in first_sent) > 50
    assert first.rules == second.rules
    # (And the seed is what decides: another one sends something else.)
    assert other_sent != first_sent


async def test_one_process_per_era_for_the_whole_run(monkeypatch: pytest.MonkeyPatch) -> None:
    # The connections the state machine opens for its examples (not the probes').
    eras: list[str] = []
    original = Runtime._open_connection

    async def open_for_examples(self: Runtime, era: str) -> Connection:
        eras.append(era)
        return await original(self, era)

    monkeypatch.setattr(Runtime, "_open_connection", open_for_examples)
    report = await run(99, process="per-run")
    assert report.ok, report.summary()
    # Both eras fuzzed (the legacy one used to be dropped when the server spoke both)...
    assert set(report.eras) == {"legacy", "modern"}
    assert report.rules.get("initialize_", 0) >= 1 and report.rules.get("discover", 0) >= 1
    # ...each on one process kept for the whole run: twelve examples, two processes.
    assert report.examples >= 12
    assert sorted(eras) == ["legacy", "modern"]
