"""Child processes a test starts (fleet workers, example servers), ended however it ends."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

#: How long a process is given to exit on SIGTERM before it is killed.
TERMINATE_WAIT = 10.0


@contextmanager
def terminated_at_exit(
    processes: Sequence[subprocess.Popen[str]],
) -> Iterator[Sequence[subprocess.Popen[str]]]:
    """Yield ``processes``; on the way out send SIGTERM to each one still running, wait for
    them all (up to :data:`TERMINATE_WAIT` s each) and SIGKILL those still there, so none
    outlives the test, whether it passed, failed or killed some itself. Blocks while waiting."""
    try:
        yield processes
    finally:
        for process in processes:
            if process.poll() is None:
                process.terminate()
        for process in processes:
            try:
                process.wait(timeout=TERMINATE_WAIT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
