"""A trio_mcp server over stdio (real processes): draining on EOF, signals, clean stdout;
and open_stdio_client in both eras."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
import trio

from trio_mcp import open_stdio_client

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "stdio_servers" / "slow_server.py"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

pytestmark = pytest.mark.slow


def lines(*messages: dict[str, object]) -> bytes:
    return b"".join(orjson.dumps(m) + b"\n" for m in messages)


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def call(id: int, name: str, **arguments: object) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def test_piped_input_gets_every_answer_then_the_server_exits() -> None:
    # The SDK servers drop in-flight requests at EOF; ours drains them.
    requests = [call(i, "slow", seconds=0.05 * (i % 3)) for i in range(1, 6)] + [call(6, "chatty")]
    run = subprocess.run(
        [sys.executable, str(SERVER)],
        input=lines(INITIALIZE, INITIALIZED, *requests),
        capture_output=True,
        env=ENV,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    answers = [orjson.loads(line) for line in run.stdout.splitlines()]  # stdout is only JSON-RPC
    assert sorted(a["id"] for a in answers) == [0, 1, 2, 3, 4, 5, 6]
    assert all("result" in a for a in answers)
    assert b"this would corrupt the protocol" in run.stderr


def test_the_drain_deadline_cancels_what_is_still_running() -> None:
    start = time.monotonic()
    run = subprocess.run(
        [sys.executable, str(SERVER), "0.3"],
        input=lines(
            INITIALIZE, INITIALIZED, call(1, "slow", seconds=60), call(2, "echo", text="fast")
        ),
        capture_output=True,
        env=ENV,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert time.monotonic() - start < 20
    ids = [orjson.loads(line)["id"] for line in run.stdout.splitlines()]
    assert ids == [0, 2]  # the cancelled one sends nothing


def test_sigterm_stops_a_busy_server_promptly() -> None:
    process = subprocess.Popen(
        [sys.executable, str(SERVER)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(lines(INITIALIZE, INITIALIZED, call(1, "slow", seconds=60)))
    process.stdin.flush()
    assert orjson.loads(process.stdout.readline())["id"] == 0  # it is up and serving
    time.sleep(0.2)
    start = time.monotonic()
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=10) == 0
    assert time.monotonic() - start < 5
    process.stdin.close()
    process.stdout.close()
    assert process.stderr is not None
    process.stderr.close()


@pytest.mark.parametrize(
    "protocol_version", [None, "2026-07-28", "2025-11-25", "2025-06-18", "2024-11-05"]
)
async def test_open_stdio_client(protocol_version: str | None) -> None:
    async with open_stdio_client(
        [sys.executable, str(SERVER)],
        env={"PYTHONPATH": str(ROOT)},
        protocol_version=protocol_version,
        grace=2,
    ) as client:
        expected = protocol_version or "2026-07-28"
        assert client.protocol_version == expected
        assert [tool.name for tool in await client.list_tools()] == ["echo", "slow", "chatty"]
        result = await client.call_tool("echo", {"text": "héllo"})
        assert result.content[0].text == "héllo"  # type: ignore[union-attr]
        with trio.move_on_after(0.2):
            await client.call_tool("slow", {"seconds": 30})
        assert (await client.call_tool("chatty")).content[0].text == "ok"  # type: ignore[union-attr]


async def test_a_missing_command_is_a_clear_error() -> None:
    with pytest.raises(FileNotFoundError, match="no-such-mcp-server"):
        async with open_stdio_client(["no-such-mcp-server-anywhere"]):
            pass
