"""The host against a server that breaks the stdio framing: one answer line over the line
limit (issue 21, failure 5). Real child processes, bounded real waits."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest
import trio

from trio_mcp import ConnectionClosed, jsonrpc as rpc
from trio_mcp.host import StdioServerConfig, allow_all, open_host
from trio_mcp.transports import open_process_stream

ROOT = Path(__file__).resolve().parent.parent
HUGE = ROOT / "tests" / "programs" / "huge_answer_server.py"
ENV = {"PYTHONPATH": str(ROOT)}

pytestmark = pytest.mark.slow


async def test_an_answer_over_the_line_limit_fails_the_calls_at_once_and_restarts(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="trio_mcp")
    servers = {"big": StdioServerConfig(command=[sys.executable, str(HUGE)], env=ENV, grace=1.0)}
    async with open_host(servers, consent=allow_all(), backoff_initial=0.1) as host:
        with trio.fail_after(30):
            await host.wait_settled()
        state = host.servers["big"]
        first = state.client
        assert state.status == "connected"

        # Two calls in flight; the huge answer breaks the connection and both fail at
        # once, with the limit named (on main both waited for ever).
        failures: list[BaseException] = []

        async def call(name: str, arguments: dict[str, str] | None = None) -> None:
            try:
                await host.call_tool(name, arguments)
            except ConnectionClosed as exc:
                failures.append(exc)

        with trio.fail_after(20):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(call, "big__huge")
                nursery.start_soon(call, "big__huge")
        assert len(failures) == 2
        for failure in failures:
            assert "exceeded 4194304 bytes" in str(failure)

        # The host logged it and restarts the server like any other failure.
        with trio.fail_after(30):
            while state.client is None or state.client is first:
                await host.wait_changed()
        assert state.restarts >= 1
        assert "exceeded 4194304 bytes" in str(state.error) or state.status == "connected"
        logged = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        assert any("big" in m and "exceeded 4194304 bytes" in m for m in logged), logged

        with trio.fail_after(10):
            result = await host.call_tool("big__echo", {"text": "after"})
        assert result.content[0].text == "after"  # type: ignore[union-attr]


async def test_a_stdio_server_given_a_line_over_the_limit_says_why_and_ends() -> None:
    # The other direction: the server cannot know which request the line was, so it
    # cannot answer it; going on would leave its sender waiting for ever. It answers
    # -32600 (id null) saying the limit, logs it, and ends the connection, so the client
    # sees it at once.
    stderr: list[str] = []
    async with open_process_stream(
        [sys.executable, str(HUGE)], env=ENV, grace=1.0, stderr=stderr.append
    ) as stream:
        await stream.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"p":"')
        await stream.send_raw(b"y" * 5_000_000 + b'"}}\n')
        with trio.fail_after(20):
            answer = await stream.receive()
            assert isinstance(answer, rpc.ErrorResponse)
            assert answer.id is None
            assert answer.error.code == -32600
            assert "exceeded 4194304 bytes" in answer.error.message
            with pytest.raises(trio.EndOfChannel):
                await stream.receive()
    assert any("exceeded 4194304 bytes" in line for line in stderr), stderr
