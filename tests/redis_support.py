"""A real ``redis-server`` for the tests that need one, started on a free port of 127.0.0.1
(the fixtures ``redis_url``, ``redis`` and ``durable_redis`` in tests/conftest.py use it).

Skips when ``redis-server`` is not installed, unless ``TRIO_MCP_REQUIRE_REDIS=1`` (CI
sets it; ``.ci/run`` installs the package), which turns the skip into a failure.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

REQUIRE = "TRIO_MCP_REQUIRE_REDIS"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def redis_binary() -> str:
    """The ``redis-server`` binary; skips the test without it (fails under CI's variable)."""
    binary = shutil.which("redis-server")
    if binary is None:
        if os.environ.get(REQUIRE) == "1":
            pytest.fail(f"redis-server is not installed ({REQUIRE}=1)")
        pytest.skip("redis-server is not installed")
    return binary


class RedisProcess:
    """A redis-server on a free port of 127.0.0.1 that a test may kill and start again on
    the same port. ``durable``: every write is synced to an append-only file, so what was
    written survives a SIGKILL (as a production Redis with AOF would)."""

    def __init__(self, folder: Path, *, durable: bool = False) -> None:
        self.binary = redis_binary()
        self.folder = folder
        self.port = _free_port()
        self.durable = durable
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        persistence = (
            ["--appendonly", "yes", "--appendfsync", "always"]
            if self.durable
            else [
                "--appendonly",
                "no",
            ]
        )
        self.process = subprocess.Popen(
            [
                self.binary,
                "--bind",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--dir",
                str(self.folder),
                "--save",
                "",
                *persistence,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"redis-server did not start on port {self.port}")
                time.sleep(0.02)

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process = None


@contextmanager
def running_redis(folder: Path, *, durable: bool = False) -> Iterator[RedisProcess]:
    """A started :class:`RedisProcess` (files in ``folder``), stopped on the way out."""
    process = RedisProcess(folder, durable=durable)
    process.start()
    try:
        yield process
    finally:
        process.stop()
