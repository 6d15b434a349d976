"""The trio-mcp command: real processes, clear errors, no tracebacks for expected failures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SERVER = f"{sys.executable} {ROOT / 'tests' / 'stdio_servers' / 'slow_server.py'}"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

pytestmark = pytest.mark.slow


def cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trio_mcp", *args],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=timeout,
        cwd=ROOT,
    )


def no_traceback(run: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in run.stderr, run.stderr
    assert run.stderr.startswith("trio-mcp: "), run.stderr
    assert run.stderr.count("\n") == 1 or "stderr ends with" in run.stderr


def test_list_tools() -> None:
    run = cli("list-tools", "--stdio", SERVER)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0] == "echo(text)"
    assert "slow(seconds)  Sleeps, then answers" in run.stdout


def test_list_tools_as_json_in_a_chosen_version() -> None:
    run = cli("list-tools", "--stdio", SERVER, "--json", "--protocol-version", "2025-06-18")
    assert run.returncode == 0, run.stderr
    tools = json.loads(run.stdout)
    assert [t["name"] for t in tools] == ["echo", "slow", "chatty"]
    assert tools[0]["inputSchema"]["properties"] == {"text": {"type": "string"}}


def test_call_tool() -> None:
    run = cli("call-tool", "echo", "--args", '{"text": "héllo"}', "--stdio", SERVER)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "héllo\n"


def test_info() -> None:
    run = cli("info", "--stdio", SERVER, "--protocol-version", "2025-11-25")
    assert run.returncode == 0, run.stderr
    assert "protocol: 2025-11-25 (legacy era)" in run.stdout
    assert "server: slow" in run.stdout


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["call-tool", "nope", "--stdio", SERVER], "error -32602: Unknown tool: nope"),
        (["call-tool", "echo", "--args", "{bad", "--stdio", SERVER], "--args is not valid JSON"),
        (["call-tool", "echo", "--args", "[1]", "--stdio", SERVER], "--args must be a JSON object"),
        (["list-tools", "--stdio", "no-such-mcp-server-here"], "cannot start the MCP server"),
        (
            ["list-tools", "--stdio", f"{sys.executable} -c 'import sys; sys.exit(4)'"],
            "exit status 4",
        ),
        (
            [
                "call-tool",
                "slow",
                "--args",
                '{"seconds": 30}',
                "--timeout",
                "1.5",
                "--stdio",
                SERVER,
            ],
            "gave up after 1.5 s",
        ),
        (
            ["list-tools", "--shutdown-grace", "-1", "--stdio", SERVER],
            "--shutdown-grace must be 0 or more seconds",
        ),
    ],
)
def test_expected_failures_are_one_line(args: list[str], expected: str) -> None:
    run = cli(*args)
    assert run.returncode == 1
    no_traceback(run)
    assert expected in run.stderr


def test_a_tool_error_result_exits_non_zero() -> None:
    run = cli("call-tool", "echo", "--args", '{"text": 5}', "--stdio", SERVER)
    assert run.returncode == 1
    assert "Invalid arguments for tool echo" in run.stdout
    assert "reported an error" in run.stderr


def test_usage_errors_exit_2() -> None:
    run = cli("list-tools")
    assert run.returncode == 2
    assert "one of the arguments --stdio --url is required" in run.stderr


@pytest.mark.parametrize("protocol_version", [None, "2025-11-25"])
def test_demo_tours_the_everything_server(protocol_version: str | None) -> None:
    args = ["demo"] + (["--protocol-version", protocol_version] if protocol_version else [])
    run = cli(*args, timeout=120)
    assert run.returncode == 0, run.stderr
    era = "legacy" if protocol_version else "modern"
    for line in (
        f"({era} era)",
        "  -> Hello from trio-mcp!",
        "    progress 3/3",
        "  -> registered demo (dev)",
        "  -> A demo answer.",
        "  -> notified: counter://value was updated",
        "A resource template: read greetings://fr/Ada -> Bonjour, Ada!",
        "Done.",
    ):
        assert line in run.stdout, (line, run.stdout)


def test_shutdown_grace_zero_goes_straight_down_the_ladder() -> None:
    """0 means no waiting between the ladder's steps (not "wait for ever")."""
    ignores_eof = f"{sys.executable} {ROOT / 'tests' / 'stdio_peers' / 'ignores_eof.py'}"
    start = time.monotonic()
    run = cli(
        "list-tools", "--shutdown-grace", "0", "--timeout", "1", "--stdio", ignores_eof, timeout=30
    )
    assert time.monotonic() - start < 20  # a server that ignores EOF got SIGTERM at once
    assert run.returncode == 1
    no_traceback(run)
