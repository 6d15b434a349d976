"""The server side of stdio, run in a child process (it takes over the process's own stdin
and stdout, which a test process cannot give it)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import trio

from trio_mcp import jsonrpc as rpc
from trio_mcp.transports import open_process_stream

ROOT = Path(__file__).resolve().parent.parent
PEERS = Path(__file__).resolve().parent / "programs"


@pytest.mark.slow
async def test_stdout_carries_only_json_rpc_while_serving_and_is_restored_after() -> None:
    stderr: list[str] = []
    env = {"PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    async with open_process_stream(
        [sys.executable, str(PEERS / "server_stream_restores.py")], env=env, stderr=stderr.append
    ) as stream:
        with trio.fail_after(10):
            await stream.send(rpc.JsonRpcRequest(1, "tools/call", {"x": 1}))
            assert await stream.receive() == rpc.ResultResponse(1, {"echo": {"x": 1}})
            # The server closed its stream and printed with plain print(): that reaches
            # its real stdout again.
            assert await stream.receive() == rpc.JsonRpcNotification("stdout/restored")
            with pytest.raises(trio.EndOfChannel):
                await stream.receive()
    assert stream.returncode == 0
    assert stderr == ["stray text while serving"]
