"""The fuzzer and the tasks extension (``io.modelcontextprotocol/tasks``).

First the checker, fed by hand: each task invariant fires on the behaviour it forbids
and stays quiet on what the extension allows. Then whole runs through the command
line: a server whose ``tasks/cancel`` overwrites a completed task is caught, shrunk and
replayed; the tiny tasks server and our own task tools pass, with the task rules run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st
from test_fuzz_checker import MODERN_META, Harness

from trio_mcp._fuzz._rules_tasks import _plausible_response
from trio_mcp._fuzz._validate import Validator

ROOT = Path(__file__).resolve().parent.parent
TARGETS = ROOT / "tests" / "fuzz_targets"
SPEC_DIR = Path(os.environ.get("TRIO_MCP_SPEC_DIR", ROOT.parent / "shared" / "spec"))
TASKS = "io.modelcontextprotocol/tasks"
DECLARED = {
    **MODERN_META,
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}},
}


def task(status: str, **fields: Any) -> dict[str, Any]:
    return {
        "taskId": "t1",
        "status": status,
        "createdAt": "2026-07-28T00:00:00Z",
        "lastUpdatedAt": "2026-07-28T00:00:00Z",
        "ttlMs": 60000,
        **fields,
    }


class Tasks(Harness):
    """A modern harness that has a task ``t1`` created."""

    def __init__(self) -> None:
        super().__init__("modern")
        self.next_id = 100
        self.create()

    def ask(self, method: str, params: dict[str, Any], meta: Any = None) -> int:
        self.next_id += 1
        params = {**params, "_meta": DECLARED if meta is None else meta}
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def answer(self, id: int, result: dict[str, Any] | None = None, error: Any = None) -> None:
        if error is not None:
            self.receive({"jsonrpc": "2.0", "id": id, "error": error})
        else:
            self.receive({"jsonrpc": "2.0", "id": id, "result": result})

    def create(self, meta: Any = None) -> None:
        id = self.ask("tools/call", {"name": "slow", "arguments": {}}, meta)
        self.answer(id, {"resultType": "task", **task("working")})

    def get(self, result: dict[str, Any]) -> list[str]:
        self.answer(self.ask("tasks/get", {"taskId": "t1"}), {"resultType": "complete", **result})
        return self.failed()

    def cancel(self, result: dict[str, Any] | None = None, error: Any = None) -> list[str]:
        self.answer(self.ask("tasks/cancel", {"taskId": "t1"}), result, error)
        return self.failed()


RESULT = {"content": [{"type": "text", "text": "done"}]}


def test_a_correct_task_life_passes() -> None:
    h = Tasks()
    assert h.failed() == []
    assert h.get(task("working")) == []
    ask = {"q1": {"method": "elicitation/create", "params": {
        "mode": "form", "message": "name?", "requestedSchema": {"type": "object", "properties": {}}
    }}}  # fmt: skip
    assert h.get(task("input_required", inputRequests=ask)) == []
    assert h.get(task("working")) == []
    assert h.get(task("completed", result=RESULT)) == []
    assert h.get(task("completed", result=RESULT)) == []
    # Cancelling a finished task: an empty ack, twice, and the task stays completed.
    assert h.cancel({"resultType": "complete"}) == []
    assert h.cancel({"resultType": "complete"}) == []
    assert h.get(task("completed", result=RESULT)) == []


def test_a_terminal_status_that_changes_is_caught() -> None:
    h = Tasks()
    assert h.get(task("completed", result=RESULT)) == []
    assert h.get(task("working")) == ["task-status-forward"]


def test_an_unknown_status_is_caught() -> None:
    h = Tasks()
    assert "task-status-forward" in h.get(task("paused"))


def test_polls_that_may_have_crossed_are_not_ordered() -> None:
    # Two polls in flight at once: the second answer may carry the earlier state.
    h = Tasks()
    first = h.ask("tasks/get", {"taskId": "t1"})
    second = h.ask("tasks/get", {"taskId": "t1"})
    h.answer(first, {"resultType": "complete", **task("completed", result=RESULT)})
    h.answer(second, {"resultType": "complete", **task("working")})
    assert h.failed() == []


def test_a_result_that_changes_or_comes_early_is_caught() -> None:
    h = Tasks()
    assert h.get(task("working", result=RESULT)) == ["task-result-once"]
    assert h.get(task("completed", result=RESULT)) == []
    other = {"content": [{"type": "text", "text": "other"}]}
    assert h.get(task("completed", result=other)) == ["task-result-once"]
    assert "task-result-once" in Tasks().get(task("working", error={"code": 1, "message": "x"}))


def test_cancel_must_answer_an_empty_ack_every_time() -> None:
    h = Tasks()
    assert h.cancel({"resultType": "complete"}) == []
    assert h.cancel({"resultType": "complete", **task("cancelled")}) == ["task-cancel-ack"]
    error = {"code": -32602, "message": "already cancelled"}
    assert h.cancel(error=error) == ["task-cancel-ack"]


def test_a_task_unknown_right_after_creation_is_caught() -> None:
    h = Tasks()
    h.answer(h.ask("tasks/get", {"taskId": "t1"}), error={"code": -32602, "message": "unknown"})
    assert h.failed() == ["task-durable-create"]
    # After its ttlMs the server may forget it.
    h.now += 61
    h.answer(h.ask("tasks/get", {"taskId": "t1"}), error={"code": -32602, "message": "unknown"})
    assert h.failed() == []


def test_request_state_and_schema_are_checked() -> None:
    h = Tasks()
    assert h.get({**task("working"), "requestState": "abc"}) == ["task-no-request-state"]
    if (SPEC_DIR / "ext-tasks-schema.json").exists():
        broken = task("working")
        del broken["createdAt"]
        assert h.get(broken) == ["message-matches-schema"]


def test_a_task_for_a_client_that_did_not_declare_the_extension_is_caught() -> None:
    h = Tasks()
    h.create(meta=MODERN_META)
    assert h.failed() == ["only-negotiated-capabilities"]


# -- whole runs -----------------------------------------------------------------------------------

#: Modern only (tasks are a 2026-07-28 extension), seeded, and small.
FUZZ_OPTIONS = [
    "--protocol-version", "2026-07-28",
    "--max-examples", "40",
    "--max-steps", "20",
    "--seed", "1",
    "--deadline", "2",
    "--startup-timeout", "5",
    "--cancel-wait", "0.3",
    "--time-budget", "120",
    "--shrink-budget", "5",
    "--minimize-budget", "15",
    "--quiet",
]  # fmt: skip
#: Each broken server (tests/fuzz_targets/task_*.py): the invariant its bug breaks, the most
#: messages its shrunk reproduction may need (the calls that made the task, the polls
#: that saw it finish, the culprit, and a poll after it), and what the report says.
BROKEN = {
    "task_cancel_reopens": ("task-status-forward", 8, "a terminal status, and is now 'cancelled'"),
    "task_cancel_errors": ("task-cancel-ack", 8, "expected an empty acknowledgement"),
    "task_result_changes": ("task-result-once", 8, "result changed between two polls"),
    "task_capability_bare": ("missing-capability-error", 2, "without data.requiredCapabilities"),
}
TASK_RULES = ("call_tool_as_task", "poll_task", "cancel_task", "answer_task_input", "probe_tasks")


def _fuzz(target: str, directory: Path, *extra: str) -> subprocess.Popen[str]:
    spec = ["--spec-dir", str(SPEC_DIR)] if SPEC_DIR.exists() else []
    command = f"{sys.executable} {TARGETS / target}.py"
    options = [*FUZZ_OPTIONS, *extra, *spec, "--report", "report.json"]
    return subprocess.Popen(
        [sys.executable, "-m", "trio_mcp", "fuzz", "--stdio", command, *options],
        cwd=directory,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(TARGETS)])},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, str, dict[str, Any]]]:
    base = tmp_path_factory.mktemp("fuzz-tasks")
    targets: dict[str, tuple[str, ...]] = {
        **{name: () for name in BROKEN},
        "tasks_good": (),
        "own_tasks": ("--process", "per-run", "--deadline", "5"),
    }
    started = {}
    for name, extra in targets.items():
        (base / name).mkdir()
        started[name] = _fuzz(name, base / name, *extra)
    results = {}
    for name, process in started.items():
        try:
            out, err = process.communicate(timeout=200)
        except subprocess.TimeoutExpired:
            process.kill()
            out, err = process.communicate()
        report_path = base / name / "report.json"
        report = json.loads(report_path.read_text()) if report_path.exists() else {}
        results[name] = (process.returncode, out + err, report)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(TARGETS)])}
    for name, (invariant, _, _) in BROKEN.items():
        path = base / name / "trio-mcp-fuzz" / f"{invariant}.jsonl"
        if path.exists():
            command = f"{sys.executable} {TARGETS / name}.py"
            replay = subprocess.run(
                [sys.executable, "-m", "trio_mcp", "replay", str(path), "--stdio", command],
                cwd=base,
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
            )
            results[f"replay {name}"] = (replay.returncode, replay.stdout + replay.stderr, {})
    return results


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", sorted(BROKEN))
def test_each_broken_tasks_server_is_caught_shrunk_and_replayed(
    runs: dict[str, tuple[int, str, dict[str, Any]]], name: str
) -> None:
    invariant, most, detail = BROKEN[name]
    code, output, report = runs[name]
    assert code == 1, output
    failed = {f["invariant"]: f for f in report["failures"]}
    assert invariant in failed, output
    failure = failed[invariant]
    assert failure["reproduced"] is True, output
    assert failure["messagesSent"] <= most, output
    assert detail in output
    code, output, _ = runs[f"replay {name}"]
    assert code == 1, output
    assert f"recorded violation {invariant}: reproduced" in output


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", ["tasks_good", "own_tasks"])
def test_a_correct_tasks_server_passes(
    runs: dict[str, tuple[int, str, dict[str, Any]]], name: str
) -> None:
    code, output, report = runs[name]
    assert code == 0, output
    assert report["ok"] and report["failures"] == [], output
    assert report["warnings"] == [], output
    # The task rules really ran against it.
    assert all(report["rules"].get(rule, 0) > 0 for rule in TASK_RULES), report["rules"]


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_answers_to_input_requests_match_the_extension_schema(data: st.DataObject) -> None:
    validator = Validator(SPEC_DIR)
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
        "required": ["name"],
    }
    requests = {
        "ElicitResult": {
            "method": "elicitation/create",
            "params": {"mode": "form", "message": "Who?", "requestedSchema": schema},
        },
        "CreateMessageResult": {
            "method": "sampling/createMessage",
            "params": {"messages": [], "maxTokens": 10},
        },
        "ListRootsResult": {"method": "roots/list"},
    }
    for name, request in requests.items():
        answer = _plausible_response(request, data)
        assert validator.extension_problems(name, answer) == [], (name, answer)
    # (Without the schema file, the shapes at least.)
    elicited = _plausible_response(requests["ElicitResult"], data)
    assert elicited["action"] in ("accept", "decline", "cancel")
    if elicited["action"] == "accept":
        assert isinstance(elicited["content"].get("name"), str)
    assert _plausible_response(requests["ListRootsResult"], data) == {"roots": []}
    assert _plausible_response(requests["CreateMessageResult"], data)["role"] == "assistant"
