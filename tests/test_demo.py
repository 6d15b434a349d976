"""The README's demo runs and shows the whole conversation."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("args", [[], ["--modern"]])
def test_memory_demo(args: list[str]) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "memory_demo.py"), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert "== connected: modern era, protocol 2026-07-28" in out
    assert "== greet says: Hello, Trio!" in out
    assert "== progress 3/3" in out
    assert "== count_to returned: {'result': 3}" in out
    assert '"method":"notifications/cancelled"' in out
