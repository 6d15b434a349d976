"""TRIO_MCP_REQUIRE_SPEC=1 (CI sets it) turns missing spec schemas into an error of the
whole run, instead of skipped and uncollected checks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from spec_support import REQUIRE_SPEC, ROOT, SCHEMA_FILES, SPEC_DIR, missing_schemas

# One quick test file: what matters is whether the run starts at all.
PROBE = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_jsonrpc.py", "-x"]


def _pytest(**env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *PROBE],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_missing_schemas_stop_a_run_that_requires_them(tmp_path: Path) -> None:
    run = _pytest(**{REQUIRE_SPEC: "1", "TRIO_MCP_SPEC_DIR": str(tmp_path)})
    assert run.returncode == 4, run.stdout + run.stderr  # pytest's usage error
    assert f"{REQUIRE_SPEC}=1 but the spec schemas" in run.stderr
    assert "schema-2026-07-28.json" in run.stderr


def test_missing_schemas_only_skip_a_run_that_does_not_require_them(tmp_path: Path) -> None:
    run = _pytest(**{REQUIRE_SPEC: "0", "TRIO_MCP_SPEC_DIR": str(tmp_path)})
    assert run.returncode == 0, run.stdout + run.stderr
    # ... and the run says, at its end, that it checked less than it seems.
    assert "spec schemas missing" in run.stdout
    assert "the tests generated from their definitions were not collected" in run.stdout
    assert f"{REQUIRE_SPEC}=1 (CI sets it) makes this an error" in run.stdout


def test_the_tasks_extension_schema_is_required_too(tmp_path: Path) -> None:
    # The tasks tests check the wire form against ext-tasks-schema.json when it is there:
    # without it they skipped, or checked field by field only.
    if missing_schemas():
        pytest.skip(f"the spec schemas are not all at {SPEC_DIR}: nothing to leave one out of")
    for name in SCHEMA_FILES.values():
        (tmp_path / name).symlink_to(SPEC_DIR / name)
    run = _pytest(**{REQUIRE_SPEC: "1", "TRIO_MCP_SPEC_DIR": str(tmp_path)})
    assert run.returncode == 4, run.stdout + run.stderr
    assert f"{REQUIRE_SPEC}=1 but the spec schemas ext-tasks-schema.json are not" in run.stderr


def test_a_run_with_every_schema_says_nothing_about_them() -> None:
    if missing_schemas():
        pytest.skip(f"the spec schemas are not all at {SPEC_DIR}")
    run = _pytest(**{REQUIRE_SPEC: "1", "TRIO_MCP_SPEC_DIR": str(SPEC_DIR)})
    assert run.returncode == 0, run.stdout + run.stderr
    assert "spec schemas missing" not in run.stdout
