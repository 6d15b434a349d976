"""The server side of the tasks extension (io.modelcontextprotocol/tasks), over memory
streams with raw requests: which calls become tasks, the task's life (polling, input,
cancellation, shutdown, expiry), who may see it, and the MRTR composition."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import jsonschema
import pytest
import trio
import trio.testing
from feature_harness import MODERN, open_raw
from spec_support import SPEC_DIR

from trio_mcp import Context, ErrorCode, McpError, Server
from trio_mcp.server import TASKS_EXTENSION, TaskSettings
from trio_mcp.tasks import MemoryTaskStore
from trio_mcp.types import ClientCapabilities, ElicitationCapability, InputRequiredResult

OPTED_IN = ClientCapabilities(
    elicitation=ElicitationCapability(form={}), extensions={TASKS_EXTENSION: {}}
)
NOT_OPTED_IN = ClientCapabilities(elicitation=ElicitationCapability(form={}))
YES_FORM = {"type": "object", "properties": {"ok": {"type": "boolean"}}}


class Recorder:
    def __init__(self) -> None:
        self.events: list[str] = []


def make_server(recorder: Recorder, **settings: Any) -> Server:
    server = Server("tasks", tasks=TaskSettings(**settings) if settings else None)

    @server.tool()
    async def plain(text: str) -> str:
        return text

    @server.tool(task="optional")
    async def slow(seconds: float, ctx: Context) -> str:
        recorder.events.append(f"start {ctx.task_id is not None}")
        try:
            await trio.sleep(seconds)
        except trio.Cancelled:
            recorder.events.append("cancelled")
            raise
        recorder.events.append("done")
        return f"slept {seconds:g}"

    @server.tool(task="always")
    async def only_task() -> str:
        return "ran"

    @server.tool(task="optional")
    async def tool_error() -> str:
        raise RuntimeError("tool went wrong")

    @server.tool(task="optional")
    async def protocol_error() -> str:
        raise McpError("no such thing", code=ErrorCode.INVALID_PARAMS, data={"why": "test"})

    @server.tool(task="optional")
    async def confirm(ctx: Context) -> str:
        answer = await ctx.elicit("Sure?", YES_FORM, key="sure")
        recorder.events.append(f"answered {answer.action}")
        return f"confirmed: {answer.action}"

    @server.tool(task="optional")
    async def two_questions(ctx: Context) -> str:
        from trio_mcp.types import ElicitRequest, ElicitRequestFormParams

        def ask(message: str) -> ElicitRequest:
            return ElicitRequest(
                params=ElicitRequestFormParams(message=message, requested_schema=YES_FORM)
            )

        answers = await ctx.ask({"a": ask("A?"), "b": ask("B?")})
        return " ".join(f"{k}={v.action}" for k, v in sorted(answers.items()))

    @server.tool(task="always", task_start="on_start_task")
    async def gather_then_task(ctx: Context) -> str:
        answer = await ctx.elicit(
            "Name?", {"type": "object", "properties": {"name": {"type": "string"}}}, key="name"
        )
        recorder.events.append(f"in task: {ctx.task_id is not None}")
        await ctx.start_task()
        await trio.sleep(1)
        return f"hello {(answer.content or {}).get('name')}"

    return server


def assert_ack(result: dict[str, Any]) -> None:
    """An empty acknowledgement: resultType complete, no task envelope."""
    assert result["resultType"] == "complete"
    assert not {"taskId", "status", "result", "error", "inputRequests"} & result.keys()


def schema_check(value: dict[str, Any], definition: str) -> None:
    path = SPEC_DIR / "ext-tasks-schema.json"
    if not path.exists():
        return  # the shapes are also asserted field by field below
    schema = json.loads(path.read_text())
    jsonschema.Draft202012Validator({**schema, "$ref": f"#/$defs/{definition}"}).validate(value)


async def poll_until(raw: Any, task_id: str, *statuses: str) -> dict[str, Any]:
    with trio.fail_after(60):
        while True:
            task = await raw.request("tasks/get", {"taskId": task_id})
            if task["status"] in statuses:
                return task  # type: ignore[no-any-return]
            await trio.sleep(0.1)


class Raw:
    """Raw requests whose results come back as the JSON the server sent (our client reads
    a tools/call result as a CallToolResult; these tests look at the wire)."""

    def __init__(self, peer: Any) -> None:
        self.peer = peer

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        return await self.peer.session.send_request(method, params, model=dict)


@asynccontextmanager
async def opted_in(server: Server, **options: Any) -> AsyncIterator[Raw]:
    async with open_raw(server, MODERN, capabilities=OPTED_IN, server_options=options) as raw:
        yield Raw(raw)


async def test_a_call_becomes_a_task_that_completes(autojump_clock: trio.abc.Clock) -> None:
    recorder = Recorder()
    server = make_server(recorder)
    async with opted_in(server) as raw:
        created = await raw.request("tools/call", {"name": "slow", "arguments": {"seconds": 5}})
        assert created["resultType"] == "task" and created["status"] == "working"
        assert isinstance(created["ttlMs"], int) and created["pollIntervalMs"] == 500
        assert not {"result", "error", "inputRequests", "requestState"} & created.keys()
        schema_check(created, "CreateTaskResult")
        # Recorded before it was announced: the first poll finds it.
        working = await raw.request("tasks/get", {"taskId": created["taskId"]})
        assert working["status"] == "working" and working["resultType"] == "complete"
        schema_check(working, "GetTaskResult")
        done = await poll_until(raw, created["taskId"], "completed")
        assert done["result"]["content"] == [{"type": "text", "text": "slept 5"}]
        assert "resultType" not in done["result"]
        schema_check(done, "GetTaskResult")
        # A plain tool stays a plain call for the same client.
        plain = await raw.request("tools/call", {"name": "plain", "arguments": {"text": "x"}})
        assert plain["content"][0]["text"] == "x" and "taskId" not in plain
    assert recorder.events == ["start True", "done"]


async def test_without_the_extension_calls_are_plain_or_refused(
    autojump_clock: trio.abc.Clock,
) -> None:
    recorder = Recorder()
    server = make_server(recorder)
    discover_caps = server.capabilities().extensions
    assert discover_caps == {TASKS_EXTENSION: {}}
    async with open_raw(server, MODERN, capabilities=NOT_OPTED_IN) as peer:
        raw = Raw(peer)
        result = await raw.request("tools/call", {"name": "slow", "arguments": {"seconds": 1}})
        assert result["content"][0]["text"] == "slept 1" and "taskId" not in result
        with pytest.raises(McpError) as refused:
            await raw.request("tools/call", {"name": "only_task", "arguments": {}})
        assert refused.value.code == ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY
        assert refused.value.data == {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}
        for method, params in [
            ("tasks/get", {"taskId": "x"}),
            ("tasks/update", {"taskId": "x", "inputResponses": {}}),
            ("tasks/cancel", {"taskId": "x"}),
        ]:
            with pytest.raises(McpError) as gated:
                await raw.request(method, params)
            assert gated.value.code == ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY
        for removed in ("tasks/result", "tasks/list"):
            with pytest.raises(McpError) as gone:
                await raw.request(removed, {"taskId": "x"})
            assert gone.value.code == ErrorCode.METHOD_NOT_FOUND
    assert recorder.events == ["start False", "done"]


async def test_a_server_without_task_tools_has_no_task_methods() -> None:
    server = Server("plain")

    @server.tool()
    async def echo(text: str) -> str:
        return text

    assert server.capabilities().extensions is None
    async with opted_in(server) as raw:
        with pytest.raises(McpError) as missing:
            await raw.request("tasks/get", {"taskId": "x"})
        assert missing.value.code == ErrorCode.METHOD_NOT_FOUND


async def test_tool_errors_complete_and_protocol_errors_fail(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with opted_in(make_server(Recorder())) as raw:
        created = await raw.request("tools/call", {"name": "tool_error", "arguments": {}})
        completed = await poll_until(raw, created["taskId"], "completed", "failed")
        assert completed["status"] == "completed" and completed["result"]["isError"] is True
        created = await raw.request("tools/call", {"name": "protocol_error", "arguments": {}})
        failed = await poll_until(raw, created["taskId"], "completed", "failed")
        assert failed["status"] == "failed" and "result" not in failed
        assert failed["error"] == {
            "code": ErrorCode.INVALID_PARAMS,
            "message": "no such thing",
            "data": {"why": "test"},
        }


async def test_cancel_cancels_the_scope_and_is_idempotent(
    autojump_clock: trio.abc.Clock,
) -> None:
    recorder = Recorder()
    async with opted_in(make_server(recorder)) as raw:
        created = await raw.request("tools/call", {"name": "slow", "arguments": {"seconds": 600}})
        await trio.sleep(1)
        assert_ack(await raw.request("tasks/cancel", {"taskId": created["taskId"]}))
        cancelled = await poll_until(raw, created["taskId"], "cancelled", "completed")
        assert cancelled["status"] == "cancelled"
        assert recorder.events == ["start True", "cancelled"]
        # Again, on a terminal task: the same ack, nothing changes.
        assert_ack(await raw.request("tasks/cancel", {"taskId": created["taskId"]}))
        assert (await raw.request("tasks/get", {"taskId": created["taskId"]}))["status"] == (
            "cancelled"
        )
        for method in ("tasks/get", "tasks/cancel"):
            with pytest.raises(McpError) as unknown:
                await raw.request(method, {"taskId": "no-such-task"})
            assert unknown.value.code == ErrorCode.INVALID_PARAMS


async def test_a_task_asks_and_waits_for_tasks_update(autojump_clock: trio.abc.Clock) -> None:
    recorder = Recorder()
    async with opted_in(make_server(recorder)) as raw:
        created = await raw.request("tools/call", {"name": "confirm", "arguments": {}})
        waiting = await poll_until(raw, created["taskId"], "input_required")
        schema_check(waiting, "GetTaskResult")
        ((key, request),) = waiting["inputRequests"].items()
        assert key == "sure" and request["method"] == "elicitation/create"
        assert request["params"]["message"] == "Sure?"
        # Answers to keys never asked are ignored; a non-object is refused.
        assert_ack(
            await raw.request(
                "tasks/update", {"taskId": created["taskId"], "inputResponses": {"other": {}}}
            )
        )
        with pytest.raises(McpError) as bad:
            await raw.request("tasks/update", {"taskId": created["taskId"], "inputResponses": 3})
        assert bad.value.code == ErrorCode.INVALID_PARAMS
        await trio.testing.wait_all_tasks_blocked()
        assert recorder.events == []
        answer = {"action": "accept", "content": {"ok": True}}
        await raw.request(
            "tasks/update", {"taskId": created["taskId"], "inputResponses": {key: answer}}
        )
        done = await poll_until(raw, created["taskId"], "completed")
        assert done["result"]["content"][0]["text"] == "confirmed: accept"
    assert recorder.events == ["answered accept"]


async def test_partial_answers_leave_the_rest_pending(autojump_clock: trio.abc.Clock) -> None:
    async with opted_in(make_server(Recorder())) as raw:
        created = await raw.request("tools/call", {"name": "two_questions", "arguments": {}})
        task_id = created["taskId"]
        waiting = await poll_until(raw, task_id, "input_required")
        assert set(waiting["inputRequests"]) == {"a", "b"}
        await raw.request(
            "tasks/update", {"taskId": task_id, "inputResponses": {"a": {"action": "decline"}}}
        )
        still = await raw.request("tasks/get", {"taskId": task_id})
        assert still["status"] == "input_required" and set(still["inputRequests"]) == {"b"}
        await raw.request(
            "tasks/update", {"taskId": task_id, "inputResponses": {"b": {"action": "cancel"}}}
        )
        done = await poll_until(raw, task_id, "completed")
        assert done["result"]["content"][0]["text"] == "a=decline b=cancel"


async def test_a_task_belongs_to_its_principal(autojump_clock: trio.abc.Clock) -> None:
    server = make_server(Recorder())
    async with server.running_tasks() as runner:
        assert runner is not None
        async with (
            opted_in(server, principal="alice", task_runner=runner) as alice,
            opted_in(server, principal="bob", task_runner=runner) as bob,
            opted_in(server, task_runner=runner) as anonymous,
        ):
            created = await alice.request("tools/call", {"name": "confirm", "arguments": {}})
            task_id = created["taskId"]
            for other in (bob, anonymous):
                for method, params in [
                    ("tasks/get", {"taskId": task_id}),
                    ("tasks/update", {"taskId": task_id, "inputResponses": {}}),
                    ("tasks/cancel", {"taskId": task_id}),
                ]:
                    with pytest.raises(McpError) as refused:
                        await other.request(method, params)
                    assert refused.value.code == ErrorCode.INVALID_PARAMS
                    assert "unknown task" in refused.value.message
            assert (await alice.request("tasks/get", {"taskId": task_id}))["status"] in (
                "working",
                "input_required",
            )


async def test_leaving_the_serving_block_fails_running_tasks(
    autojump_clock: trio.abc.Clock,
) -> None:
    store = MemoryTaskStore()
    recorder = Recorder()
    server = make_server(recorder, store=store)
    async with opted_in(server) as raw:
        created = await raw.request("tools/call", {"name": "slow", "arguments": {"seconds": 600}})
        await trio.sleep(1)
    record = await store.get(created["taskId"])
    assert record is not None and record.status == "failed"
    assert record.error is not None and "shut down" in record.error["message"]
    assert recorder.events == ["start True", "cancelled"]


class StuckStore(MemoryTaskStore):
    """A store that takes an hour to record a change (a database that does not answer)."""

    async def update(self, task_id: str, change: Any) -> Any:
        await trio.sleep(3600)
        return await super().update(task_id, change)


async def test_a_stuck_store_cannot_hold_a_finished_task_or_the_shutdown(
    autojump_clock: trio.abc.Clock,
) -> None:
    """Recording a finished task's outcome is shielded, but bounded (5 s, as documented):
    leaving the serving block is not held for the store's hour."""
    recorder = Recorder()
    async with opted_in(make_server(recorder, store=StuckStore())) as raw:
        await raw.request("tools/call", {"name": "slow", "arguments": {"seconds": 1}})
        await trio.sleep(2)  # the task is done; its outcome is being written
        assert recorder.events == ["start True", "done"]
        began = trio.current_time()
    assert trio.current_time() - began <= 5.0


async def test_tasks_beyond_max_running_wait_their_turn(autojump_clock: trio.abc.Clock) -> None:
    recorder = Recorder()
    async with opted_in(make_server(recorder, max_running=1)) as raw:
        first = await raw.request("tools/call", {"name": "slow", "arguments": {"seconds": 10}})
        second = await raw.request("tools/call", {"name": "slow", "arguments": {"seconds": 10}})
        await trio.sleep(5)
        assert recorder.events == ["start True"]
        assert (await raw.request("tasks/get", {"taskId": second["taskId"]}))["status"] == "working"
        await poll_until(raw, first["taskId"], "completed")
        await poll_until(raw, second["taskId"], "completed")
        assert recorder.events == ["start True", "done", "start True", "done"]


async def test_an_expired_task_is_unknown(autojump_clock: trio.abc.Clock) -> None:
    now = [1_900_000_000.0]
    store = MemoryTaskStore(clock=lambda: now[0])
    async with opted_in(make_server(Recorder(), store=store, ttl_ms=60_000)) as raw:
        created = await raw.request("tools/call", {"name": "only_task", "arguments": {}})
        assert created["ttlMs"] == 60_000
        await poll_until(raw, created["taskId"], "completed")
        now[0] += 59.999
        assert (await raw.request("tasks/get", {"taskId": created["taskId"]}))[
            "status"
        ] == "completed"
        now[0] += 0.001
        with pytest.raises(McpError) as gone:
            await raw.request("tasks/get", {"taskId": created["taskId"]})
        assert gone.value.code == ErrorCode.INVALID_PARAMS


async def test_input_rounds_before_the_task_then_the_task(autojump_clock: trio.abc.Clock) -> None:
    recorder = Recorder()
    async with opted_in(make_server(recorder)) as raw:
        first = await raw.request("tools/call", {"name": "gather_then_task", "arguments": {}})
        # (Our session reads an input-required answer as its model, whatever was asked.)
        assert isinstance(first, InputRequiredResult) and set(first.input_requests) == {"name"}
        created = await raw.request(
            "tools/call",
            {
                "name": "gather_then_task",
                "arguments": {},
                "inputResponses": {"name": {"action": "accept", "content": {"name": "Ann"}}},
                "requestState": first.request_state,
            },
        )
        assert created["resultType"] == "task" and "requestState" not in created
        done = await poll_until(raw, created["taskId"], "completed")
        assert done["result"]["content"][0]["text"] == "hello Ann"
    # Before the task the handler ran in the request; in the task it ran again from the top
    # and its question was answered at once (no input_required).
    assert recorder.events == ["in task: False", "in task: True"]


async def test_in_the_legacy_era_task_tools_are_plain_or_refused() -> None:
    """Without ``params.task`` (2025-11-25's core tasks: test_tasks_2025.py) a call is plain,
    and a tool that runs only as a task is refused as the TypeScript SDK refuses it."""
    async with open_raw(make_server(Recorder()), "2025-11-25", capabilities=OPTED_IN) as peer:
        raw = Raw(peer)
        result = await raw.request("tools/call", {"name": "slow", "arguments": {"seconds": 0}})
        assert result["content"][0]["text"] == "slept 0"
        with pytest.raises(McpError) as refused:
            await raw.request("tools/call", {"name": "only_task", "arguments": {}})
        assert refused.value.code == ErrorCode.METHOD_NOT_FOUND
    async with open_raw(make_server(Recorder()), "2025-06-18", capabilities=OPTED_IN) as peer:
        with pytest.raises(McpError) as refused:
            await Raw(peer).request("tools/call", {"name": "only_task", "arguments": {}})
        assert refused.value.code == ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY


def test_task_options_are_checked() -> None:
    server = Server("x")

    def tool() -> str:
        return "x"

    with pytest.raises(ValueError, match="task must be"):
        server.add_tool(tool, task="sometimes")
    with pytest.raises(ValueError, match="task_start must be"):
        server.add_tool(tool, task="always", task_start="later")
    assert server.tasks is None  # nothing was registered
    with pytest.raises(ValueError, match="max_running"):
        TaskSettings(max_running=0)


async def test_a_full_store_refuses_new_tasks(autojump_clock: trio.abc.Clock) -> None:
    store = MemoryTaskStore(max_tasks=1)
    async with opted_in(make_server(Recorder(), store=store)) as raw:
        await raw.request("tools/call", {"name": "slow", "arguments": {"seconds": 600}})
        with pytest.raises(McpError) as busy:
            await raw.request("tools/call", {"name": "slow", "arguments": {"seconds": 600}})
        assert busy.value.code == ErrorCode.INTERNAL_ERROR
        assert "Server busy" in busy.value.message


async def test_expired_records_are_swept(autojump_clock: trio.abc.Clock) -> None:
    now = [1_900_000_000.0]
    store = MemoryTaskStore(clock=lambda: now[0])
    async with opted_in(make_server(Recorder(), store=store, ttl_ms=1_000)) as raw:
        await raw.request("tools/call", {"name": "only_task", "arguments": {}})
        assert len(store) == 1
        now[0] += 2
        await trio.sleep(61)  # one sweep, with nobody reading the record
        assert len(store) == 0


async def test_status_notifications_on_a_listen_stream(autojump_clock: trio.abc.Clock) -> None:
    """subscriptions/listen with notifications.taskIds: the acknowledgement names the
    caller's known tasks, and each status change comes as notifications/tasks carrying the
    DetailedTask (what tasks/get would answer then)."""
    recorder = Recorder()
    async with open_raw(make_server(recorder), MODERN, capabilities=OPTED_IN) as peer:
        raw = Raw(peer)
        created = await raw.request("tools/call", {"name": "slow", "arguments": {"seconds": 5}})
        task_id = created["taskId"]
        async with trio.open_nursery() as nursery:

            async def listen() -> None:
                await raw.request(
                    "subscriptions/listen",
                    {"notifications": {"taskIds": [task_id, "no-such-task"]}},
                )

            nursery.start_soon(listen)
            await trio.sleep(10)  # the task completed meanwhile
            nursery.cancel_scope.cancel()
        notes = [
            m
            for m in peer.server_sent.sent
            if getattr(m, "method", "").startswith("notifications/")
        ]
        (ack,) = [m for m in notes if m.method == "notifications/subscriptions/acknowledged"]
        assert ack.params["notifications"]["taskIds"] == [task_id]
        statuses = [m.params for m in notes if m.method == "notifications/tasks"]
        assert statuses and statuses[-1]["taskId"] == task_id
        assert statuses[-1]["status"] == "completed"
        assert statuses[-1]["result"]["content"][0]["text"] == "slept 5"
        schema_check({k: v for k, v in statuses[-1].items() if k != "_meta"}, "DetailedTask")
    async with open_raw(make_server(Recorder()), MODERN, capabilities=NOT_OPTED_IN) as peer:
        with pytest.raises(McpError) as refused:
            await Raw(peer).request("subscriptions/listen", {"notifications": {"taskIds": ["x"]}})
        assert refused.value.code == ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY


async def test_tasks_beyond_running_and_waiting_are_refused(
    autojump_clock: trio.abc.Clock,
) -> None:
    store = MemoryTaskStore()
    async with opted_in(make_server(Recorder(), store=store, max_running=1, max_waiting=1)) as raw:
        for _ in range(2):  # one runs, one waits
            await raw.request("tools/call", {"name": "slow", "arguments": {"seconds": 600}})
        with pytest.raises(McpError) as busy:
            await raw.request("tools/call", {"name": "slow", "arguments": {"seconds": 600}})
        assert busy.value.code == ErrorCode.INTERNAL_ERROR and "Server busy" in busy.value.message
        assert len(store) == 2  # the refused call recorded nothing
