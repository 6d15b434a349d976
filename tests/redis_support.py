"""A real ``redis-server`` for the tests that need one, started on a free port of 127.0.0.1.

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
from pathlib import Path

import pytest

REQUIRE = "TRIO_MCP_REQUIRE_REDIS"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``redis://127.0.0.1:PORT/0`` of a redis-server this fixture runs for the session."""
    binary = shutil.which("redis-server")
    if binary is None:
        if os.environ.get(REQUIRE) == "1":
            pytest.fail(f"redis-server is not installed ({REQUIRE}=1)")
        pytest.skip("redis-server is not installed")
    folder: Path = tmp_path_factory.mktemp("redis")
    port = _free_port()
    server = subprocess.Popen(
        [
            binary,
            "--bind",
            "127.0.0.1",
            "--port",
            str(port),
            "--dir",
            str(folder),
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"redis-server did not start on port {port}")
                time.sleep(0.02)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        server.terminate()
        try:
            server.wait(timeout=5)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
