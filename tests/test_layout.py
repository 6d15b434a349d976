"""The two test suites: ``tests/`` and, beside it, ``fuzz/`` (our own Hypothesis fuzzers of
the JSON-RPC lifecycle). The README's test command runs both; ``fuzz/`` runs alone too."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

from hypothesis import settings

ROOT = Path(__file__).resolve().parent.parent


def test_the_readme_command_runs_both_suites() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert pyproject["tool"]["pytest"]["ini_options"]["testpaths"] == ["tests", "fuzz"]
    assert sorted(path.name for path in (ROOT / "fuzz").glob("test_*.py")) == [
        "test_protocol_machine.py",
        "test_session_interleavings.py",
    ]
    assert not (ROOT / "tests" / "lifecycle").exists()


def test_the_fuzz_suite_runs_alone() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "fuzz", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=ROOT,
        env={**os.environ, "HYPOTHESIS_PROFILE": "deep"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    collected = [line for line in run.stdout.splitlines() if "::" in line]
    assert collected and all(line.startswith("fuzz/") for line in collected), run.stdout


def test_the_deep_profile_runs_longer_than_ci() -> None:
    deep, ci = settings.get_profile("deep"), settings.get_profile("ci")
    assert deep.max_examples > 10 * ci.max_examples
    assert deep.stateful_step_count > ci.stateful_step_count


def test_the_readme_says_what_each_fuzzer_is_for() -> None:
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert "`fuzz/` fuzzes **our own** JSON-RPC lifecycle" in readme
    assert "`trio-mcp fuzz` (`trio_mcp.fuzz`) attacks **any** MCP server" in readme
    assert "HYPOTHESIS_PROFILE=deep python -m pytest fuzz" in readme
