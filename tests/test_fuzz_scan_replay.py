"""Reproductions of the findings that steps cannot say (a fixed HTTP probe's, or a scan's
across identities or connections): the file names the probe or scan and what it ran
with (never an identity's headers), and a replay runs that one probe or scan again
against the target, saying whether the finding still holds: it does against the
vulnerable server, and not against the correct one."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
import pytest

from trio_mcp._fuzz._report import FuzzFailure, FuzzReport
from trio_mcp._fuzz._sarif import sarif_log
from trio_mcp.fuzz import HttpTarget, StdioTarget, fuzz, parse_identity_options, replay_reproduction

ROOT = Path(__file__).resolve().parent.parent
TARGETS = ROOT / "tests" / "fuzz_targets"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
IDENTITIES = parse_identity_options(
    ["alice:Authorization=Bearer alice-token", "bob:Authorization=Bearer bob-token"]
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


@contextmanager
def serving(*command: str) -> Iterator[str]:
    """A server of tests/fuzz_targets that prints its URL as the last word of its first
    line; stopped on the way out."""
    process = subprocess.Popen(
        [sys.executable, *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=ENV,
    )
    assert process.stdout is not None
    try:
        url = process.stdout.readline().split()[-1]
        assert url.startswith("http://127.0.0.1:"), url
        yield url
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


async def scan(target: HttpTarget | StdioTarget, tmp_path: Path, **options: Any) -> FuzzReport:
    settings: dict[str, Any] = {"max_examples": 1, "max_steps": 1, "seed": 1, "verify": False}
    return await fuzz(
        target,
        **{**settings, "strict": True, "time_budget": 60, "reproduction_dir": tmp_path, **options},
    )


def failure(report: FuzzReport, invariant: str) -> FuzzFailure:
    found = {f.invariant: f for f in report.failures}
    assert invariant in found, {name: f.detail for name, f in found.items()}
    return found[invariant]


def header(path: str) -> dict[str, Any]:
    first: dict[str, Any] = orjson.loads(Path(path).read_bytes().splitlines()[0])
    return first


async def test_a_probes_finding_replays_against_the_server_and_not_a_fixed_one(
    tmp_path: Path,
) -> None:
    server = str(TARGETS / "http_server.py")
    with serving(server, "no-body-limit") as url:
        report = await scan(
            HttpTarget(url=url), tmp_path, checks=["http"], max_body=6 * 1024 * 1024
        )
        found = failure(report, "http-body-limit")
        assert found.path is not None and not found.steps
        assert header(found.path)["rerun"]["probe"] == "body-limit"
        assert f"reproduction: {found.path} (runs body-limit again)" in report.summary()
        (result,) = [
            r for r in sarif_log(report)["runs"][0]["results"] if r["ruleId"] == "http-body-limit"
        ]
        assert "the body-limit probe). Replay it with: trio-mcp replay" in result["message"]["text"]
        again = await replay_reproduction(found.path, HttpTarget(url=url))
        assert again.reproduced, again.findings
    with serving(server) as url:  # the same server with its 4 MiB limit
        fixed = await replay_reproduction(found.path, HttpTarget(url=url))
        assert not fixed.reproduced, fixed.findings
    with pytest.raises(ValueError, match="an HTTP probe: replay it with --url"):
        await replay_reproduction(found.path, StdioTarget(command=[sys.executable, server]))


async def test_an_identity_finding_replays_given_the_identities_again(tmp_path: Path) -> None:
    server = str(TARGETS / "identity_server.py")
    with serving(server, "shared-sessions") as url:
        report = await scan(
            HttpTarget(url=url), tmp_path, checks=["identity"], identities=IDENTITIES
        )
        found = failure(report, "identity-session-bound")
        assert found.path is not None
        text = Path(found.path).read_text()
        assert "bob-token" not in text and "alice-token" not in text  # names only
        assert header(found.path)["rerun"]["identities"] == ["alice", "bob"]
        assert "bob's POST with alice's Mcp-Session-Id" in text  # the transcript, as notes
        with pytest.raises(ValueError, match=r"give 'bob' again with --identity"):
            await replay_reproduction(found.path, HttpTarget(url=url), identities=IDENTITIES[:1])
        again = await replay_reproduction(found.path, HttpTarget(url=url), identities=IDENTITIES)
        assert again.reproduced, again.findings
        assert again.received  # the new transcript
        # The command line, given the identities again.
        replay = subprocess.run(
            [
                *(sys.executable, "-m", "trio_mcp", "replay", found.path, "--url", url),
                *("--identity", "alice:Authorization=Bearer alice-token"),
                *("--identity", "bob:Authorization=Bearer bob-token"),
            ],
            capture_output=True,
            text=True,
            env=ENV,
            timeout=60,
        )
        assert replay.returncode == 1, replay.stdout + replay.stderr
        assert "recorded violation identity-session-bound: reproduced" in replay.stdout
    with serving(server) as url:
        fixed = await replay_reproduction(found.path, HttpTarget(url=url), identities=IDENTITIES)
        assert not fixed.reproduced, fixed.findings


async def test_a_cross_talk_finding_replays_against_the_server_and_not_a_fixed_one(
    tmp_path: Path,
) -> None:
    server = str(TARGETS / "concurrency_server.py")
    with serving(server, "--http", "mixed-answers") as url:
        report = await scan(
            HttpTarget(url=url), tmp_path, checks=["crosstalk"], crosstalk_clients=20
        )
        found = failure(report, "crosstalk-answer-own-request")
        assert found.path is not None
        assert header(found.path)["rerun"]["scan"] == "crosstalk"
        again = await replay_reproduction(found.path, HttpTarget(url=url))
        assert again.reproduced, again.findings
    with serving(server, "--http") as url:
        fixed = await replay_reproduction(found.path, HttpTarget(url=url))
        assert not fixed.reproduced, fixed.findings


async def test_a_leaks_finding_replays_over_stdio(tmp_path: Path) -> None:
    def target(*bug: str) -> StdioTarget:
        command = [sys.executable, str(TARGETS / "concurrency_server.py"), *bug]
        return StdioTarget(command=command, env=ENV)

    report = await scan(
        target("dies-under-load"), tmp_path, checks=["leaks"], leak_requests=100, deadline=2
    )
    found = failure(report, "leaks-requests-answered")
    assert found.path is not None
    again = await replay_reproduction(found.path, target("dies-under-load"))
    assert again.reproduced, again.findings
    fixed = await replay_reproduction(found.path, target())
    assert not fixed.reproduced, fixed.findings


# -- the body-limit probe watches a local server's memory --------------------------------------


async def test_a_server_holding_whole_bodies_grows_past_the_bound_and_ours_does_not() -> None:
    from trio_mcp._fuzz._scan_http import scan_http

    server = str(TARGETS / "http_server.py")
    sizes = {"max_body": 24 * 1024 * 1024, "memory_bound": 12 * 1024 * 1024}
    with serving(server, "no-body-limit") as url:
        found, _, reached = await scan_http(
            HttpTarget(url=url), eras=("modern",), deadline=5, probes=("body-limit",), **sizes
        )
    assert reached
    details = {f.invariant.name: f.detail for f in found}
    assert "http-body-memory-bounded" in details, details
    assert "6.0 MiB body: +" in details["http-body-memory-bounded"]  # growing sizes, each told
    with serving(server) as url:  # its own 4 MiB limit, refused before it is read
        found, _, _ = await scan_http(
            HttpTarget(url=url), eras=("modern",), deadline=5, probes=("body-limit",), **sizes
        )
    assert not found, [f.detail for f in found]


async def test_over_stdio_a_server_holding_whole_messages_is_caught_and_ours_is_not(
    tmp_path: Path,
) -> None:
    """Asked to (``stdio_bodies``), the leaks scan over stdio ends with requests of 4, 8
    and 16 MiB, one line each:
    the tiny server reads each whole (and grows by about 40 MiB); ours refuses a message
    past its limit and ends the stream (about 10 MiB)."""
    sizes: dict[str, Any] = {
        "max_body": 16 * 1024 * 1024,
        "body_memory_bound": 24 * 1024 * 1024,
        "stdio_bodies": True,
    }
    env = {**ENV, "PYTHONPATH": os.pathsep.join([str(ROOT), str(TARGETS)])}
    tiny = StdioTarget(command=[sys.executable, str(TARGETS / "good.py")], env=env)
    report = await scan(tiny, tmp_path, checks=["leaks"], leak_requests=10, **sizes)
    found = failure(report, "stdio-message-memory-bounded")
    assert "while it was sent growing requests" in found.detail
    off = await scan(tiny, tmp_path, checks=["leaks"], leak_requests=10, max_body=16 << 20)
    assert off.failures == () and off.warnings == (), off.summary()  # (not asked for)
    ours = StdioTarget(command=[sys.executable, str(ROOT / "examples" / "everything_server.py")])
    report = await scan(ours, tmp_path, checks=["leaks"], leak_requests=10, **sizes)
    assert report.failures == () and report.warnings == (), report.summary()


# -- the http class against both front ends of our server -----------------------------------


@pytest.mark.parametrize("front_end", ["httptools", "hypercorn"])
async def test_the_http_class_passes_our_server_on_either_front_end(
    front_end: str, tmp_path: Path
) -> None:
    """The HTTP rules (a few examples) and every fixed probe, against
    ``trio_mcp.http.serve(front_end=...)`` on a real socket: nothing to report."""
    with serving(str(TARGETS / "http_server.py"), f"front-end={front_end}") as url:
        report = await scan(
            HttpTarget(url=url),
            tmp_path,
            checks=["http"],
            max_examples=8,
            max_steps=8,
            deadline=2,
            max_body=6 * 1024 * 1024,
        )
    found = {f.invariant: f.detail for f in (*report.failures, *report.warnings)}
    assert found == {}, found
    assert report.rules.get("http_headers", 0) > 0, report.rules
