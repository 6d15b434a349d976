"""The Trio session engine: cancellation both ways, progress, timeouts, closing, bad input,
backpressure. Time is a MockClock: nothing sleeps for real."""

from __future__ import annotations

from functools import partial
from typing import Any

import orjson
import pytest
import trio
import trio.testing

from trio_mcp import ConnectionClosed, ErrorCode, McpError, RequestTimeout, jsonrpc, types as t
from trio_mcp.protocol import Connection, InboundRequest
from trio_mcp.session import (
    PROGRESS_BUFFER,
    Session,
    connect_session,
    open_session,
)
from trio_mcp.testing import SessionPair, memory_session_pair
from trio_mcp.transports import MemoryMessageStream, memory_stream_pair

CAPS = t.ServerCapabilities(tools=t.ToolsCapability(), logging={})


class Recorder:
    """A handler that records what happened to each request."""

    def __init__(self) -> None:
        self.started: list[Any] = []
        self.cancelled: list[Any] = []
        self.finished: list[Any] = []
        self.release = trio.Event()

    async def handle(self, session: Session, request: InboundRequest) -> Any:
        if request.method != "tools/call":
            raise McpError(f"Method not found: {request.method}", code=-32601)
        self.started.append(request.id)
        name = request.params.name
        try:
            if name == "wait":
                await self.release.wait()
            elif name == "forever":
                await trio.sleep_forever()
            elif name == "progress":
                for step in range(5):
                    await session.send_progress(request, step, 5, f"step {step}")
            elif name == "chatty":
                for step in range(100):
                    await session.send_progress(request, step, 100)
                await self.release.wait()
            elif name == "fail":
                raise McpError("it failed", code=-32099 + 0, data={"why": "asked to"})
            elif name == "crash":
                raise ZeroDivisionError("boom")
        except trio.Cancelled:
            self.cancelled.append(request.id)
            raise
        self.finished.append(request.id)
        return t.CallToolResult(content=[t.TextContent(text=str(name))])


def call(name: str) -> t.CallToolRequest:
    return t.CallToolRequest(params=t.CallToolRequestParams(name=name))


@pytest.fixture(params=["legacy", "modern"])
def era(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def session_pair_options(recorder: Recorder, request: pytest.FixtureRequest) -> dict[str, Any]:
    """The ``pair`` fixture here (tests/conftest.py): a server answering with the recorder,
    declaring CAPS; in the test's era when the test takes ``era``, else legacy. The
    fuzzer's regression tests below name their own handler, and no capabilities
    (``server_capabilities=None``), with ``@pytest.mark.session_pair``."""
    options: dict[str, Any] = {
        "server_capabilities": CAPS,
        "server_options": {"handler": recorder.handle},
    }
    if "era" in request.fixturenames:
        options["modern"] = request.getfixturevalue("era") == "modern"
    return options


async def test_request_and_result(
    pair: SessionPair, era: str, autojump_clock: trio.testing.MockClock
) -> None:
    result = await pair.client.request(call("echo"))
    assert result.content == [t.TextContent(text="echo")]
    with pytest.raises(McpError) as raised:
        await pair.client.request(call("fail"))
    assert (raised.value.code, raised.value.data) == (-32099, {"why": "asked to"})
    with pytest.raises(McpError) as crashed:
        await pair.client.request(call("crash"))
    assert crashed.value.code == -32603 and "boom" not in crashed.value.message  # no internals leak
    assert (await pair.client.request(call("echo"))).content[
        0
    ].text == "echo"  # the session goes on


async def test_caller_cancellation_cancels_the_handler_and_drops_the_late_answer(
    recorder: Recorder, pair: SessionPair, era: str, autojump_clock: trio.testing.MockClock
) -> None:
    with trio.move_on_after(5) as scope:
        await pair.client.request(call("forever"))
    assert scope.cancelled_caught
    await trio.testing.wait_all_tasks_blocked()
    assert recorder.cancelled == recorder.started  # the server's handler scope was cancelled
    assert pair.server.connection.in_flight == 0
    assert pair.client.connection.outstanding == 0
    assert pair.server.connection.statistics().errors_replied == 0  # and nothing answered it
    assert (await pair.client.request(call("echo"))).content[0].text == "echo"


async def test_a_late_answer_after_cancelling_is_dropped(
    autojump_clock: trio.testing.MockClock,
) -> None:
    client_stream, server_stream = memory_stream_pair()
    connection = Connection(
        "client", info=t.Implementation(name="c", version="0"), modern_version="2026-07-28"
    )
    async with open_session(client_stream, connection) as session:
        with trio.move_on_after(1):
            await session.request(call("slow"))
        request = await server_stream.receive()
        cancel = await server_stream.receive()
        assert isinstance(request, jsonrpc.JsonRpcRequest)
        assert cancel == jsonrpc.JsonRpcNotification(
            "notifications/cancelled",
            {"requestId": request.id, "reason": "the caller stopped waiting"},
        )
        # The server's answer crossed the cancellation: it arrives late, and is dropped.
        await server_stream.send(jsonrpc.ResultResponse(request.id, {"content": []}))
        await trio.testing.wait_all_tasks_blocked()
        assert session.connection.statistics().responses_dropped == 1
        assert session.connection.outstanding == 0

        async def answer_next() -> None:
            nxt = await server_stream.receive()
            assert isinstance(nxt, jsonrpc.JsonRpcRequest) and nxt.id != request.id
            await server_stream.send(
                jsonrpc.ResultResponse(nxt.id, {"content": [{"type": "text", "text": "ok"}]})
            )

        async with trio.open_nursery() as nursery:
            nursery.start_soon(answer_next)
            assert (await session.request(call("again"))).content[0].text == "ok"


async def test_peer_cancellation_cancels_only_that_request(
    recorder: Recorder, pair: SessionPair, autojump_clock: trio.testing.MockClock
) -> None:
    results: dict[str, Any] = {}

    async def run(name: str, scope: trio.CancelScope) -> None:
        with scope:
            results[name] = await pair.client.request(call(name))

    forever_scope = trio.CancelScope()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(run, "wait", trio.CancelScope())
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(run, "forever", forever_scope)
        await trio.testing.wait_all_tasks_blocked()
        assert len(recorder.started) == 2
        forever_scope.cancel()
        await trio.testing.wait_all_tasks_blocked()
        assert recorder.cancelled == [recorder.started[1]]
        assert recorder.finished == []
        recorder.release.set()
    assert results["wait"].content[0].text == "wait"
    assert "forever" not in results
    assert recorder.finished == [recorder.started[0]]


async def test_progress_callback_and_iterator(
    pair: SessionPair, era: str, autojump_clock: trio.testing.MockClock
) -> None:
    seen: list[float] = []
    result = await pair.client.request(
        call("progress"), on_progress=lambda p: seen.append(p.progress)
    )
    assert seen == [0, 1, 2, 3, 4]
    assert result.content[0].text == "progress"
    params = t.converter_for(pair.client.connection.version or "").unstructure(
        call("progress").params
    )
    async with pair.client.open_request(
        "tools/call", params, progress=True, model=t.CallToolResult
    ) as request:
        updates = [update.message async for update in request]
        final = await request.result()
    assert updates == [f"step {i}" for i in range(5)]
    assert final.content[0].text == "progress"
    # Progress for a request that asked for none is not sent.
    assert (await pair.client.request(call("progress"))).content[0].text == "progress"
    stats = pair.client.connection.statistics()
    assert stats.progress_dropped == 0


@pytest.mark.session_pair(client_options={"request_timeout": 3})
async def test_session_request_timeout_cancels_then_raises(
    recorder: Recorder, pair: SessionPair, autojump_clock: trio.testing.MockClock
) -> None:
    before = trio.current_time()
    with pytest.raises(RequestTimeout):
        await pair.client.request(call("forever"))
    assert trio.current_time() - before == pytest.approx(3)
    await trio.testing.wait_all_tasks_blocked()
    assert recorder.cancelled == recorder.started


async def test_peer_going_away_fails_every_pending_request_at_once(
    pair: SessionPair, autojump_clock: trio.testing.MockClock
) -> None:
    outcomes: list[BaseException] = []

    async def waiting() -> None:
        try:
            await pair.client.request(call("forever"))
        except ConnectionClosed as exc:
            outcomes.append(exc)

    async with trio.open_nursery() as nursery:
        for _ in range(3):
            nursery.start_soon(waiting)
        await trio.testing.wait_all_tasks_blocked()
        start = trio.current_time()
        await pair.server.aclose()
    assert len(outcomes) == 3 and trio.current_time() == start
    with pytest.raises(ConnectionClosed):
        await pair.client.request(call("echo"))


async def test_a_caller_whose_session_stops_under_it_still_tells_the_peer(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """The session's nursery is cancelled while a caller outside it waits: the caller gets
    ConnectionClosed, and the peer, which never heard of it, still gets the cancellation
    (the stream works: nobody closed it)."""
    client_stream, server_stream = memory_stream_pair()
    connection = Connection(
        "client", info=t.Implementation(name="c", version="0"), modern_version="2026-07-28"
    )
    async with trio.open_nursery() as callers:
        async with trio.open_nursery() as nursery:
            session = await connect_session(nursery, client_stream, connection)

            async def caller() -> None:
                with pytest.raises(ConnectionClosed):
                    await session.request(call("slow"))

            callers.start_soon(caller)
            request = await server_stream.receive()
            nursery.cancel_scope.cancel()
        with trio.fail_after(1):
            cancel = await server_stream.receive()
    assert isinstance(request, jsonrpc.JsonRpcRequest)
    assert cancel == jsonrpc.JsonRpcNotification(
        "notifications/cancelled",
        {"requestId": request.id, "reason": "the caller stopped waiting"},
    )
    assert connection.outstanding == 0


async def test_input_end_drains_running_handlers_then_cancels(
    autojump_clock: trio.testing.MockClock,
) -> None:
    client_stream, server_stream = memory_stream_pair()
    recorder = Recorder()
    connection = Connection(
        "server",
        info=t.Implementation(name="s", version="0"),
        capabilities=CAPS,
        versions=["2025-11-25"],
    )
    async with trio.open_nursery() as nursery:
        session = await connect_session(
            nursery, server_stream, connection, handler=recorder.handle, drain_timeout=10
        )
        await client_stream.send(
            jsonrpc.JsonRpcRequest(
                1,
                "initialize",
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "c", "version": "1"},
                },
            )
        )
        await client_stream.receive()
        await client_stream.send(jsonrpc.JsonRpcNotification("notifications/initialized"))
        await client_stream.send(jsonrpc.JsonRpcRequest(2, "tools/call", {"name": "wait"}))
        await client_stream.send(jsonrpc.JsonRpcRequest(3, "tools/call", {"name": "forever"}))
        await trio.testing.wait_all_tasks_blocked()
        await client_stream._send_channel.aclose()  # input ends; the output still works
        await trio.sleep(1)
        recorder.release.set()
        answer = await client_stream.receive()  # the running request still answers
        assert isinstance(answer, jsonrpc.ResultResponse) and answer.id == 2
        start = trio.current_time()
        await session.wait_finished()
        assert trio.current_time() - start == pytest.approx(
            9
        )  # "forever" was cancelled at the deadline
        assert recorder.cancelled == [3]
        await session.aclose()


async def test_bad_input_gets_errors_and_the_session_goes_on(
    pair: SessionPair, autojump_clock: trio.testing.MockClock
) -> None:
    raw = pair.client.stream
    assert isinstance(raw, MemoryMessageStream)
    peer = pair.client
    # Talk to the server underneath the client session: swap in a raw reader.
    replies: list[Any] = []
    original = peer.connection.receive

    def capture(message: Any) -> Any:
        replies.append(message)
        return original(message)

    peer.connection.receive = capture  # type: ignore[method-assign]
    for data in (
        b"{not json",
        b"[]",
        b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":5}}',
        b'{"jsonrpc":"2.0","id":10,"method":"nope/nope"}',
        b'[{"jsonrpc":"2.0","id":11,"method":"ping"}]',
    ):
        await raw.send_raw(data)
    await trio.testing.wait_all_tasks_blocked()
    codes = [r.error.code for r in replies if isinstance(r, jsonrpc.ErrorResponse)]
    # The unknown method is answered by a handler task, the rest inline: compare as a multiset.
    # The last -32600 is the batch: batches are not allowed in 2025-11-25.
    assert sorted(codes) == sorted([-32700, -32600, -32602, -32601, -32600])
    assert (await peer.request(call("echo"))).content[0].text == "echo"


@pytest.mark.session_pair(server_options={"max_concurrent_requests": 2}, buffer=1)
async def test_handlers_beyond_the_limit_wait_for_a_turn(
    recorder: Recorder, pair: SessionPair, autojump_clock: trio.testing.MockClock
) -> None:
    # Up to max_concurrent_requests more wait for a slot (beyond that they are refused:
    # see test_requests_beyond_the_backlog_are_refused_at_once); the receive loop keeps
    # reading meanwhile.
    async with trio.open_nursery() as nursery:
        for _ in range(4):
            nursery.start_soon(pair.client.request, call("wait"))
        await trio.testing.wait_all_tasks_blocked()
        assert len(recorder.started) == 2
        await pair.client.request(t.PingRequest())  # still read and answered
        recorder.release.set()
    assert len(recorder.finished) == 4


async def test_open_session_leaves_nothing_running(autojump_clock: trio.testing.MockClock) -> None:
    recorder = Recorder()
    a, b = memory_stream_pair()
    server_conn = Connection(
        "server", info=t.Implementation(name="s", version="0"), capabilities=CAPS
    )
    before = (
        len(trio.lowlevel.current_root_task().child_nurseries[0].child_tasks)
        if trio.lowlevel.current_root_task().child_nurseries
        else 0
    )
    async with open_session(b, server_conn, handler=recorder.handle) as session:
        await a.send(
            jsonrpc.JsonRpcRequest(
                1,
                "tools/call",
                {
                    "name": "forever",
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientCapabilities": {},
                    },
                },
            )
        )
        await trio.testing.wait_all_tasks_blocked()
        assert recorder.started == [1]
    # leaving the block cancelled the handler and closed the stream
    assert recorder.cancelled == [1]
    assert session.closed
    await session.wait_finished()
    with pytest.raises(trio.EndOfChannel):
        await a.receive()
    await session.aclose()  # idempotent
    after = (
        len(trio.lowlevel.current_root_task().child_nurseries[0].child_tasks)
        if trio.lowlevel.current_root_task().child_nurseries
        else 0
    )
    assert after == before


async def test_exceptions_from_the_block_are_not_wrapped(
    autojump_clock: trio.testing.MockClock,
) -> None:
    a, b = memory_stream_pair()
    connection = Connection("server", info=t.Implementation(name="s", version="0"))
    with pytest.raises(KeyError):
        async with open_session(b, connection):
            raise KeyError("mine")


async def test_notifications_reach_the_handler_in_order(
    autojump_clock: trio.testing.MockClock,
) -> None:
    received: list[str] = []

    async def on_notification(session: Session, method: str, params: Any) -> None:
        await trio.sleep(0.01)
        received.append(method)

    caps = t.ServerCapabilities(
        tools=t.ToolsCapability(list_changed=True), prompts=t.PromptsCapability(list_changed=True)
    )
    async with memory_session_pair(
        server_capabilities=caps, client_options={"notification_handler": on_notification}
    ) as pair:
        for method in [
            "notifications/tools/list_changed",
            "notifications/prompts/list_changed",
        ] * 3:
            await pair.server.send_notification(method)
        await trio.sleep(1)
    assert (
        received == ["notifications/tools/list_changed", "notifications/prompts/list_changed"] * 3
    )


async def test_log_messages_respect_the_level(autojump_clock: trio.testing.MockClock) -> None:
    logs: list[Any] = []

    async def on_notification(session: Session, method: str, params: Any) -> None:
        logs.append((params.level, params.data))

    async def handler(session: Session, request: InboundRequest) -> Any:
        for level in ("debug", "info", "error"):
            await session.log(level, f"{level} message", related=request)  # type: ignore[arg-type]
        return t.CallToolResult(content=[])

    async with memory_session_pair(
        server_capabilities=CAPS,
        server_options={"handler": handler},
        client_options={"notification_handler": on_notification},
    ) as pair:
        await pair.client.request(t.SetLevelRequest(params=t.SetLevelRequestParams(level="info")))
        await pair.client.request(call("x"))
        await trio.testing.wait_all_tasks_blocked()
    assert logs == [("info", "info message"), ("error", "error message")]


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26"])
async def test_a_batch_is_answered_item_by_item(
    version: str, autojump_clock: trio.testing.MockClock
) -> None:
    # Revisions with batches: each request of a batch is answered in a message of its own,
    # as soon as it is ready (the quick ping does not wait for the slow tool), and the
    # notification in it gets nothing; a batch of notifications alone gets no answer at all.
    # (Why not one array: see "Batches" in trio_mcp/_session/_engine.py.)
    recorder = Recorder()
    notified: list[str] = []

    async def on_notification(session: Session, method: str, params: Any) -> None:
        notified.append(method)

    to_server, server_in = trio.open_memory_channel[bytes](64)
    server_out, from_server = trio.open_memory_channel[bytes](64)
    server_conn = Connection(
        "server", info=t.Implementation(name="s", version="0"), capabilities=CAPS
    )
    async with open_session(
        MemoryMessageStream(server_out, server_in),
        server_conn,
        handler=recorder.handle,
        notification_handler=on_notification,
    ):
        initialize = {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        }
        await to_server.send(
            orjson.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize})
        )
        answer = orjson.loads(await from_server.receive())
        assert answer["result"]["protocolVersion"] == version
        await to_server.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        await to_server.send(
            orjson.dumps(
                [
                    {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "tools/call",
                        "params": {"name": "wait"},
                    },
                    {"jsonrpc": "2.0", "id": 2, "method": "ping"},
                    {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
                ]
            )
        )
        first = orjson.loads(await from_server.receive())
        assert first == {"jsonrpc": "2.0", "id": 2, "result": {}}
        await trio.testing.wait_all_tasks_blocked()
        assert recorder.started == [1]
        with pytest.raises(trio.WouldBlock):
            from_server.receive_nowait()
        recorder.release.set()
        second = orjson.loads(await from_server.receive())
        assert second == {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {"content": [{"type": "text", "text": "wait"}]},
        }
        assert notified == ["notifications/initialized", "notifications/roots/list_changed"]

        # Notifications alone: nothing comes back (the ping after them is the next answer).
        await to_server.send(
            orjson.dumps([{"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}] * 2)
        )
        await to_server.send(b'{"jsonrpc":"2.0","id":3,"method":"ping"}')
        assert orjson.loads(await from_server.receive()) == {
            "jsonrpc": "2.0",
            "id": 3,
            "result": {},
        }
        assert notified[1:] == ["notifications/roots/list_changed"] * 3


async def test_progress_for_a_slow_reader_keeps_only_the_newest(
    recorder: Recorder, pair: SessionPair, autojump_clock: trio.testing.MockClock
) -> None:
    # The peer reports 100 times before we read once ("chatty", which then waits for the
    # release): the receive loop does not wait for us, the buffer keeps the newest
    # PROGRESS_BUFFER updates, and the rest are counted.
    params = {"name": "chatty", "arguments": {}}
    async with pair.client.open_request("tools/call", params, progress=True) as request:
        await trio.testing.wait_all_tasks_blocked()  # all 100 sent and received
        assert request.dropped_progress == 100 - PROGRESS_BUFFER
        recorder.release.set()
        updates = [update.progress async for update in request]
        await request.result()
    assert updates == list(range(100 - PROGRESS_BUFFER, 100))
    assert pair.client.connection.statistics().progress_dropped == 100 - PROGRESS_BUFFER

    # A slow callback: what arrives while it runs waits in the same bounded buffer.
    seen: list[float] = []

    async def slow(update: t.ProgressNotificationParams) -> None:
        seen.append(update.progress)
        await trio.sleep(1)

    recorder.release = trio.Event()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(
            partial(pair.client.send_request, "tools/call", params, on_progress=slow)
        )
        await trio.testing.wait_all_tasks_blocked()
        recorder.release.set()
    dropped = pair.client.connection.statistics().progress_dropped - (100 - PROGRESS_BUFFER)
    assert len(seen) <= 1 + PROGRESS_BUFFER
    assert len(seen) + dropped == 100
    assert seen[-PROGRESS_BUFFER:] == list(range(100 - PROGRESS_BUFFER, 100))


async def test_two_tasks_may_wait_on_one_request_and_either_may_be_cancelled(
    recorder: Recorder, pair: SessionPair, autojump_clock: trio.testing.MockClock
) -> None:
    """Several tasks may wait for one request's answer: all wake, and cancelling one of
    them leaves the others waiting."""
    params = {"name": "wait", "arguments": {}}
    async with pair.client.open_request("tools/call", params) as request:
        answers: list[Any] = []
        impatient = trio.CancelScope()

        async def await_answer() -> None:
            answers.append(await request.answer())

        async def give_up() -> None:
            with impatient:
                await request.answer()

        with trio.fail_after(10):  # a waiter never woken fails, at once on the mock clock
            async with trio.open_nursery() as nursery:
                nursery.start_soon(await_answer)
                nursery.start_soon(give_up)
                nursery.start_soon(await_answer)
                await trio.testing.wait_all_tasks_blocked()
                impatient.cancel()  # one waiter leaves; the others stay
                await trio.testing.wait_all_tasks_blocked()
                assert answers == []
                recorder.release.set()
    assert impatient.cancelled_caught
    assert len(answers) == 2 and answers[0] is answers[1]


async def test_a_request_id_repeated_in_a_batch_gets_an_error_not_a_second_run(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Issue 11, item 9: a batch that repeats a request id. The first request is answered;
    each repeat gets -32600 with that id (it used to run again when the first had
    finished: two results for one id)."""
    to_server, server_in = trio.open_memory_channel[bytes](64)
    server_out, from_server = trio.open_memory_channel[bytes](64)
    server_conn = Connection(
        "server", info=t.Implementation(name="s", version="0"), capabilities=CAPS
    )
    async with open_session(MemoryMessageStream(server_out, server_in), server_conn):
        initialize = {
            "protocolVersion": "2025-03-26",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        }
        await to_server.send(
            orjson.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize})
        )
        assert orjson.loads(await from_server.receive())["id"] == 0
        await to_server.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        ping = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
        await to_server.send(orjson.dumps([ping, ping, ping]))
        await trio.testing.wait_all_tasks_blocked()
        answers = [orjson.loads(await from_server.receive()) for _ in range(3)]
        with pytest.raises(trio.WouldBlock):
            from_server.receive_nowait()
    assert answers[0] == {"jsonrpc": "2.0", "id": 3, "result": {}}
    assert (
        answers[1:]
        == [
            {
                "jsonrpc": "2.0",
                "id": 3,
                "error": {
                    "code": -32600,
                    "message": "Invalid Request: request id 3 is used more than once in this batch",
                },
            }
        ]
        * 2
    )


async def echo_or_garbage(session: Session, request: InboundRequest) -> Any:
    params = request.raw_params or {}
    if params.get("garbage"):
        return {"value": {"a set is not JSON"}}
    return {"value": params.get("n")}


# Found by the lifecycle fuzzer (fuzz/test_session_interleavings.py).
@pytest.mark.session_pair(server_capabilities=None, server_options={"handler": echo_or_garbage})
async def test_unserializable_result_is_an_internal_error_not_a_dead_session(
    pair: SessionPair, era: str, autojump_clock: trio.testing.MockClock
) -> None:
    # The TypeError from serializing the answer escaped the handler task and tore down the
    # session's nursery (and with it the caller's block); the request was never answered.
    with pytest.raises(McpError) as caught:
        await pair.client.send_request("x/custom", {"garbage": True})
    assert caught.value.code == ErrorCode.INTERNAL_ERROR
    result = await pair.client.send_request("x/custom", {"n": 2})
    assert result["value"] == 2


# Found by the lifecycle fuzzer (fuzz/test_session_interleavings.py).
@pytest.mark.parametrize("modern", [False, True])
async def test_closing_the_session_closes_its_notification_channel(
    modern: bool, autojump_clock: trio.testing.MockClock
) -> None:
    # When the session was closed (rather than its input ending) the cancel skipped the
    # aclose() of the channel feeding the notification handler: its send side stayed open
    # after the session had finished.
    async with memory_session_pair(modern=modern) as pair:
        pass
    for session in (pair.client, pair.server):
        with trio.fail_after(1):
            await session.wait_finished()
        assert session._notifications_in.statistics().open_send_channels == 0


async def an_hour_of_work(session: Session, request: InboundRequest) -> Any:
    await trio.sleep(3600)
    return {}


# Found by the lifecycle fuzzer (fuzz/test_session_interleavings.py).
@pytest.mark.session_pair(server_capabilities=None, server_options={"handler": an_hour_of_work})
async def test_cancellation_read_before_the_handler_starts_is_not_lost(
    pair: SessionPair, era: str, autojump_clock: trio.testing.MockClock
) -> None:
    # The handler's cancel scope was registered only once its task ran. A cancellation
    # read in between (the caller gave up at once) found no scope, so the handler ran to
    # completion: for one that waits on something, an hour of work nobody wanted.
    for _ in range(20):
        async with pair.client.open_request("x/custom"):
            pass  # leave before the answer: the client sends notifications/cancelled
    await trio.sleep(1)
    # Whichever way each race went, no handler is still at work a second later.
    assert pair.server.connection.in_flight == 0
    assert pair.server._inbound.scopes == {}


async def waits_as_told(session: Session, request: InboundRequest) -> Any:
    params = request.raw_params or {}
    if params.get("forever"):
        await trio.sleep_forever()
    if params.get("ping_back"):
        # The handler needs the peer, and so the receive loop, to finish.
        await session.send_request("ping")
    return {"value": params.get("n")}


# Found by the lifecycle fuzzer (fuzz/test_session_interleavings.py).
@pytest.mark.session_pair(
    server_capabilities=None,
    server_options={"handler": waits_as_told, "max_concurrent_requests": 1},
)
async def test_full_house_does_not_stop_cancellations_from_being_read(
    pair: SessionPair, autojump_clock: trio.testing.MockClock
) -> None:
    # With every handler slot taken, the receive loop waited for a slot before reading
    # on: the cancellation that would free the slot sat unread behind the next request,
    # and the session deadlocked.

    async def give_up_after_a_second() -> None:
        with trio.move_on_after(1):
            await pair.client.send_request("x/custom", {"forever": True})

    async with trio.open_nursery() as nursery:
        nursery.start_soon(give_up_after_a_second)
        await trio.sleep(0.5)
        with trio.fail_after(60):
            result = await pair.client.send_request("x/custom", {"n": 2})
    assert result["value"] == 2


# Found by the lifecycle fuzzer (fuzz/test_session_interleavings.py).
@pytest.mark.session_pair(
    server_capabilities=None,
    server_options={"handler": waits_as_told, "max_concurrent_requests": 1},
)
async def test_full_house_does_not_stop_answers_to_the_handlers_own_requests(
    pair: SessionPair, autojump_clock: trio.testing.MockClock
) -> None:
    # The same deadlock without any cancellation: the only running handler awaits the
    # peer's answer to its ping, and that answer sat unread behind the next request.
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            for n in range(2):  # one runs, one waits for its turn
                nursery.start_soon(
                    pair.client.send_request, "x/custom", {"n": n, "ping_back": True}
                )


async def ten_seconds_of_work(session: Session, request: InboundRequest) -> Any:
    await trio.sleep(10)
    return {"value": (request.raw_params or {})["n"]}


# Found by the lifecycle fuzzer (fuzz/test_session_interleavings.py).
@pytest.mark.session_pair(
    server_capabilities=None,
    server_options={"handler": ten_seconds_of_work, "max_concurrent_requests": 2},
)
async def test_requests_beyond_the_backlog_are_refused_at_once(
    pair: SessionPair, autojump_clock: trio.testing.MockClock
) -> None:
    # The other half of the fix: the receive loop no longer waits for a slot, so what it
    # cannot hold (max_concurrent_requests running and as many waiting) is refused.
    outcomes: list[Any] = []

    async def call(n: int) -> None:
        try:
            outcomes.append((await pair.client.send_request("x/custom", {"n": n}))["value"])
        except McpError as exc:
            outcomes.append(exc.code)

    async with trio.open_nursery() as nursery:
        for n in range(6):
            nursery.start_soon(call, n)
    # Which four are served depends on the order the callers got going.
    refused = [o for o in outcomes if o == ErrorCode.INTERNAL_ERROR]
    served = [o for o in outcomes if o != ErrorCode.INTERNAL_ERROR]
    assert len(refused) == 2
    assert len(set(served)) == 4
    assert set(served) <= set(range(6))


# Found by the lifecycle fuzzer (fuzz/test_session_interleavings.py).
async def test_lockstep_peers_pinging_each_other_at_once_do_not_deadlock(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # Each receive loop sent the protocol's own answers (ping, errors for bad input)
    # inline. Over a lockstep transport (buffer=0: a send waits for the peer's receive)
    # two simultaneous pings left each loop waiting to send its pong to the other loop,
    # which was waiting to send its own: both sessions hung.
    async with memory_session_pair(buffer=0) as pair:
        with trio.fail_after(60):
            async with trio.open_nursery() as nursery:
                for _ in range(3):
                    nursery.start_soon(pair.client.send_request, "ping")
                    nursery.start_soon(pair.server.send_request, "ping")
