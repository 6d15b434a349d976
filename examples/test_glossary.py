"""Tests for the tutorial's server (examples/first_server.py): in memory, on a virtual clock,
with Hypothesis, a transport check and the fuzzer.

Run them: ``python examples/test_glossary.py`` (it runs pytest on itself; the
project's ``trio_mode = true`` makes every ``async def`` test a Trio test).

See docs/how-to/test-a-server.md.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import pytest
import trio
import trio.testing
from first_server import GLOSSARY, server
from hypothesis import given, settings, strategies as st

from trio_mcp import McpError, open_client
from trio_mcp.fuzz import HttpTarget
from trio_mcp.http import serve
from trio_mcp.pytest_plugin import Fuzzer
from trio_mcp.session import Session
from trio_mcp.testing import check_transport, connect, json_objects
from trio_mcp.transports import LineMessageStream, memory_stream_pair, open_line_stream
from trio_mcp.types import TextContent

# -- in memory, in both eras ----------------------------------------------------------------


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_define(version: str) -> None:
    async with connect(server, protocol_version=version) as client:
        assert client.protocol_version == version
        result = await client.call_tool("define", {"term": "Nursery"})
        missing = await client.call_tool("define", {"term": "event loop"})
    assert result.is_error is False
    assert result.content == [TextContent(text=GLOSSARY["nursery"])]
    assert missing.is_error is True


# -- time, without waiting for it -----------------------------------------------------------


async def test_a_nap_takes_virtual_time(autojump_clock: trio.testing.MockClock) -> None:
    async with connect(server) as client:
        start = trio.current_time()
        await client.call_tool("nap", {"seconds": 30})
        assert trio.current_time() - start == pytest.approx(30)


async def test_a_deadline_cancels_the_call_on_the_server(
    autojump_clock: trio.testing.MockClock,
) -> None:
    client_end, server_end = memory_stream_pair()
    async with trio.open_nursery() as nursery:
        session: Session = await nursery.start(server.serve, server_end)
        async with open_client(client_end) as client:
            with pytest.raises(trio.TooSlowError):
                with trio.fail_after(5):
                    await client.call_tool("nap", {"seconds": 3600})
            await trio.testing.wait_all_tasks_blocked()
            assert session.connection.in_flight == 0  # nap was cancelled, not left running
            assert not (await client.call_tool("nap", {"seconds": 1})).is_error


# -- properties -----------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(arguments=json_objects())
async def test_any_arguments_get_a_result(arguments: dict[str, Any]) -> None:
    async with connect(server, protocol_version="2026-07-28") as client:
        try:
            result = await client.call_tool("define", arguments)
        except McpError as exc:
            pytest.fail(f"a protocol error instead of a tool error: {exc!r}")
    assert result.is_error or "term" in arguments


@settings(max_examples=25, deadline=None)
@given(term=st.text())
async def test_any_term_is_defined_or_refused(term: str) -> None:
    async with connect(server) as client:
        result = await client.call_tool("define", {"term": term})
    [block] = result.content
    assert isinstance(block, TextContent)
    assert result.is_error or block.text == GLOSSARY[term.lower()]


# -- a transport: JSON lines over a Unix socket ---------------------------------------------


@asynccontextmanager
async def unix_socket_pair(
    *, send_buffer: int = 16, kernel_buffer: int | None = None
) -> AsyncIterator[tuple[LineMessageStream, LineMessageStream]]:
    """Two message streams joined by a Unix socket pair, one JSON message per line."""
    a, b = trio.socket.socketpair()
    if kernel_buffer is not None:
        for sock in (a, b):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, kernel_buffer)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, kernel_buffer)
    left, right = trio.SocketStream(a), trio.SocketStream(b)
    async with (
        open_line_stream(left, left, send_buffer=send_buffer) as one,
        open_line_stream(right, right, send_buffer=send_buffer) as other,
    ):
        yield one, other


async def test_the_unix_socket_transport(autojump_clock: trio.testing.MockClock) -> None:
    clogged = partial(unix_socket_pair, send_buffer=0, kernel_buffer=4096)
    await check_transport(unix_socket_pair, clogged)


async def test_the_server_over_a_unix_socket() -> None:
    async with unix_socket_pair() as (client_end, server_end), trio.open_nursery() as nursery:
        nursery.start_soon(server.serve, server_end)
        async with open_client(client_end) as client:
            assert [tool.name for tool in await client.list_tools()] == ["define", "nap"]


# -- fuzzing --------------------------------------------------------------------------------


@pytest.fixture
async def glossary_url() -> AsyncIterator[str]:
    """The server over Streamable HTTP on a free port of 127.0.0.1, for one test."""
    async with trio.open_nursery() as nursery:
        port = await nursery.start(partial(serve, server, "127.0.0.1", 0))
        yield f"http://127.0.0.1:{port}/mcp"
        nursery.cancel_scope.cancel()


async def test_the_server_survives_fuzzing(mcp_fuzz: Fuzzer, glossary_url: str) -> None:
    # nap sleeps as long as it is asked to: the fuzzer would (rightly) report it as hung.
    await mcp_fuzz(HttpTarget(url=glossary_url), max_examples=3, skip_tools=["nap"])


if __name__ == "__main__":
    pytest_args = ["-q", "-p", "trio_mcp.pytest_plugin", __file__]
    sys.exit(subprocess.call([sys.executable, "-m", "pytest", *pytest_args]))
