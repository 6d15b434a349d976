"""Every skip says why (the hook in the top-level conftest.py). pytest-trio re-raises a
skip from an async test's nursery without its reason, so the summary said only
``_pytest/python.py:187: Skipped``; a skip without a reason now fails the test."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SKIPS = """
import pytest
import trio


async def test_async_skip():
    pytest.skip("no widget here")


async def test_skip_in_a_nursery():
    async with trio.open_nursery():
        pytest.skip("the widget went away")


def test_sync_skip():
    pytest.skip("a plain reason")


def test_sync_skip_without_a_reason():
    pytest.skip()


async def test_async_skip_without_a_reason():
    pytest.skip()


@pytest.mark.skip
def test_marked_without_a_reason():
    pass
"""


def test_every_skip_says_why_and_one_that_does_not_fails(tmp_path: Path) -> None:
    # The project's own conftest.py, in a project of its own (trio_mode, as here).
    shutil.copy(ROOT / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "pytest.ini").write_text("[pytest]\ntrio_mode = true\n")
    (tmp_path / "test_skips.py").write_text(SKIPS)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-rsfE", "-p", "no:cacheprovider", "test_skips.py"],
        cwd=tmp_path,
        env={**os.environ, "HYPOTHESIS_PROFILE": "ci"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = run.stdout
    assert "SKIPPED [1] test_skips.py:7: no widget here" in out, out
    assert "SKIPPED [1] test_skips.py:12: the widget went away" in out, out
    assert "SKIPPED [1] test_skips.py:16: a plain reason" in out, out
    assert "python.py" not in out, out
    assert "FAILED test_skips.py::test_sync_skip_without_a_reason" in out, out
    assert "FAILED test_skips.py::test_async_skip_without_a_reason" in out, out
    assert "skipped without saying why, at test_skips.py:24" in out, out
    assert "ERROR test_skips.py::test_marked_without_a_reason" in out, out  # at setup
    assert "2 failed, 3 skipped, 1 error" in out, out
