"""``trio-mcp bridge`` (issue 22): a stdio server served over Streamable HTTP (both eras:
calls, progress, resources, a cancellation the server behind observes, shutdown leaving no
child), an HTTP server served over stdio, and the npm reference server bridged to HTTP.
Real processes throughout; bounded waits."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio
from npm_support import (
    NpmServer,
)

from trio_mcp import McpError, open_stdio_client
from trio_mcp.http import open_http_client

ROOT = Path(__file__).resolve().parent.parent
CHILD = ROOT / "tests" / "programs" / "bridged_server.py"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
BRIDGE = [sys.executable, "-m", "trio_mcp", "bridge"]

pytestmark = pytest.mark.slow


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


def start_bridge(command: str) -> tuple[subprocess.Popen[str], str]:
    bridge = subprocess.Popen(
        [*BRIDGE, "--stdio", command, "--serve-http", "0"],
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
        cwd=ROOT,
    )
    assert bridge.stderr is not None
    deadline = time.monotonic() + 60
    while True:
        line = bridge.stderr.readline()
        if line.startswith("bridge serving "):
            return bridge, line.split()[-1]
        assert line and time.monotonic() < deadline, "the bridge did not start"


@pytest.fixture
def bridged(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    log = tmp_path / "log"
    bridge, url = start_bridge(f"{sys.executable} {CHILD} {log}")
    try:
        yield url, log
    finally:
        bridge.send_signal(signal.SIGTERM)
        try:
            assert bridge.wait(timeout=20) == 0
        finally:
            bridge.kill()
            bridge.wait()
    child = int(log.read_text().split()[1])
    deadline = time.monotonic() + 10
    while alive(child):  # the bridge's shutdown closed the server behind it
        assert time.monotonic() < deadline, "the stdio server outlived the bridge"
        time.sleep(0.05)


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_a_stdio_server_over_streamable_http(bridged: tuple[str, Path], version: str) -> None:
    url, log = bridged
    progress: list[tuple[float, str | None]] = []
    with trio.fail_after(60):
        async with open_http_client(url, protocol_version=version) as client:
            assert client.server_info is not None and client.server_info.name == "bridged"
            assert {tool.name for tool in await client.list_tools()} == {
                "echo",
                "context",
                "count",
                "nap",
            }
            named = await client.call_tool("context", {"ctx": "a", "context": "b"})
            assert named.content[0].text == "a b"  # type: ignore[union-attr]
            echoed = await client.call_tool("echo", {"text": "through the bridge"})
            assert echoed.content[0].text == "through the bridge"  # type: ignore[union-attr]
            counted = await client.call_tool(
                "count",
                {"n": 3},
                on_progress=lambda update: progress.append((update.progress, update.message)),
            )
            assert counted.content[0].text == "counted 3"  # type: ignore[union-attr]
            prompt = await client.get_prompt("greet", {"name": "Ada"})
            assert prompt.messages[0].content.text == "Say hello to Ada."  # type: ignore[union-attr]
            with pytest.raises(McpError):  # its arguments are the server behind's to check
                await client.get_prompt("greet", {})
            read = await client.read_resource("note://hello")
            assert read.contents[0].text == "hello from the bridged server"  # type: ignore[union-attr]
            # Giving up on a call cancels it behind the bridge too.
            with trio.move_on_after(1):
                await client.call_tool("nap", {"seconds": 600})
            while "cancelled" not in log.read_text():
                await trio.sleep(0.05)
    assert progress == [(1, "step 1"), (2, "step 2"), (3, "step 3")]


async def test_an_http_server_over_stdio(tmp_path: Path) -> None:
    log = tmp_path / "log"
    server = subprocess.Popen(
        [sys.executable, str(CHILD), str(log), "--http"], stdout=subprocess.PIPE, text=True, env=ENV
    )
    try:
        assert server.stdout is not None
        url = f"http://127.0.0.1:{int(server.stdout.readline())}/mcp"
        progress: list[float] = []
        with trio.fail_after(60):
            async with open_stdio_client(
                [*BRIDGE, "--url", url], env=ENV, stderr=lambda line: None
            ) as client:
                counted = await client.call_tool(
                    "count", {"n": 2}, on_progress=lambda update: progress.append(update.progress)
                )
                assert counted.content[0].text == "counted 2"  # type: ignore[union-attr]
                with trio.move_on_after(1):
                    await client.call_tool("nap", {"seconds": 600})
                while "cancelled" not in log.read_text():
                    await trio.sleep(0.05)
        assert progress == [1, 2]
    finally:
        server.terminate()
        server.wait(timeout=10)


async def test_the_npm_reference_server_over_http(
    npm_server_everything: NpmServer,
) -> None:
    command = " ".join(npm_server_everything.node_command)
    bridge, url = start_bridge(command)
    try:
        with trio.fail_after(60):
            async with open_http_client(url) as client:
                echoed = await client.call_tool("echo", {"message": "hi"})
        assert "hi" in echoed.content[0].text  # type: ignore[union-attr]
    finally:
        bridge.send_signal(signal.SIGTERM)
        bridge.wait(timeout=20)
