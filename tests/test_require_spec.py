"""TRIO_MCP_REQUIRE_SPEC=1 (CI sets it) turns missing spec schemas into an error of the
whole run, instead of skipped and uncollected checks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import REQUIRE_SPEC, ROOT

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
