"""The fuzzer's identity scan: acting as two principals (bearer tokens), it catches a server
whose sessions are not bound to the principal that opened them and one whose tasks anyone
may read with sequential ids (tests/fuzz_targets/identity_server.py), and finds nothing
against trio_mcp's own server, which binds both. Identities come from ``--identity``
options or a strictly parsed file, and never show their headers' values."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio

from trio_mcp._fuzz._guessable import guessable_ids
from trio_mcp._fuzz._identity_scan import scan_identities
from trio_mcp._fuzz._probe import Catalogue, EraCatalogue
from trio_mcp._fuzz._report import FuzzReport
from trio_mcp._fuzz._wire import Exchange, Wire
from trio_mcp.fuzz import (
    HttpTarget,
    Identity,
    IdentityError,
    fuzz,
    load_identities,
    parse_identity_options,
)

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "fuzz_targets" / "identity_server.py"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
IDENTITIES = parse_identity_options(
    ["alice:Authorization=Bearer alice-token", "bob:Authorization=Bearer bob-token"]
)

# -- identities from options and files -------------------------------------------------------


def test_options_add_up_per_identity_and_hide_their_values() -> None:
    identities = parse_identity_options(
        ["alice:Authorization=Bearer a", "bob:Authorization=Bearer b", "alice:X-Tenant=t1"]
    )
    assert identities == (
        Identity(name="alice", headers={"Authorization": "Bearer a", "X-Tenant": "t1"}),
        Identity(name="bob", headers={"Authorization": "Bearer b"}),
    )
    assert "Bearer a" not in repr(identities)


@pytest.mark.parametrize(
    ("option", "complaint"),
    [
        ("alice", "expected NAME:HEADER=VALUE"),
        ("alice:Authorization", "expected NAME:HEADER=VALUE"),
        ("al ice:Authorization=x", "is not an identity name"),
        ("alice:Bad Header=x", "is not a header name"),
        ("alice:Authorization=Bearer é", "a header value is visible ASCII"),
        ("alice:Authorization=a\nb", "a header value is visible ASCII"),
    ],
)
def test_a_malformed_option_is_refused_saying_why(option: str, complaint: str) -> None:
    with pytest.raises(IdentityError, match=complaint):
        parse_identity_options([option])


def test_a_header_given_twice_is_refused() -> None:
    with pytest.raises(IdentityError, match="header authorization given twice"):
        parse_identity_options(["a:Authorization=x", "a:authorization=y"])


def test_a_toml_or_json_file_gives_the_same_identities(tmp_path: Path) -> None:
    toml = tmp_path / "ids.toml"
    toml.write_text(
        '[identities.alice.headers]\nAuthorization = "Bearer alice-token"\n'
        '[identities.bob.headers]\nAuthorization = "Bearer bob-token"\n'
    )
    json = tmp_path / "ids.json"
    json.write_text(
        '{"identities": {"alice": {"headers": {"Authorization": "Bearer alice-token"}},'
        ' "bob": {"headers": {"Authorization": "Bearer bob-token"}}}}'
    )
    assert load_identities(toml) == load_identities(json) == IDENTITIES


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ('{"identity": {}}', "unknown key 'identity'"),
        ('{"identities": {"alice": {"header": {}}}}', "identities.alice: unknown key 'header'"),
        ('{"identities": {"alice": {"headers": {"A": 1}}}}', r"headers.A: expected a string"),
        ('{"identities": {"alice": {"headers": {}}}}', r"identities.alice.headers: expected"),
        ('{"identities": []}', "identities: expected a table"),
        ("{not json", "ids.json"),
    ],
)
def test_a_bad_file_is_refused_naming_the_key(tmp_path: Path, text: str, complaint: str) -> None:
    path = tmp_path / "ids.json"
    path.write_text(text)
    with pytest.raises(IdentityError, match=complaint):
        load_identities(path)


# -- guessable task ids ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ids", "why"),
    [
        (["1", "2", "3"], "sequential"),
        (["task-0007", "task-0008", "task-0009"], "sequential"),
        (["task-10-a", "task-12-a", "task-14-a"], "sequential"),
        (["a1b2c3", "9f8e7d", "0a0b0c"], "bits of entropy"),
        (["job-4fa", "job-91c", "job-0d2"], "bits of entropy"),
    ],
)
def test_guessable_ids_are_told_why(ids: list[str], why: str) -> None:
    assert why in (guessable_ids(ids) or "")


def test_random_ids_are_not_guessable() -> None:
    assert guessable_ids([str(uuid.uuid4()) for _ in range(3)]) is None
    assert guessable_ids([uuid.uuid4().hex for _ in range(3)]) is None
    assert guessable_ids(["task-" + uuid.uuid4().hex for _ in range(3)]) is None


# -- against servers ---------------------------------------------------------------------------


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[str]:
    bug = getattr(request, "param", None)
    process = subprocess.Popen(
        [sys.executable, str(SERVER), *([bug] if bug else [])],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=ENV,
    )
    assert process.stdout is not None
    try:
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        yield url
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


async def scan(url: str, **options: Any) -> FuzzReport:
    return await fuzz(
        HttpTarget(url=url),
        identities=IDENTITIES,
        max_examples=2,
        max_steps=3,
        seed=1,
        verify=False,
        time_budget=30,
        **options,
    )


def found(report: FuzzReport) -> dict[str, str]:
    return {f.invariant: f.detail for f in (*report.failures, *report.warnings)}


@pytest.mark.slow
@pytest.mark.timeout(120)
async def test_a_server_binding_sessions_and_tasks_passes(server: str) -> None:
    report = await scan(server)
    assert not [name for name in found(report) if name.startswith("identity-")], found(report)
    # Everything was crossed; only the expiry of states is left (no --state-ttl given).
    unchecked = [n for n in report.notes if n.startswith("identities:")]
    assert [n for n in unchecked if "--state-ttl" not in n] == [], report.notes


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize("server", ["shared-sessions"], indirect=True)
async def test_a_session_usable_by_another_principal_is_caught(server: str) -> None:
    report = await scan(server)
    findings = found(report)
    assert "identity-session-bound" in findings
    assert (
        "bob's POST with alice's Mcp-Session-Id was answered" in findings["identity-session-bound"]
    )
    assert "identity-task-bound" not in findings
    failure = next(f for f in report.failures if f.invariant == "identity-session-bound")
    assert failure.received  # the transcript, naming identities...
    assert "bob-token" not in str(report.to_json())  # ...never their tokens


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize("server", ["guessable-tasks"], indirect=True)
async def test_tasks_readable_by_anyone_with_sequential_ids_are_caught(server: str) -> None:
    report = await scan(server)
    findings = found(report)
    assert "was answered with a result" in findings["identity-task-bound"]
    assert "sequential" in findings["identity-task-id-unguessable"]
    assert "with alice's requestState was taken" in findings["identity-request-state-bound"]
    assert "was agreed to" in findings["identity-subscription-bound"]
    crossed = {(f.invariant, f.era) for f in report.failures}  # MUSTs
    # Both the 2026-07-28 extension's tasks and 2025-11-25's core tasks (in sessions):
    assert {("identity-task-bound", "modern"), ("identity-task-bound", "legacy")} <= crossed


# -- from the command line ---------------------------------------------------------------------


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trio_mcp", "fuzz", *args],
        capture_output=True,
        text=True,
        env=ENV,
        cwd=cwd,
        timeout=60,
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("options", "error"),
    [
        (["--identity", "alice"], "--identity 'alice'...: expected NAME:HEADER=VALUE"),
        (["--identities", "ids.json"], "ids.json: identities.alice: unknown key 'token'"),
        (["--identities", "missing.toml"], "--identities: [Errno 2]"),
        (["--identity", "alice:A=1", "--identities", "good.json"], "identity 'alice' is given"),
        (["--leak-requests", "-1"], "--leak-requests must be >= 0, not -1"),
        (["--state-ttl", "0"], "--state-ttl must be above 0 and at most 3600 s, not 0"),
    ],
)
def test_bad_identities_are_refused_before_anything_runs(
    options: list[str], error: str, tmp_path: Path
) -> None:
    (tmp_path / "ids.json").write_text('{"identities": {"alice": {"token": "x"}}}')
    (tmp_path / "good.json").write_text('{"identities": {"alice": {"headers": {"A": "x"}}}}')
    run = cli("--url", "http://127.0.0.1:9/mcp", *options, cwd=tmp_path)
    assert run.returncode == 1
    assert run.stderr.startswith(f"trio-mcp: {error}"), run.stderr


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize("server", ["shared-sessions"], indirect=True)
def test_the_command_line_scans_as_two_identities(server: str, tmp_path: Path) -> None:
    ids = tmp_path / "ids.toml"
    ids.write_text('[identities.bob.headers]\nAuthorization = "Bearer bob-token"\n')
    run = cli(
        "--url",
        server,
        "--identity",
        "alice:Authorization=Bearer alice-token",
        "--identities",
        str(ids),
        "--max-examples",
        "2",
        "--no-verify",
        "--seed",
        "1",
        "--quiet",
        cwd=tmp_path,
    )
    assert run.returncode == 1, run.stderr
    assert (
        "FAILED identity-session-bound [MUST, identity, CWE-639, legacy]: bob's POST" in run.stdout
    )
    assert "alice-token" not in run.stdout + run.stderr


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize("server", ["forbidden"], indirect=True)
async def test_a_refusal_that_confirms_the_session_exists_is_caught(server: str) -> None:
    report = await scan(server)
    findings = found(report)
    assert "identity-session-bound" not in findings
    assert "status 403 and code -32600" in findings["identity-refusal-not-found"]
    assert "with status 404" in findings["identity-refusal-not-found"]


def test_each_identity_gets_the_shared_headers_but_never_anothers() -> None:
    from trio_mcp._fuzz._scan import _with_shared

    alice = Identity(name="alice", headers={"Authorization": "Bearer a"})
    bob = Identity(name="bob", headers={"X-Api-Key": "b"})
    # The target's headers: the user's own (--header), and alice's, as the examples send.
    target = {"X-Tenant": "t", "authorization": "Bearer a"}
    assert _with_shared([alice, bob], target) == [
        Identity(name="alice", headers={"X-Tenant": "t", "Authorization": "Bearer a"}),
        Identity(name="bob", headers={"X-Tenant": "t", "X-Api-Key": "b"}),
    ]


class ScriptedTasks(Wire):
    """A 2026-07-28 server's tasks, scripted: alice's tool call makes a task; tasks/get and
    tasks/update of a task not one's own are refused as unknown; tasks/cancel is
    acknowledged for any id (known or not) and cancels only one's own tasks, or, with
    ``cancels_anyones``, anyone's."""

    def __init__(self, *, cancels_anyones: bool) -> None:
        super().__init__(None, "http://127.0.0.1:9/mcp", "modern", "2026-07-28", window=1.0)  # type: ignore[arg-type]
        self.cancels_anyones = cancels_anyones
        self.tasks: dict[str, tuple[str, str]] = {}  # id -> (owner, status)

    async def post(self, message: dict[str, Any], identity: Any, **_: Any) -> Exchange:
        await trio.lowlevel.checkpoint()
        who = identity["Authorization"]
        method, params = message.get("method"), message.get("params") or {}
        if method == "notifications/cancelled":
            return Exchange(status=202)
        if method == "tools/call":
            task_id = uuid.uuid4().hex
            self.tasks[task_id] = (who, "working")
            result: dict[str, Any] = {"resultType": "task", "taskId": task_id}
        else:
            task = self.tasks.get(params.get("taskId"))
            mine = task is not None and task[0] == who
            if method == "tasks/cancel":
                if task is not None and (mine or self.cancels_anyones):
                    self.tasks[params["taskId"]] = (task[0], "cancelled")
                result = {"resultType": "complete"}
            elif not mine or task is None:
                error = {"code": -32602, "message": "unknown task"}
                return Exchange(
                    status=200, messages=({"jsonrpc": "2.0", "id": message["id"], "error": error},)
                )
            else:
                result = {"taskId": params["taskId"], "status": task[1]}
        return Exchange(
            status=200, messages=({"jsonrpc": "2.0", "id": message["id"], "result": result},)
        )


TASKS_ONLY = Catalogue(
    eras={
        "modern": EraCatalogue(
            era="modern",
            version="2026-07-28",
            capabilities={"extensions": {"io.modelcontextprotocol/tasks": {}}},
            tools=({"name": "work", "inputSchema": {"type": "object"}},),
        )
    }
)


@pytest.mark.parametrize("cancels_anyones", [False, True])
async def test_acknowledging_every_cancel_is_no_crossing_unless_it_cancels(
    cancels_anyones: bool,
) -> None:
    wire = ScriptedTasks(cancels_anyones=cancels_anyones)
    findings, _ = await scan_identities({"modern": wire}, IDENTITIES, TASKS_ONLY)
    found = {f.invariant: f.detail for f in findings}
    if cancels_anyones:
        assert "and after bob's tasks/cancel it is cancelled" in found["identity-task-bound"]
    else:
        assert "identity-task-bound" not in found, found


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize("server", ["short-state-ttl"], indirect=True)
async def test_a_state_past_its_lifetime_is_refused(server: str) -> None:
    """The server's states live 1 s: offered 2.6 s later, the owner's own state is
    refused (a real wait: the fuzzer cannot forge an expired seal)."""
    report = await scan(server, checks=["identity"], state_ttl=1.0)
    assert "identity-request-state-bound" not in found(report), found(report)
    assert not [n for n in report.notes if "expired requestState" in n]


@pytest.mark.slow
@pytest.mark.timeout(120)
async def test_a_state_taken_past_the_lifetime_given_is_caught(server: str) -> None:
    """The server keeps states 10 minutes; told they live 1 s, the scan finds one taken
    past that. Without --state-ttl, a note says the expiry was not probed."""
    report = await scan(server, checks=["identity"], state_ttl=1.0)
    assert "completed with an expired state" in found(report)["identity-request-state-bound"]
    plain = await scan(server, checks=["identity"])
    assert "identity-request-state-bound" not in found(plain)
    assert any("expired requestState was not offered" in n for n in plain.notes), plain.notes
