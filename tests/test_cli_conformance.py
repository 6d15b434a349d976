"""``trio-mcp conformance``: the official harness against a server URL or a client command,
one summary line, exit 1 when a check fails. Real servers and clients, the real harness
(installed with npm on first use; skipped when it cannot be, unless
``TRIO_MCP_REQUIRE_CONFORMANCE=1``)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from trio_mcp._cli._harness import HarnessUnavailable, default_home, install_harness

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", autouse=True)
def harness() -> None:
    try:
        install_harness(default_home())
    except HarnessUnavailable as exc:
        if os.environ.get("TRIO_MCP_REQUIRE_CONFORMANCE") == "1":
            pytest.fail(f"the conformance harness is unavailable: {exc}")
        pytest.skip(f"the conformance harness is unavailable: {exc}")


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trio_mcp", *args],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
        cwd=ROOT,
    )


def serving(*command: str) -> Iterator[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, *[part.replace("{port}", str(port)) for part in command]],
        cwd=ROOT,
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None, "the server exited"
            try:
                urllib.request.urlopen(url, timeout=2)
            except urllib.error.HTTPError:
                break  # it answers
            except OSError:
                assert time.monotonic() < deadline, "the server did not come up"
                time.sleep(0.1)
            else:
                break
        yield url
    finally:
        process.kill()
        process.wait()


@pytest.fixture(scope="module")
def conformance_server() -> Iterator[str]:
    yield from serving("examples/conformance_server.py", "--port", "{port}")


@pytest.fixture(scope="module")
def echo_server() -> Iterator[str]:
    yield from serving("examples/echo_server.py", "--http", "{port}")


def test_a_conformant_server_passes_a_requirement_set(conformance_server: str) -> None:
    done = cli("conformance", "server", conformance_server, "--requirements", "2025-11-25")
    assert done.returncode == 0, done.stdout + done.stderr
    summary = done.stdout.strip().splitlines()[-1]
    assert summary.startswith("conformance passed: 33 scenarios, "), summary
    assert " 0 failed, 0 warnings" in summary


def test_a_server_without_the_fixtures_fails_and_the_check_is_named(echo_server: str) -> None:
    done = cli(
        "conformance", "server", echo_server, "--scenario", "tools-call-image", "--scenario", "ping"
    )
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.strip().splitlines()
    assert any(
        line.startswith("FAILURE  server-tools-call-image  tools-call-image:") for line in lines
    ), lines
    assert lines[-1].startswith("conformance FAILED: 2 scenarios, "), lines[-1]


def test_a_client_command_runs_under_the_mock_servers() -> None:
    client = ["--", sys.executable, "examples/conformance_client.py"]
    done = cli("conformance", "client", "--scenario", "initialize", *client)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1].startswith("conformance passed: 1 scenarios")
    failing = ["--", sys.executable, "-c", "import sys; sys.exit(3)"]
    done = cli("conformance", "client", "--scenario", "initialize", *failing)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "conformance FAILED" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["server"], "takes one http:// or https:// URL"),
        (["server", "ftp://x"], "takes one http:// or https:// URL"),
        (["client"], "takes the client's command"),
    ],
)
def test_a_wrong_target_is_one_line(args: list[str], message: str) -> None:
    done = cli("conformance", *args)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and message in done.stderr, done.stderr


def test_a_stdio_server_through_the_bridge() -> None:
    everything = f"{sys.executable} examples/everything_server.py"
    done = cli("conformance", "server", "--stdio", everything, "--scenario", "ping")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1].startswith("conformance passed: 1 scenarios")
    done = cli(
        "conformance", "server", "--stdio", everything, "--scenario", "tools-call-simple-text"
    )
    assert done.returncode == 1
    assert "Unknown tool: test_simple_text" in done.stdout  # not the fixture server
