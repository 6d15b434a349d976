"""The 2025-11-25 revision's core tasks, our client against our server (issue 25, item 4):
the same handlers (``@server.tool(task=...)``) and store serve a task-augmented call,
``tasks/get``, ``tasks/result`` (with the task's questions put to the client through it)
and ``tasks/cancel``; the tools list says ``execution.taskSupport``. The 2026-07-28
extension is tested in test_server_tasks.py and test_client_tasks.py, unchanged."""

from __future__ import annotations

import pytest
import trio
from feature_harness import open_pair, open_raw
from test_client_tasks import answer_name, make_server

from trio_mcp import ErrorCode, McpError

CORE = "2025-11-25"


async def test_a_tool_call_becomes_a_core_task_and_completes(
    autojump_clock: trio.abc.Clock,
) -> None:
    events: list[str] = []
    async with open_pair(make_server(events), protocol_version=CORE) as pair:
        client = pair.client
        assert client.server_capabilities.tasks == {
            "cancel": {},
            "list": {},
            "requests": {"tools": {"call": {}}},
        }
        tools = {tool.name: tool for tool in await client.list_tools()}
        assert tools["slow"].execution is not None
        assert tools["slow"].execution.task_support == "optional"
        assert tools["ask"].execution is not None
        assert tools["ask"].execution.task_support == "required"
        result = await client.call_tool("slow", {"seconds": 30}, as_task=True)
        assert result.content[0].text == "slept 30"  # type: ignore[union-attr]
        plain = await client.call_tool("slow", {"seconds": 1})
        assert plain.content[0].text == "slept 1"  # type: ignore[union-attr]
    assert events == ["task True", "task False"]


async def test_the_wire(autojump_clock: trio.abc.Clock) -> None:
    async with open_raw(make_server([]), CORE) as raw:
        session = raw.session
        created = await session.send_request(
            "tools/call",
            {"name": "slow", "arguments": {"seconds": 5}, "task": {"ttl": 60000}},
            model=dict,
        )
        task = created["task"]
        assert set(task) >= {"taskId", "status", "createdAt", "lastUpdatedAt", "ttl"}
        assert task["status"] == "working" and "result" not in task
        task_id = task["taskId"]
        got = await session.send_request("tasks/get", {"taskId": task_id}, model=dict)
        assert got["taskId"] == task_id and got["status"] in ("working", "completed")
        outcome = await session.send_request("tasks/result", {"taskId": task_id}, model=dict)
        assert outcome["content"][0]["text"] == "slept 5"
        done = await session.send_request("tasks/get", {"taskId": task_id}, model=dict)
        assert done["status"] == "completed"
        # A tool that runs only as a task, called without one.
        with pytest.raises(McpError) as refused:
            await session.send_request("tools/call", {"name": "ask", "arguments": {}}, model=dict)
        assert refused.value.code == ErrorCode.METHOD_NOT_FOUND
        with pytest.raises(McpError) as unknown:
            await session.send_request("tasks/result", {"taskId": "nope"}, model=dict)
        assert unknown.value.code == ErrorCode.INVALID_PARAMS


async def test_a_task_asks_through_tasks_result(autojump_clock: trio.abc.Clock) -> None:
    async with open_pair(make_server([]), protocol_version=CORE, elicitation=answer_name) as pair:
        result = await pair.client.call_tool("ask", as_task=True)
    assert result.content[0].text == "hi Bo"  # type: ignore[union-attr]


async def test_a_failed_and_a_cancelled_core_task(autojump_clock: trio.abc.Clock) -> None:
    events: list[str] = []
    async with open_pair(make_server(events), protocol_version=CORE) as pair:
        with pytest.raises(McpError) as failed:
            await pair.client.call_tool("broken", as_task=True)
        assert failed.value.code == ErrorCode.INVALID_PARAMS
        assert failed.value.message == "broken on purpose"
        with trio.move_on_after(5):
            await pair.client.call_tool("slow", {"seconds": 600}, as_task=True)
        await trio.sleep(1)  # the task/cancel sent on the way out has been handled
    assert events == ["task True", "cancelled"]


@pytest.mark.usefixtures("front_end")
async def test_over_legacy_http_the_app_runs_the_task() -> None:
    """Legacy Streamable HTTP sessions run core tasks in the app's task nursery (they used
    to answer a task-augmented call at once, without a task)."""
    from http_support import running

    from trio_mcp.http import asgi_app, open_http_client

    events: list[str] = []
    app = asgi_app(make_server(events))
    async with (
        running(app) as base,
        open_http_client(f"{base}/mcp", protocol_version=CORE) as client,
    ):
        with trio.fail_after(20):
            async with client.open_tool_task("slow", {"seconds": 0.1}) as task:
                assert task.task_id is not None
                result = await task.result()
    assert result.content[0].text == "slept 0.1"  # type: ignore[union-attr]
    assert events == ["task True"]


async def test_tasks_list_gives_the_callers_own_tasks_a_page_at_a_time(
    autojump_clock: trio.abc.Clock,
) -> None:
    server = make_server([])
    server.page_size = 2
    async with (
        open_pair(server, protocol_version=CORE, server_options={"principal": "alice"}) as alice,
        open_pair(server, protocol_version=CORE, server_options={"principal": "bob"}) as bob,
    ):
        ids = []
        for seconds in (1, 2, 3):
            async with alice.client.open_tool_task("slow", {"seconds": seconds}) as task:
                assert task.task_id is not None
                ids.append(task.task_id)
                await task.result()
        async with bob.client.open_tool_task("slow", {"seconds": 1}) as task:
            await task.result()
        first = await alice.client.list_tasks_page()
        assert len(first.tasks) == 2 and first.next_cursor is not None
        listed = await alice.client.list_tasks()
        assert [t.task_id for t in listed] == ids
        assert all(t.status == "completed" for t in listed)
        assert [t.task_id for t in await bob.client.list_tasks()] == [task.task_id]
        with pytest.raises(McpError) as bad:
            await alice.client.session.send_request("tasks/list", {"cursor": "nope"}, model=dict)
        assert bad.value.code == ErrorCode.INVALID_PARAMS


async def test_tasks_list_is_the_2025_11_25_cores_only(autojump_clock: trio.abc.Clock) -> None:
    async with open_pair(make_server([]), protocol_version="2026-07-28") as pair:
        with pytest.raises(McpError) as refused:
            await pair.client.list_tasks()
        assert refused.value.code == ErrorCode.METHOD_NOT_FOUND
    async with open_raw(make_server([]), "2026-07-28") as raw:
        with pytest.raises(McpError) as wire:
            await raw.session.send_request("tasks/list", {}, model=dict)
        assert wire.value.code == ErrorCode.METHOD_NOT_FOUND
