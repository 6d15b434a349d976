"""Sessions over stdio: a client Session over a process stream, talking to a child that runs
a server Session over its own stdin and stdout. Real processes, so marked slow.

A child that dies mid-request, and every other misbehaving peer, is in the peer matrix
of ``test_stdio_process.py``."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import trio

from trio_mcp.protocol import Connection
from trio_mcp.session import Session, open_session
from trio_mcp.transports import ProcessMessageStream, open_process_stream
from trio_mcp.types import ClientCapabilities, Implementation

ROOT = Path(__file__).resolve().parent.parent
PEERS = Path(__file__).resolve().parent / "programs"

pytestmark = pytest.mark.slow


@asynccontextmanager
async def initialized_client(stream: ProcessMessageStream) -> AsyncIterator[Session]:
    """A client session over ``stream``, after the initialize handshake."""
    connection = Connection(
        "client",
        info=Implementation(name="test-client", version="0"),
        capabilities=ClientCapabilities(),
    )
    async with open_session(stream, connection) as session:
        pending, message = connection.initialize_request()
        with trio.fail_after(10):
            async with session.track(pending, message) as call:
                answer = await call.answer()
        _, note = connection.complete_initialize(answer)
        await session.send_message(note)
        yield session


async def test_a_client_session_talks_to_a_server_session_in_a_child_process() -> None:
    stderr: list[str] = []
    async with (
        open_process_stream(
            [sys.executable, str(PEERS / "session_server.py")],
            env={"PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])},
            stderr=stderr.append,
        ) as stream,
        initialized_client(stream) as client,
    ):
        assert client.connection.peer_info is not None
        assert client.connection.peer_info.name == "session-peer"
        with trio.fail_after(10):
            result = await client.send_request(
                "tools/call", {"name": "echo", "arguments": {"text": "ünïcödé ✓"}}
            )
            await client.send_request("ping")
        assert result.content[0].text == "ünïcödé ✓"
    # The server saw its stdin end, finished, and exited by itself (and writing to its
    # stdout after its stream closed did not kill it: we read until it exited).
    assert stream.returncode == 0
    # Its stray prints went to stderr, not into the JSON-RPC on stdout.
    assert "a stray print while serving" in stderr
    assert "a stray print while handling tools/call" in stderr
