"""Log messages and progress, in both eras: legacy ``logging/setLevel`` filtering; modern
per-request ``logLevel`` (and nothing for requests that did not ask)."""

from __future__ import annotations

import pytest
from feature_harness import ERAS, LEGACY, MODERN, open_pair, open_raw

from trio_mcp import Context, ErrorCode, McpError, Server
from trio_mcp.types import LoggingMessageNotificationParams, ProgressNotificationParams

LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]


def make_server(*, logging: bool = True) -> Server:
    server = Server("l", logging=logging)

    @server.tool()
    async def chatty(ctx: Context) -> str:
        for level in LEVELS:
            await ctx.log(level, {"level": level}, logger="chatty")  # type: ignore[arg-type]
        return "done"

    @server.tool()
    async def work(steps: int, ctx: Context) -> str:
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
        return "worked"

    @server.tool()
    async def wobbly(ctx: Context) -> str:
        for value in [1, 3, 2, 3, 4]:
            await ctx.report_progress(value, 4)
        return "done"

    return server


@pytest.mark.parametrize("version", LEGACY)
async def test_legacy_set_level_filters_messages(version: str) -> None:
    received: list[LoggingMessageNotificationParams] = []
    async with open_pair(make_server(), protocol_version=version, on_log=received.append) as pair:
        await pair.client.call_tool("chatty")
        everything = len(pair.server_sent.notifications("notifications/message"))
        await pair.client.set_log_level("warning")
        await pair.client.call_tool("chatty")
        await pair.client.list_tools()  # a round trip: notifications before it have arrived
    assert everything == len(LEVELS)  # before setLevel the client gets every level
    assert [p.level for p in received[len(LEVELS) :]] == LEVELS[3:]
    assert received[-1].logger == "chatty"
    assert received[-1].data == {"level": "emergency"}


async def test_modern_logs_only_for_requests_that_ask() -> None:
    received: list[LoggingMessageNotificationParams] = []
    async with open_pair(make_server(), protocol_version=MODERN, on_log=received.append) as pair:
        await pair.client.call_tool("chatty")
        assert pair.server_sent.notifications("notifications/message") == []
        await pair.client.set_log_level("error")
        await pair.client.call_tool("chatty")
        await pair.client.list_tools()
        calls = pair.client_sent.requests("tools/call")
        messages = pair.server_sent.notifications("notifications/message")
        related = {pair.server_sent.related_to(m) for m in messages}
    assert [p.level for p in received] == LEVELS[4:]
    assert related == {calls[1].id}  # on the stream of the request that asked, only
    assert calls[1].params is not None
    assert calls[1].params["_meta"]["io.modelcontextprotocol/logLevel"] == "error"
    assert "io.modelcontextprotocol/logLevel" not in calls[0].params["_meta"]  # type: ignore[index]


async def test_modern_log_level_is_per_request() -> None:
    async with open_raw(make_server(), MODERN) as raw:
        raw.connection.request_log_level = "debug"
        await raw.request("tools/call", {"name": "chatty"})
        asked = len(raw.server_sent.notifications("notifications/message"))
        raw.connection.request_log_level = None
        await raw.request("tools/call", {"name": "chatty"})
        after = len(raw.server_sent.notifications("notifications/message"))
    assert asked == len(LEVELS)
    assert after == asked


async def test_modern_invalid_log_level_is_invalid_params() -> None:
    async with open_raw(make_server(), MODERN) as raw:
        with pytest.raises(McpError) as info:
            await raw.request(
                "tools/call",
                {"name": "chatty", "_meta": {"io.modelcontextprotocol/logLevel": "loud"}},
            )
    assert info.value.code == ErrorCode.INVALID_PARAMS


@pytest.mark.parametrize("version", ERAS)
async def test_no_logging_capability_means_no_log_messages(version: str) -> None:
    server = make_server(logging=False)
    assert server.capabilities().logging is None
    async with open_raw(server, version) as raw:
        raw.connection.request_log_level = "debug"
        await raw.request("tools/call", {"name": "chatty"})
        if version != MODERN:
            with pytest.raises(McpError) as info:
                await raw.request("logging/setLevel", {"level": "debug"})
            assert info.value.code == ErrorCode.METHOD_NOT_FOUND
        assert raw.server_sent.notifications("notifications/message") == []


@pytest.mark.parametrize("version", [*ERAS, "2024-11-05"])
async def test_progress_reaches_the_caller(version: str) -> None:
    updates: list[ProgressNotificationParams] = []
    async with open_pair(make_server(), protocol_version=version) as pair:
        result = await pair.client.call_tool("work", {"steps": 3}, on_progress=updates.append)
        (call,) = pair.client_sent.requests("tools/call")
        progress = pair.server_sent.notifications("notifications/progress")
    assert result.content[0].text == "worked"  # type: ignore[union-attr]
    assert [(u.progress, u.total) for u in updates] == [(1, 3), (2, 3), (3, 3)]
    token = call.params["_meta"]["progressToken"]  # type: ignore[index]
    assert all(u.progress_token == token for u in updates)
    if version >= "2025-03-26":
        assert [u.message for u in updates] == ["step 1", "step 2", "step 3"]
    else:
        assert all(u.message is None for u in updates)
        assert all("message" not in p.params for p in progress)  # type: ignore[operator]
    assert {pair.server_sent.related_to(p) for p in progress} == {call.id}


@pytest.mark.parametrize("version", ERAS)
async def test_no_progress_token_means_no_progress(version: str) -> None:
    async with open_pair(make_server(), protocol_version=version) as pair:
        await pair.client.call_tool("work", {"steps": 3})
    assert pair.server_sent.notifications("notifications/progress") == []


@pytest.mark.parametrize("version", ERAS)
async def test_progress_that_does_not_grow_is_not_sent(version: str) -> None:
    updates: list[ProgressNotificationParams] = []
    async with open_pair(make_server(), protocol_version=version) as pair:
        await pair.client.call_tool("wobbly", on_progress=updates.append)
    assert [u.progress for u in updates] == [1, 3, 4]
