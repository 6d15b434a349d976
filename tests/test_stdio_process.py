"""The stdio client transport against real child processes (the peers in ``programs/``).

Each peer is one way a stdio server misbehaves. For each (the peer matrix): closing a
session over the process stream takes as long as the ladder says and no longer, no process
of the peer's tree is left alive, a pending call fails with ``ConnectionClosed`` instead of
hanging, and a caller cancelled during the close still gets the kill.

Real processes need real time: these tests use small ``grace`` values and short bounded
waits, and are marked slow.
"""

from __future__ import annotations

import logging
import math
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from trio_mcp import ConnectionClosed, jsonrpc as rpc
from trio_mcp.protocol import Connection
from trio_mcp.session import Session, connect_session
from trio_mcp.transports import (
    MessageStream,
    ProcessMessageStream,
    connect_process_stream,
    default_environment,
    open_process_stream,
)
from trio_mcp.types import Implementation

PEERS = Path(__file__).resolve().parent / "programs"
GRACE = 0.2
#: Scheduling noise allowed on top of a ladder's expected duration.
SLACK = 0.6

pytestmark = pytest.mark.skipif(
    not os.path.isdir("/proc/self"), reason="checks for leftover processes read /proc"
)


def peer(name: str) -> list[str]:
    return [sys.executable, str(PEERS / f"{name}.py")]


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not: where PID 1 does not reap orphans, they
    stay zombies for ever)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except FileNotFoundError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


async def started(stream: MessageStream) -> list[int]:
    """Read the peer's ``peer/started`` notification: the pids of its process tree."""
    with trio.fail_after(10):
        message = await stream.receive()
    assert isinstance(message, rpc.JsonRpcNotification), message
    assert message.method == "peer/started"
    assert message.params is not None
    pids = list(message.params.values())
    assert all(alive(pid) for pid in pids)
    return pids


async def echo_round_trip(stream: MessageStream) -> None:
    message = rpc.JsonRpcRequest(7, "tools/call", {"arguments": {"text": "ünïcödé"}})
    await stream.send(message)
    with trio.fail_after(5):
        assert await stream.receive() == message


class Outcome:
    """What a background operation on the stream ended with."""

    def __init__(self) -> None:
        self.error: BaseException | None = None
        self.done = False

    async def run(self, op: Callable[[], Any]) -> None:
        try:
            while True:
                await op()
        except (trio.ClosedResourceError, trio.EndOfChannel, trio.BrokenResourceError) as exc:
            self.error = exc
        self.done = True


# -- the peer matrix ------------------------------------------------------------------------
#
# Every peer, closed the way a client closes: a client Session over the process stream has a
# call pending, then the session is closed (which closes the stream, which runs the ladder).
# The peers are not MCP servers: they echo lines back. So the pending call uses a method of
# our own, and the session holds the echo of it (an inbound request) unanswered for ever;
# answering it would, echoed back, answer the call.

HOLD = "test/hold"

MATRIX = [
    # peer, its exit status, (shortest, longest) shutdown in units of GRACE
    pytest.param("echo", 0, (0, 1), id="echo: exits on end of stdin"),
    pytest.param("ignores_eof", -signal.SIGTERM, (1, 2), id="ignores end of stdin: SIGTERM"),
    pytest.param("ignores_term", -signal.SIGKILL, (2, 3), id="ignores SIGTERM too: SIGKILL"),
    pytest.param(
        "grandchild_ignores_all",
        -signal.SIGTERM,
        (2, 3),
        id="grandchild ignores both: group SIGKILL",
    ),
    pytest.param("leaves_child", 0, (0, 1), id="exits cleanly, leaves a child: group SIGTERM"),
    pytest.param("dies_midstream", 3, (0, 0), id="dies on the call: fails it at once"),
    pytest.param("floods_stderr", 0, (0, 1), id="floods stderr: drained, exits on end of stdin"),
    pytest.param("stops_reading", -signal.SIGTERM, (1, 2), id="stops reading stdin: SIGTERM"),
]

#: How long a matrix case may take in all, start-up included; a hang fails here.
LIMIT = 20


def client_connection() -> Connection:
    """A client that speaks the stateless era: no handshake, which these peers cannot do."""
    return Connection(
        "client", info=Implementation(name="matrix", version="0"), modern_version="2026-07-28"
    )


class PendingCall:
    """A call that no answer will come to; what it ended with, and when."""

    def __init__(self) -> None:
        self.error: BaseException | None = None
        self.ended_at = math.inf

    async def run(
        self, session: Session, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        task_status.started()
        try:
            await session.send_request(HOLD, {"text": "wait for it"})
        except ConnectionClosed as exc:
            self.error = exc
        self.ended_at = trio.current_time()


class Held:
    """The session's handler: holds the peer's requests (our call, echoed) unanswered."""

    def __init__(self) -> None:
        self.arrived = trio.Event()

    async def __call__(self, session: Session, request: Any) -> Any:
        assert request.method == HOLD
        self.arrived.set()
        await trio.sleep_forever()


async def _call_pending_when_closing(
    name: str, stream: ProcessMessageStream, nursery: trio.Nursery
) -> tuple[Session, PendingCall, list[int]]:
    """Start a session and a call on ``stream``; return once the call is as far as the peer
    lets it go: held by us (an echo), unread (stops_reading), or failed (dies_midstream)."""
    # Every peer but dies_midstream (which must die on the first request) announces its tree.
    pids = [stream.pid] if name == "dies_midstream" else await started(stream)
    held = Held()
    session = await connect_session(nursery, stream, client_connection(), handler=held)
    call = PendingCall()
    await nursery.start(call.run, session)
    if name == "dies_midstream":
        # The child dies on reading the call, and the call fails at once with why.
        with trio.fail_after(5):
            while call.error is None:
                await trio.sleep(0.01)
        assert isinstance(call.error, ConnectionClosed)
        assert call.error.returncode == 3
        assert call.error.stderr_tail == "starting work on test/hold\nfatal: out of cheese"
        assert "exit status 3" in str(call.error)
        assert "out of cheese" in str(call.error)
    elif name == "stops_reading":
        await trio.testing.wait_all_tasks_blocked()  # the call is in the pipe, unread
    else:
        await held.arrived.wait()  # the peer read the call (and echoed it)
    return session, call, pids


def _check_outcome(
    stream: ProcessMessageStream,
    call: PendingCall,
    pids: list[int],
    *,
    returncode: int,
    bounds: tuple[int, int],
    closing: float,
    closed: float,
) -> None:
    assert isinstance(call.error, ConnectionClosed)
    # At once: before the ladder (or, for a dead child, before we even began to close).
    assert call.ended_at - closing < SLACK
    assert stream.returncode == returncode
    shortest, longest = bounds
    assert shortest * GRACE <= closed - closing <= longest * GRACE + SLACK
    assert [pid for pid in pids if alive(pid)] == []


@pytest.mark.slow
@pytest.mark.parametrize(("name", "returncode", "bounds"), MATRIX)
async def test_closing_with_a_call_pending(
    name: str, returncode: int, bounds: tuple[int, int]
) -> None:
    """The pending call fails with ConnectionClosed, the close takes the time its rung of the
    ladder says, and no process of the peer's tree is left."""
    with trio.fail_after(LIMIT):
        async with (
            open_process_stream(
                peer(name), grace=GRACE, kill_timeout=GRACE, stderr=lambda line: None
            ) as stream,
            trio.open_nursery() as nursery,
        ):
            session, call, pids = await _call_pending_when_closing(name, stream, nursery)
            closing = trio.current_time()
            await session.aclose()
            closed = trio.current_time()
    _check_outcome(
        stream, call, pids, returncode=returncode, bounds=bounds, closing=closing, closed=closed
    )


@pytest.mark.slow
@pytest.mark.parametrize(("name", "returncode", "bounds"), MATRIX)
async def test_cancelling_the_caller_during_shutdown_does_not_skip_the_kill(
    name: str, returncode: int, bounds: tuple[int, int]
) -> None:
    """As above, with the caller cancelled while the ladder runs: half-way through the last
    step the peer makes it wait (or, when it makes it wait for nothing, as soon as the close
    begins). Every step still runs, then the caller sees its cancellation."""
    shortest, _ = bounds
    cancel_after = max(shortest - 0.5, 0) * GRACE
    cancelled_at = math.inf

    async def cancel(caller: trio.CancelScope) -> None:
        nonlocal cancelled_at
        await trio.sleep(cancel_after)  # 0: the first time the close yields
        cancelled_at = trio.current_time()
        caller.cancel()

    with trio.fail_after(LIMIT):
        async with trio.open_nursery() as outside:
            with trio.CancelScope() as caller:
                async with (
                    open_process_stream(
                        peer(name), grace=GRACE, kill_timeout=GRACE, stderr=lambda line: None
                    ) as stream,
                    trio.open_nursery() as nursery,
                ):
                    session, call, pids = await _call_pending_when_closing(name, stream, nursery)
                    outside.start_soon(cancel, caller)
                    closing = trio.current_time()
                    await session.aclose()
                    pytest.fail("the close returned without the cancellation")
            closed = trio.current_time()
    assert caller.cancelled_caught
    assert closing <= cancelled_at < closed
    _check_outcome(
        stream, call, pids, returncode=returncode, bounds=bounds, closing=closing, closed=closed
    )


@pytest.mark.slow
async def test_a_peer_that_stops_reading_blocks_senders_then_is_terminated() -> None:
    sent = 0

    async def flood(stream: MessageStream) -> None:
        nonlocal sent
        while True:
            await stream.send(rpc.JsonRpcNotification("flood", {"pad": "x" * 4096}))
            sent += 1

    sending, receiving = Outcome(), Outcome()
    async with trio.open_nursery() as nursery:
        async with open_process_stream(peer("stops_reading"), grace=GRACE) as stream:
            pids = await started(stream)
            nursery.start_soon(receiving.run, stream.receive)
            nursery.start_soon(sending.run, lambda: flood(stream))
            # The reader is a real process, out of Trio's sight: stalled means every task
            # here blocked (the flood in send) for a while of real time, twice with nothing
            # sent in between. Bounded: a flood that never blocks fails the deadline.
            with trio.fail_after(10):
                await trio.testing.wait_all_tasks_blocked(0.2)
                stalled_at = sent
                await trio.testing.wait_all_tasks_blocked(0.2)
            # Backpressure: the pipe (64 KiB) and the send buffer (16 messages) are full.
            assert sent == stalled_at
            assert sent < 64
            start = trio.current_time()
        elapsed = trio.current_time() - start
    # The queued messages could not be flushed: that took the first step's grace, then
    # SIGTERM ended the peer.
    assert isinstance(sending.error, trio.ClosedResourceError)
    assert isinstance(receiving.error, trio.ClosedResourceError)
    assert stream.returncode == -signal.SIGTERM
    assert GRACE <= elapsed <= GRACE + SLACK
    assert [pid for pid in pids if alive(pid)] == []


@pytest.mark.slow
async def test_a_cancelled_body_still_runs_the_whole_ladder() -> None:
    with trio.move_on_after(0.5) as caller:
        async with open_process_stream(peer("ignores_term"), grace=GRACE) as stream:
            pids = await started(stream)
            await trio.sleep_forever()
    assert caller.cancelled_caught
    assert stream.returncode == -signal.SIGKILL
    assert [pid for pid in pids if alive(pid)] == []


@pytest.mark.slow
async def test_a_cancelled_nursery_shuts_down_a_connected_stream_without_aclose() -> None:
    async with trio.open_nursery() as nursery:
        stream = await connect_process_stream(nursery, peer("ignores_eof"), grace=GRACE)
        pids = await started(stream)
        nursery.cancel_scope.cancel()
    assert stream.returncode == -signal.SIGTERM
    assert [pid for pid in pids if alive(pid)] == []
    await stream.aclose()  # idempotent, and returns at once
    with pytest.raises(trio.ClosedResourceError):
        await stream.receive()


@pytest.mark.slow
async def test_infinite_grace_never_escalates() -> None:
    async with trio.open_nursery() as nursery:
        stream = await connect_process_stream(nursery, peer("ignores_eof"), grace=math.inf)
        (pid,) = await started(stream)
        nursery.start_soon(stream.aclose)
        # A real wait, bounded: a ladder that escalated would signal after GRACE of real
        # time (a real child rules out the autojump clock, which would fire our deadlines
        # while the child starts).
        await trio.sleep(4 * GRACE)
        assert alive(pid)  # nobody signalled it
        os.kill(pid, signal.SIGUSR1)  # it goes when it chooses to
    assert stream.returncode == -signal.SIGUSR1


# -- a child that ends by itself ----------------------------------------------------------------


@pytest.mark.slow
async def test_a_child_dying_midstream_ends_receive_with_its_status_and_last_words() -> None:
    lines: list[str] = []
    async with open_process_stream(peer("dies_midstream"), stderr=lines.append) as stream:
        await stream.send(rpc.JsonRpcRequest(1, "tools/call", {}))
        with trio.fail_after(5):
            with pytest.raises(trio.EndOfChannel):
                await stream.receive()
            # The status and the whole of stderr were waited for before the end was reported.
            assert stream.close_details() == (
                3,
                "starting work on tools/call\nfatal: out of cheese",
            )
            with pytest.raises(trio.EndOfChannel):  # again
                await stream.receive()
            with pytest.raises(trio.BrokenResourceError):  # nobody reads its stdin any more
                await _send_until_it_fails(stream)
            start = trio.current_time()
    assert trio.current_time() - start < SLACK  # nothing left to wait for
    assert lines == ["starting work on tools/call", "fatal: out of cheese"]


async def _send_until_it_fails(stream: MessageStream) -> None:
    for _ in range(100):
        await stream.send(rpc.JsonRpcNotification("anyone/there"))
        await trio.sleep(0.01)


@pytest.mark.slow
async def test_stdout_closing_early_is_reported_after_exit_wait() -> None:
    code = "import os, time; os.close(1); time.sleep(30)"
    async with open_process_stream([sys.executable, "-c", code], grace=GRACE, exit_wait=0.3) as s:
        with trio.fail_after(5):
            start = trio.current_time()
            with pytest.raises(trio.EndOfChannel):
                await s.receive()
            assert trio.current_time() - start >= 0.3
        assert s.close_details() == (None, None)  # it has not exited
    assert s.returncode == -signal.SIGTERM


# -- stderr -------------------------------------------------------------------------------------


@pytest.mark.slow
async def test_stderr_is_drained_so_a_flooding_child_keeps_answering() -> None:
    lines: list[str] = []
    async with open_process_stream(
        peer("floods_stderr"), stderr=lines.append, stderr_tail_lines=2, stderr_rate=math.inf
    ) as stream:
        pids = await started(stream)
        await echo_round_trip(stream)  # the peer floods stderr before it answers
        with trio.fail_after(5):
            while not lines or lines[-1] != "flood done":
                await trio.sleep(0.01)
        assert stream.stderr_tail == "L" * (100_000 % 8192) + "\nflood done"
        start = trio.current_time()
    assert trio.current_time() - start < SLACK
    assert stream.returncode == 0
    assert len(lines) == 20_000 + math.ceil(100_000 / 8192) + 1
    assert lines[0].startswith("noise 000000 ")
    assert max(len(line) for line in lines) == 8192  # a long line comes in pieces
    assert [pid for pid in pids if alive(pid)] == []


@pytest.mark.slow
async def test_past_the_rate_stderr_lines_are_counted_and_dropped_but_the_tail_is_kept() -> None:
    """Issue 11, item 8: the same flood (2 MB, 20,014 lines at once) with the default rate:
    the burst allowance (10,000 lines) is handed on, the rest counted and dropped, and at
    the end one line says so; the tail still shows how the child's stderr ended."""
    lines: list[str] = []
    start = trio.current_time()
    async with open_process_stream(
        peer("floods_stderr"), stderr=lines.append, stderr_tail_lines=2
    ) as stream:
        await started(stream)
        await echo_round_trip(stream)  # the child was never blocked for good
        with trio.fail_after(10):
            while stream.stderr_tail is None or not stream.stderr_tail.endswith("flood done"):
                await trio.sleep(0.01)
    elapsed = trio.current_time() - start
    stats = stream.stderr_statistics()
    assert stream.returncode == 0
    assert lines[:2] == [f"noise {n:06d} {'.' * 90}" for n in range(2)]
    # The burst, what the rate added meanwhile (on a busy machine the flood takes a while),
    # and the reports of what was dropped (about one a second).
    assert 10_000 <= len(lines) <= 10_000 + 1001 * elapsed + 2
    assert stats.lines == len(lines)
    assert stats.dropped_lines + stats.lines >= 20_000
    assert stats.dropped_bytes > 1_000_000
    assert lines[-1].startswith("[trio_mcp: dropped ")
    assert stream.stderr_tail == "flood done\n" + lines[-1]


@pytest.mark.slow
async def test_stderr_goes_to_logging_by_default(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="trio_mcp.stdio.stderr")
    async with open_process_stream(peer("dies_midstream")) as stream:
        await stream.send(rpc.JsonRpcRequest(1, "ping"))
        with trio.fail_after(5), pytest.raises(trio.EndOfChannel):
            await stream.receive()
    messages = [r.getMessage() for r in caplog.records if r.name == "trio_mcp.stdio.stderr"]
    assert messages == [
        f"[pid {stream.pid}] starting work on ping",
        f"[pid {stream.pid}] fatal: out of cheese",
    ]


@pytest.mark.slow
async def test_an_error_in_the_stderr_handler_propagates_after_the_child_is_shut_down() -> None:
    class HandlerFailed(Exception):
        pass

    calls: list[str] = []

    def handler(line: str) -> None:
        calls.append(line)
        raise HandlerFailed(line)

    streams: list[ProcessMessageStream] = []

    async def run() -> None:
        async with open_process_stream(peer("dies_midstream"), stderr=handler) as stream:
            streams.append(stream)
            await stream.send(rpc.JsonRpcRequest(1, "ping"))
            await trio.sleep_forever()

    start = trio.current_time()
    with trio.fail_after(5), pytest.raises(HandlerFailed, match="starting work on ping"):
        await run()
    assert streams[0].returncode == 3
    assert calls == ["starting work on ping"]  # the drain stopped at the error
    assert trio.current_time() - start < SLACK  # nothing waited for the dead drain


# -- starting -----------------------------------------------------------------------------------


async def test_a_missing_command_is_a_clear_error() -> None:
    with pytest.raises(FileNotFoundError, match=r"'no-such-mcp-server'.*not found on PATH"):
        async with open_process_stream(["no-such-mcp-server", "--stdio"]):
            pytest.fail("started")  # pragma: no cover


async def test_a_missing_working_directory_is_a_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "gone"
    with pytest.raises(FileNotFoundError, match=r"working directory does not exist: .*gone"):
        async with open_process_stream([sys.executable, "-V"], cwd=missing):
            pytest.fail("started")  # pragma: no cover


async def test_a_file_that_is_not_executable_is_a_clear_error(tmp_path: Path) -> None:
    script = tmp_path / "server.sh"
    script.write_text("#!/bin/sh\n")
    with pytest.raises(PermissionError, match="not executable"):
        async with open_process_stream([script]):
            pytest.fail("started")  # pragma: no cover


async def test_an_empty_command_or_a_negative_grace_is_refused() -> None:
    with pytest.raises(ValueError, match="empty"):
        async with open_process_stream([]):
            pytest.fail("started")  # pragma: no cover
    with pytest.raises(ValueError, match="grace"):
        async with open_process_stream([sys.executable], grace=-1):
            pytest.fail("started")  # pragma: no cover


def test_the_default_environment_is_an_allow_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    monkeypatch.setenv("HOME", "/home/someone")
    monkeypatch.setenv("SHELL", "() { :; }; echo pwned")
    env = default_environment()
    assert "OPENAI_API_KEY" not in env
    assert "SHELL" not in env
    assert env["LC_ALL"] == "C.UTF-8"
    assert env["HOME"] == "/home/someone"
    assert set(env) <= {"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG"} | {
        k for k in env if k.startswith("LC_")
    }


@pytest.mark.slow
async def test_the_child_gets_the_default_environment_plus_what_is_passed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    code = (
        "import json, os; print(json.dumps("
        "{'jsonrpc': '2.0', 'method': 'env', 'params': dict(os.environ)}), flush=True)"
    )
    async with open_process_stream(
        [sys.executable, "-c", code], env={"MCP_SETTING": "on"}
    ) as stream:
        with trio.fail_after(5):
            message = await stream.receive()
    assert isinstance(message, rpc.JsonRpcNotification)
    assert message.params is not None
    assert message.params.get("MCP_SETTING") == "on"
    assert "OPENAI_API_KEY" not in message.params
    assert message.params.get("PATH") == os.environ.get("PATH")


@pytest.mark.slow
async def test_the_child_leads_its_own_process_group() -> None:
    async with open_process_stream(peer("echo")) as stream:
        (pid,) = await started(stream)
        assert isinstance(stream, ProcessMessageStream)
        assert pid == stream.pid
        assert os.getpgid(pid) == pid
        assert os.getsid(pid) == pid


@pytest.mark.slow
async def test_a_process_stream_sends_and_receives_without_waiting_when_it_can() -> None:
    """send_nowait and receive_nowait reach the pipes (the base class can do neither)."""
    assert ProcessMessageStream.receive_nowait is not MessageStream.receive_nowait
    async with open_process_stream(["cat"], grace=GRACE) as stream:
        stream.send_nowait(rpc.JsonRpcNotification("one"))  # the base class raises WouldBlock
        stream.send_nowait(rpc.JsonRpcNotification("two"))
        with trio.fail_after(5):
            first = await stream.receive()
            try:
                second = stream.receive_nowait()  # if "two" came in the same read
            except trio.WouldBlock:
                second = await stream.receive()
        assert (first, second) == (rpc.JsonRpcNotification("one"), rpc.JsonRpcNotification("two"))


#: A child that stops reading its stdin, says so, then (after a while) writes its last
#: words to stderr and exits with status 4.
_CLOSES_STDIN_THEN_DIES = """
import os, sys, time
os.close(0)
print('{"jsonrpc": "2.0", "method": "peer/stdin-closed"}', flush=True)
time.sleep(0.3)
sys.stderr.write("one\\ntwo\\n")
sys.exit(4)
"""


async def test_a_send_the_child_can_no_longer_take_waits_for_why() -> None:
    """A send failing on a child's closed stdin waits (``exit_wait``) for its exit status and
    its stderr, so the ConnectionClosed built from ``close_details`` says why: the child
    exits after the send failed (the race a loaded machine showed, made certain here)."""
    with trio.fail_after(20):
        async with open_process_stream(
            [sys.executable, "-c", _CLOSES_STDIN_THEN_DIES],
            exit_wait=10,
            stderr=lambda line: None,
        ) as stream:
            notice = await stream.receive()
            assert isinstance(notice, rpc.JsonRpcNotification)
            assert notice.method == "peer/stdin-closed"
            with pytest.raises(trio.BrokenResourceError):
                await stream.send(rpc.JsonRpcNotification("x/y", {"pad": "z"}))
            returncode, tail = stream.close_details()
    assert returncode == 4
    assert tail is not None and tail.splitlines()[-1] == "two"
