"""The client side of the tasks extension: a call the server runs as a task is polled to
its outcome, the task's questions are answered by the client's handlers, leaving the block
cancels the task unless it was detached, and a detached task is taken up again by id."""

from __future__ import annotations

from typing import Any

import pytest
import trio
from feature_harness import open_pair

from trio_mcp import Context, ErrorCode, McpError, Server
from trio_mcp.client import TaskCancelled
from trio_mcp.types import ElicitResult

MODERN = "2026-07-28"


def make_server(events: list[str]) -> Server:
    server = Server("tasks")

    @server.tool(task="optional")
    async def slow(seconds: float, ctx: Context) -> str:
        events.append(f"task {ctx.task_id is not None}")
        try:
            await trio.sleep(seconds)
        except trio.Cancelled:
            events.append("cancelled")
            raise
        await ctx.report_progress(1, 1, "done")
        return f"slept {seconds:g}"

    @server.tool(task="optional")
    async def broken() -> str:
        raise McpError("broken on purpose", code=ErrorCode.INVALID_PARAMS)

    @server.tool(task="always")
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit(
            "Name?", {"type": "object", "properties": {"n": {"type": "string"}}}
        )
        return f"hi {(answer.content or {}).get('n')}"

    return server


async def answer_name(params: Any) -> ElicitResult:
    return ElicitResult(action="accept", content={"n": "Bo"})


async def test_call_tool_as_task_waits_for_the_result(autojump_clock: trio.abc.Clock) -> None:
    events: list[str] = []
    async with open_pair(make_server(events), protocol_version=MODERN) as pair:
        result = await pair.client.call_tool("slow", {"seconds": 30}, as_task=True)
        assert result.content[0].text == "slept 30"  # type: ignore[union-attr]
        plain = await pair.client.call_tool("slow", {"seconds": 1})
        assert plain.content[0].text == "slept 1"  # type: ignore[union-attr]
    assert events == ["task True", "task False"]


async def test_a_failed_task_raises_its_error(autojump_clock: trio.abc.Clock) -> None:
    async with open_pair(make_server([]), protocol_version=MODERN) as pair:
        with pytest.raises(McpError) as failed:
            await pair.client.call_tool("broken", {}, as_task=True)
        assert failed.value.code == ErrorCode.INVALID_PARAMS
        assert failed.value.message == "broken on purpose"


async def test_the_task_asks_through_the_client_handlers(autojump_clock: trio.abc.Clock) -> None:
    async with open_pair(make_server([]), protocol_version=MODERN, elicitation=answer_name) as pair:
        async with pair.client.open_tool_task("ask") as task:
            assert task.task_id is not None
            result = await task.result()
        assert result.content[0].text == "hi Bo"  # type: ignore[union-attr]


async def test_leaving_the_block_cancels_the_task(autojump_clock: trio.abc.Clock) -> None:
    events: list[str] = []
    async with open_pair(make_server(events), protocol_version=MODERN) as pair:
        with trio.move_on_after(10):
            await pair.client.call_tool("slow", {"seconds": 600}, as_task=True)
        await trio.sleep(1)
        assert events == ["task True", "cancelled"]


async def test_a_detached_task_is_taken_up_again(autojump_clock: trio.abc.Clock) -> None:
    events: list[str] = []
    async with open_pair(make_server(events), protocol_version=MODERN) as pair:
        async with pair.client.open_tool_task("slow", {"seconds": 60}) as task:
            task_id = task.detach()
        await trio.sleep(1)
        assert events == ["task True"]  # still running: not cancelled
        async with pair.client.open_task(task_id) as again:
            assert again.status == "working"
            result = await again.result()
        assert result.content[0].text == "slept 60"  # type: ignore[union-attr]
        # Cancelled through the handle: the outcome is TaskCancelled.
        async with pair.client.open_tool_task("slow", {"seconds": 60}) as task:
            await task.cancel()
            with pytest.raises(TaskCancelled):
                await task.result()
        with pytest.raises(McpError) as unknown:
            async with pair.client.open_task("no-such-task"):
                pass  # pragma: no cover
        assert unknown.value.code == ErrorCode.INVALID_PARAMS


async def test_in_the_legacy_era_without_core_tasks_as_task_is_refused(
    autojump_clock: trio.abc.Clock,
) -> None:
    """A 2025-11-25 server that declares no tasks for tools/call (it runs none): a task is
    refused with a clear error (it used to become a plain call, silently)."""
    server = Server("plain")

    @server.tool()
    async def slow(seconds: float) -> str:
        await trio.sleep(seconds)
        return f"slept {seconds:g}"

    async with open_pair(server, protocol_version="2025-11-25") as pair:
        with pytest.raises(McpError, match="cannot run as a task") as refused:
            async with pair.client.open_tool_task("slow", {"seconds": 1}):
                pass
        assert refused.value.code == ErrorCode.METHOD_NOT_FOUND
        result = await pair.client.call_tool("slow", {"seconds": 1})
        assert result.content[0].text == "slept 1"  # type: ignore[union-attr]


async def test_a_task_is_followed_on_a_listen_stream_instead_of_polled(
    autojump_clock: trio.abc.Clock,
) -> None:
    """2026-07-28: result() waits on notifications/tasks; a poll every 0.5 s for 60 s
    would be 120 tasks/get, following is one after the acknowledgement and one per
    status change."""
    sent: list[str] = []

    def tap(direction: str, message: Any) -> None:
        method = getattr(message, "method", None)
        if direction == "sent" and method is not None:
            sent.append(method)

    async with open_pair(make_server([]), protocol_version=MODERN, on_message=tap) as pair:
        started = trio.current_time()
        result = await pair.client.call_tool("slow", {"seconds": 60}, as_task=True)
        assert result.content[0].text == "slept 60"  # type: ignore[union-attr]
        assert trio.current_time() - started < 61  # the outcome is taken as it comes
        assert "subscriptions/listen" in sent
        assert 1 <= sent.count("tasks/get") <= 4, sent
        # A listener sees the task's status changes, for the caller's own task.
        async with pair.client.open_tool_task("slow", {"seconds": 5}) as task:
            assert task.task_id is not None
            async with pair.client.listen(task_ids=[task.task_id]) as changes:
                assert changes.acknowledged is not None
                assert changes.acknowledged.task_ids == [task.task_id]
                with trio.fail_after(30):
                    change = await changes.__anext__()
            assert change.kind == "task" and change.task_id == task.task_id
            assert change.status == "completed"
        # Another's (or an unknown) task id is not agreed to.
        async with pair.client.listen(task_ids=["no-such-task"]) as changes:
            assert changes.acknowledged is not None
            assert not changes.acknowledged.task_ids
