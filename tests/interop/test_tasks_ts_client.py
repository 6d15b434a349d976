"""The TypeScript SDK's client (1.x, from npm) calls our tasks server's tools as
2025-11-25 tasks with ``callToolStream`` (issue 25, item 4): a task is created, polled
and its result fetched; a task-only tool that asks for a name gets it through
``tasks/result`` and the client's elicitation handler. Before, the stream failed with
-32603 (our server answered the call without a task)."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from npm_support import NPM_CACHE, NpmServer

ROOT = Path(__file__).resolve().parents[2]
CLIENT = Path(__file__).resolve().parent / "ts" / "task_client.mjs"

pytestmark = pytest.mark.slow


def test_the_typescript_clients_call_tool_stream(npm_server_everything: NpmServer) -> None:
    # The SDK comes with the reference server (its dependency), at the version it pins.
    sdk = NPM_CACHE / "node_modules" / "@modelcontextprotocol" / "sdk"
    assert (sdk / "dist" / "esm" / "experimental" / "tasks" / "client.js").exists()
    node = shutil.which("node")
    assert node is not None  # the fixture skips without it
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "examples" / "tasks_server.py"), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(url, timeout=2)
                break
            except urllib.error.HTTPError:
                break  # it answers
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline
                time.sleep(0.1)
        done = subprocess.run(
            [node, str(CLIENT), str(sdk), url], capture_output=True, text=True, timeout=60
        )
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    for tool, text in (("slow", "slept 0.2 s"), ("ask", "Hello, Ada!")):
        seen = [line for line in lines if line["tool"] == tool]
        assert seen[0] == {"tool": tool, "type": "taskCreated", "status": "working"}, seen
        assert seen[-1] == {"tool": tool, "type": "result", "text": text}, seen
        assert not [line for line in seen if line["type"] == "error"], seen
    assert any(
        line == {"tool": "ask", "type": "taskStatus", "status": "input_required"} for line in lines
    )
