"""Who reads a session's input: the receive loop (the default), or, with the handover
on (``handback_delay=HANDBACK_DELAY``, an opt-in), the caller waiting for an answer (see
"Who reads" in trio_mcp/_session/_reader.py). Time is a MockClock, except where the test
is about what a real clock does; nothing sleeps for real."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import trio
import trio.testing

from trio_mcp import ConnectionClosed, McpError, types as t
from trio_mcp.protocol import InboundRequest
from trio_mcp.session import HANDBACK_DELAY, Session
from trio_mcp.testing import SessionPair, memory_session_pair

CAPS = t.ServerCapabilities(tools=t.ToolsCapability(list_changed=True), logging={})
#: The client options that turn the handover on.
HANDOVER = {"handback_delay": HANDBACK_DELAY}


class Tools:
    """The server's tools: ``echo``, ``wait`` (until released), ``chatty`` (sends a list
    change, two log messages and progress before it answers)."""

    def __init__(self) -> None:
        self.release = trio.Event()

    async def handle(self, session: Session, request: InboundRequest) -> Any:
        if request.method != "tools/call":
            raise McpError(f"Method not found: {request.method}", code=-32601)
        name = request.params.name
        if name == "wait":
            await self.release.wait()
        elif name == "chatty":
            await session.send_notification("notifications/tools/list_changed")
            for step in range(3):
                await session.log("info", f"step {step}", related=request)
                await session.send_progress(request, step, 3)
        return t.CallToolResult(content=[t.TextContent(text=name)])


def call(name: str) -> t.CallToolRequest:
    return t.CallToolRequest(params=t.CallToolRequestParams(name=name))


class Steps(trio.abc.Instrument):
    """Counts the steps each task takes."""

    def __init__(self) -> None:
        self.by_task: Counter[trio.lowlevel.Task] = Counter()

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        self.by_task[task] += 1


@contextmanager
def counting_steps() -> Iterator[Steps]:
    """Count each task's steps for the block."""
    steps = Steps()
    trio.lowlevel.add_instrument(steps)
    try:
        yield steps
    finally:
        trio.lowlevel.remove_instrument(steps)


class Unsolicited:
    """A client's notification handler that records what it got (the method, and a log
    message's data after it), and when."""

    def __init__(self) -> None:
        self.received: list[str] = []
        self.times: list[float] = []

    async def handle(self, session: Session, method: str, params: Any) -> None:
        data = getattr(params, "data", None)
        self.received.append(method if data is None else f"{method} {data}")
        self.times.append(trio.current_time())

    async def first_read_at(self) -> float:
        """When the first notification was handled (waits for it, at most a second)."""
        with trio.fail_after(1):
            while not self.times:
                await trio.sleep(HANDBACK_DELAY / 10)
        return self.times[0]


@pytest.fixture(params=[False, True], ids=["legacy", "modern"])
def modern(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


@pytest.fixture
def tools() -> Tools:
    return Tools()


@pytest.fixture
def unsolicited() -> Unsolicited:
    return Unsolicited()


@pytest.fixture
def session_pair_options(tools: Tools, request: pytest.FixtureRequest) -> dict[str, Any]:
    """The ``pair`` fixture here (tests/conftest.py): a server declaring CAPS, answering
    with ``tools``; in the test's era when the test takes ``modern``, else legacy; the
    client's notifications go to ``unsolicited`` when the test takes it. A test turns the
    handover on with ``@pytest.mark.session_pair(client_options=HANDOVER)``."""
    options: dict[str, Any] = {
        "server_capabilities": CAPS,
        "server_options": {"handler": tools.handle},
    }
    if "modern" in request.fixturenames:
        options["modern"] = request.getfixturevalue("modern")
    if "unsolicited" in request.fixturenames:
        handler = request.getfixturevalue("unsolicited").handle
        options["client_options"] = {"notification_handler": handler}
    return options


def receive_loop(session: Session) -> trio.lowlevel.Task:
    """The task that runs ``session``'s receive loop."""
    found = []

    def walk(task: trio.lowlevel.Task) -> None:
        frame = task.coro.cr_frame  # type: ignore[attr-defined]
        if task.name.endswith("Session._run") and frame.f_locals.get("self") is session:
            found.append(task)
        for nursery in task.child_nurseries:
            for child in nursery.child_tasks:
                walk(child)

    walk(trio.lowlevel.current_root_task())
    (task,) = found
    return task


@pytest.mark.parametrize("when", ["with the answer", "right after the answer"])
async def test_wait_all_tasks_blocked_means_the_client_handled_everything(
    when: str, unsolicited: Unsolicited, pair: SessionPair, modern: bool
) -> None:
    """The idiom Trio users write their tests with: make a call, have the server send a
    notification (while it answers, or right after), ``await wait_all_tasks_blocked()``;
    by then the client has handled it. By default, that is: with the handover on (as it
    once was by default) the receive loop parked on a 10 ms deadline after the answer,
    wait_all_tasks_blocked returned at once, and the notification was still unread.
    (The real clock, so that nothing jumps ahead; nothing sleeps.)"""
    for _ in range(3):
        unsolicited.received.clear()
        with trio.fail_after(5):
            if when == "with the answer":
                await pair.client.request(call("chatty"))  # notifies, then answers
            else:
                await pair.client.request(call("echo"))
                await pair.server.send_notification("notifications/tools/list_changed")
        await trio.testing.wait_all_tasks_blocked()
        assert unsolicited.received[:1] == ["notifications/tools/list_changed"]


@pytest.mark.session_pair(client_options=HANDOVER)
async def test_a_sequential_caller_reads_its_answers_itself(
    pair: SessionPair, modern: bool, autojump_clock: trio.testing.MockClock
) -> None:
    await pair.client.request(call("echo"))
    loop = receive_loop(pair.client)
    with counting_steps() as steps:
        for _ in range(50):
            result = await pair.client.request(call("echo"))
            assert result.content[0].text == "echo"  # type: ignore[union-attr]
    # The receive loop stays parked: each caller read its own answer. (Were the loop
    # reading, it would have woken at least once per call.)
    assert steps.by_task[loop] <= 2, steps.by_task[loop]


@pytest.mark.parametrize("reader", ["caller", "loop", "caller, after a long call"])
@pytest.mark.session_pair(client_options=HANDOVER)
async def test_a_message_nobody_asked_for_is_read_within_the_handback_delay(
    reader: str,
    tools: Tools,
    unsolicited: Unsolicited,
    pair: SessionPair,
    autojump_clock: trio.testing.MockClock,
) -> None:
    """After an answer the loop leaves the reading to the caller for HANDBACK_DELAY; a
    notification that comes when no call follows is read no later than that, whether
    the last answer was read by its caller or by the loop (``open_request``: its caller
    waits in the block and does not read)."""
    await pair.client.request(call("echo"))
    if reader == "caller, after a long call":
        # Longer than HANDBACK_DELAY: the loop wakes meanwhile, finds the caller
        # reading, and parks again without a deadline, until the caller is done.
        async with trio.open_nursery() as nursery:
            nursery.start_soon(pair.client.request, call("wait"))
            await trio.sleep(1)
            tools.release.set()
    if reader == "loop":
        async with pair.client.open_request("tools/call", {"name": "echo"}) as pending:
            await pending.result()
    sent_at = trio.current_time()
    await pair.server.send_notification("notifications/tools/list_changed")
    assert await unsolicited.first_read_at() - sent_at <= HANDBACK_DELAY + 1e-9  # (float sums)


@pytest.mark.session_pair(client_options=HANDOVER)
async def test_what_a_reading_caller_is_not_owed_goes_to_the_loop_in_order(
    unsolicited: Unsolicited,
    pair: SessionPair,
    modern: bool,
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Notifications and progress that come before the answer, while the caller reads,
    are handed to the receive loop in order; the caller still gets its answer."""
    progress: list[float] = []
    await pair.client.request(call("echo"))
    if not modern:
        await pair.client.send_request("logging/setLevel", {"level": "debug"})
    params = t.CallToolRequestParams(name="chatty")
    if modern:
        params = t.CallToolRequestParams(
            name="chatty", meta={"io.modelcontextprotocol/logLevel": "debug"}
        )
    for _ in range(3):  # the first from a reading caller, then again and again
        unsolicited.received.clear()
        progress.clear()
        with trio.fail_after(10):
            result = await pair.client.request(
                t.CallToolRequest(params=params),
                on_progress=lambda p: progress.append(p.progress),
            )
        assert result.content[0].text == "chatty"  # type: ignore[union-attr]
        assert progress == [0, 1, 2]
        await trio.testing.wait_all_tasks_blocked()
        assert unsolicited.received == [
            "notifications/tools/list_changed",
            "notifications/message step 0",
            "notifications/message step 1",
            "notifications/message step 2",
        ]


@pytest.mark.session_pair(client_options=HANDOVER)
async def test_cancelling_a_reading_caller_loses_nothing(
    unsolicited: Unsolicited, pair: SessionPair, autojump_clock: trio.testing.MockClock
) -> None:
    await pair.client.request(call("echo"))
    loop = receive_loop(pair.client)
    reading: list[bool] = []
    with trio.move_on_after(1) as scope:
        async with trio.open_nursery() as nursery:

            async def look() -> None:
                await trio.sleep(0.5)
                reading.append(pair.client._reader.caller_reading)

            nursery.start_soon(look)
            await pair.client.request(call("wait"))
    assert scope.cancelled_caught
    assert reading == [True]  # this caller read, until it was cancelled
    # The reading went back to the loop: what comes now, with no call waiting, is read.
    with counting_steps() as steps:
        await pair.server.send_notification("notifications/tools/list_changed")
        await unsolicited.first_read_at()
    assert unsolicited.received == ["notifications/tools/list_changed"]
    assert steps.by_task[loop] >= 1
    assert (await pair.client.request(call("echo"))).content[0].text == "echo"  # type: ignore[union-attr]


@pytest.mark.session_pair(client_options=HANDOVER)
async def test_one_caller_reads_for_another(
    tools: Tools, pair: SessionPair, autojump_clock: trio.testing.MockClock
) -> None:
    """Two calls at once: one caller reads, and delivers the other's answer; whoever
    finishes first hands the reading on to the loop, which reads for the one left."""
    answers: list[str] = []
    await pair.client.request(call("echo"))

    async def calling(name: str) -> None:
        result = await pair.client.request(call(name))
        answers.append(result.content[0].text)  # type: ignore[union-attr]

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(calling, "wait")
            await trio.testing.wait_all_tasks_blocked()
            assert pair.client._reader.caller_reading  # the "wait" caller reads
            nursery.start_soon(calling, "echo")
            await trio.testing.wait_all_tasks_blocked()
            assert answers == ["echo"]
            tools.release.set()
    assert answers == ["echo", "wait"]


@pytest.mark.parametrize("ending", ["the input ends", "the session is closed"])
@pytest.mark.session_pair(client_options=HANDOVER)
async def test_the_end_reaches_a_reading_caller(
    ending: str, pair: SessionPair, autojump_clock: trio.testing.MockClock
) -> None:
    await pair.client.request(call("echo"))

    async def end_soon() -> None:
        await trio.sleep(1)
        assert pair.client._reader.caller_reading  # the caller of "wait" reads
        if ending == "the input ends":
            await pair.server.stream.aclose()
        else:
            await pair.client.aclose()

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(end_soon)
            with pytest.raises(ConnectionClosed):
                await pair.client.request(call("wait"))  # read by this caller
    if ending == "the input ends":
        assert pair.client.input_ended


async def test_a_servers_loop_never_leaves_requests_waiting(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A server's receive loop does not park after delivering the answer to a request of
    its own (a handler asking the client something), even with the handover on: the
    client's next request is read at once, not HANDBACK_DELAY later."""
    times: dict[str, float] = {}

    async def handle(session: Session, request: InboundRequest) -> Any:
        name = request.params.name
        times[f"{name} started"] = trio.current_time()
        if name == "asks":
            await session.send_request("ping", related=request)
        times[f"{name} answered"] = trio.current_time()
        return t.CallToolResult(content=[t.TextContent(text=name)])

    async with memory_session_pair(
        server_capabilities=CAPS,
        server_options={"handler": handle, **HANDOVER},
        client_options=HANDOVER,
    ) as pair:
        await pair.client.request(call("asks"))
        await pair.client.request(call("echo"))
    assert times["echo started"] - times["asks answered"] < HANDBACK_DELAY


@pytest.mark.parametrize(
    "handback_delay",
    [
        pytest.param("default"),
        pytest.param("zero", marks=pytest.mark.session_pair(client_options={"handback_delay": 0})),
    ],
)
async def test_without_the_handover_the_loop_reads_everything_at_once(
    handback_delay: str,
    unsolicited: Unsolicited,
    pair: SessionPair,
    autojump_clock: trio.testing.MockClock,
) -> None:
    """By default (and with ``handback_delay=0``) the loop reads every answer itself, and
    what nobody asked for is read at once."""
    await pair.client.request(call("echo"))
    loop = receive_loop(pair.client)
    with counting_steps() as steps:
        for _ in range(10):
            await pair.client.request(call("echo"))
    assert steps.by_task[loop] >= 10  # woken for every answer
    sent_at = trio.current_time()
    await pair.server.send_notification("notifications/tools/list_changed")
    assert await unsolicited.first_read_at() == sent_at
    with pytest.raises(ValueError, match="handback_delay"):
        Session(pair.client.stream, pair.client.connection, handback_delay=-1)
