"""A trio_mcp server over stdio (real processes): draining on EOF, signals, clean stdout;
and open_stdio_client in both eras."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO

import orjson
import pytest
import trio
import trio.testing

import trio_mcp
from trio_mcp import ConnectionClosed, connect_stdio_client, open_stdio_client
from trio_mcp.transports import ProcessMessageStream

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "programs" / "slow_server.py"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

pytestmark = pytest.mark.slow


def lines(*messages: Mapping[str, object]) -> bytes:
    return b"".join(orjson.dumps(m) + b"\n" for m in messages)


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def call(id: int, name: str, **arguments: object) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


#: The server's environment where a slow call says when it is running (its first progress
#: report: see :func:`started_slow_call` and :func:`wait_until_running`).
ANNOUNCING = {**ENV, "SLOW_SERVER_ANNOUNCE": "1"}


def started_slow_call(id: int, seconds: float) -> dict[str, object]:
    """A call of the slow tool that says when it is running, under :data:`ANNOUNCING`."""
    message = call(id, "slow", seconds=seconds)
    params = message["params"]
    assert isinstance(params, dict)
    params["_meta"] = {"progressToken": f"running-{id}"}
    return message


def wait_until_running(stdout: IO[bytes], id: int) -> None:
    """Read the server's output up to the progress report of :func:`started_slow_call`
    ``id``: the call is running (rather than sleeping a while and hoping it is)."""
    line = orjson.loads(stdout.readline())
    assert line.get("method") == "notifications/progress", line
    assert line["params"]["progressToken"] == f"running-{id}", line


def test_piped_input_gets_every_answer_then_the_server_exits() -> None:
    # The SDK servers drop in-flight requests at EOF; ours drains them.
    requests = [call(i, "slow", seconds=0.05 * (i % 3)) for i in range(1, 6)] + [call(6, "chatty")]
    run = subprocess.run(
        [sys.executable, str(SERVER)],
        input=lines(INITIALIZE, INITIALIZED, *requests),
        capture_output=True,
        env=ENV,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    answers = [orjson.loads(line) for line in run.stdout.splitlines()]  # stdout is only JSON-RPC
    assert sorted(a["id"] for a in answers) == [0, 1, 2, 3, 4, 5, 6]
    assert all("result" in a for a in answers)
    assert b"this would corrupt the protocol" in run.stderr


def test_input_from_a_regular_file_gets_every_answer(tmp_path: Path) -> None:
    """``server < requests.jsonl``: epoll cannot watch a regular file, so the server must
    read it without ever waiting for it to be readable."""
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(
        lines(INITIALIZE, INITIALIZED, *(call(i, "echo", text=str(i)) for i in (1, 2, 3)))
    )
    with requests.open("rb") as stdin:
        run = subprocess.run(
            [sys.executable, str(SERVER)], stdin=stdin, capture_output=True, env=ENV, timeout=60
        )
    assert run.returncode == 0, run.stderr
    answers = {a["id"]: a for a in map(orjson.loads, run.stdout.splitlines())}
    assert sorted(answers) == [0, 1, 2, 3]
    assert [answers[i]["result"]["content"][0]["text"] for i in (1, 2, 3)] == ["1", "2", "3"]


def test_the_drain_deadline_cancels_what_is_still_running() -> None:
    start = time.monotonic()
    run = subprocess.run(
        [sys.executable, str(SERVER), "0.3"],
        input=lines(
            INITIALIZE, INITIALIZED, call(1, "slow", seconds=60), call(2, "echo", text="fast")
        ),
        capture_output=True,
        env=ENV,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert time.monotonic() - start < 20
    ids = [orjson.loads(line)["id"] for line in run.stdout.splitlines()]
    assert ids == [0, 2]  # the cancelled one sends nothing


# The one documented way to run a server over stdio is trio_mcp.run; run_stdio is the same
# inside a running Trio program. Each serves, and passes its options on (here the drain
# deadline).
RUN_SPELLINGS = {
    "trio_mcp.run": "trio_mcp.run(server, drain_timeout=0.3)",
    "trio_mcp.server.run_stdio": (
        "trio.run(functools.partial(trio_mcp.server.run_stdio, server, drain_timeout=0.3))"
    ),
}


@pytest.mark.parametrize("spelling", list(RUN_SPELLINGS))
def test_every_way_to_run_over_stdio_serves_and_takes_its_options(spelling: str) -> None:
    program = (
        "import functools, runpy, trio, trio_mcp, trio_mcp.server\n"
        f"server = runpy.run_path({str(SERVER)!r})['server']\n"
        f"{RUN_SPELLINGS[spelling]}\n"
    )
    start = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-c", program],
        input=lines(
            INITIALIZE, INITIALIZED, call(1, "slow", seconds=60), call(2, "echo", text="fast")
        ),
        capture_output=True,
        env=ENV,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    # Well before the default drain deadline (10 s): the option got through.
    assert time.monotonic() - start < 8
    answers = [orjson.loads(line) for line in run.stdout.splitlines()]
    assert [a["id"] for a in answers] == [0, 2]  # the slow call was cut by drain_timeout
    assert answers[1]["result"]["content"][0]["text"] == "fast"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_a_busy_server_promptly(signum: int) -> None:
    process = subprocess.Popen(
        [sys.executable, str(SERVER)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ANNOUNCING,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(lines(INITIALIZE, INITIALIZED, started_slow_call(1, 60)))
    process.stdin.flush()
    assert orjson.loads(process.stdout.readline())["id"] == 0  # it is up and serving
    wait_until_running(process.stdout, 1)
    start = time.monotonic()
    process.send_signal(signum)
    assert process.wait(timeout=10) == 0
    assert time.monotonic() - start < 5
    process.stdin.close()
    assert process.stdout.read() == b""  # the cancelled call sends nothing
    process.stdout.close()
    assert process.stderr is not None
    stderr = process.stderr.read()
    process.stderr.close()
    assert b"Traceback" not in stderr
    assert f"received {signal.Signals(signum).name}: stopping".encode() in stderr


@pytest.mark.parametrize(
    ("seconds", "drain", "bound"),
    [
        pytest.param(None, 10.0, 2.0, id="idle: at once"),
        pytest.param(0.3, 10.0, 2.5, id="a call that ends: its answer is dropped"),
        pytest.param(60, 0.5, 3.0, id="a call that goes on: cancelled at the drain deadline"),
    ],
)
def test_a_vanishing_client_lets_the_server_exit(
    seconds: float | None, drain: float, bound: float
) -> None:
    """The client goes away (both pipes close) with or without a call in flight: the server
    exits cleanly, at the latest at its drain deadline, without a traceback (its answer
    meets a broken pipe)."""
    process = subprocess.Popen(
        [sys.executable, str(SERVER), str(drain)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ANNOUNCING,
    )
    assert process.stdin is not None and process.stdout is not None
    calls = [started_slow_call(1, seconds)] if seconds is not None else []
    process.stdin.write(lines(INITIALIZE, INITIALIZED, *calls))
    process.stdin.flush()
    assert orjson.loads(process.stdout.readline())["id"] == 0
    if seconds is not None:
        wait_until_running(process.stdout, 1)
    start = time.monotonic()
    process.stdin.close()
    process.stdout.close()
    assert process.wait(timeout=20) == 0
    assert time.monotonic() - start < bound
    assert process.stderr is not None
    stderr = process.stderr.read()
    process.stderr.close()
    assert b"Traceback" not in stderr, stderr.decode()


@pytest.mark.parametrize("close_stdin", [True, False], ids=["both closed", "stdin left open"])
async def test_a_server_whose_client_closed_its_stdout_exits_at_once(close_stdin: bool) -> None:
    """Issue 11, item 6: with a call in flight that would run for ever, the client closes
    the server's stdout (and its stdin, or not). Nothing can read an answer any more, so
    the server cancels the call and exits within a second: it does not wait out its drain
    deadline (10 s here), nor, with stdin still open, for ever."""
    process = await trio.lowlevel.open_process(
        [sys.executable, str(ROOT / "tests" / "programs" / "hanging_server.py")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
    )
    assert process.stdin is not None and process.stdout is not None
    assert process.stderr is not None
    try:
        hang = call(1, "hang")
        hang["params"]["_meta"] = {"progressToken": "t"}  # type: ignore[index]
        with trio.fail_after(30):  # the interpreter starting, on a busy machine
            await process.stdin.send_all(lines(INITIALIZE, INITIALIZED, hang))
            received = b""
            while b'"notifications/progress"' not in received:  # the call is running
                chunk = await process.stdout.receive_some(65536)
                assert chunk, received
                received += chunk
        if close_stdin:
            await process.stdin.aclose()
        await process.stdout.aclose()
        with trio.fail_after(1.5):
            returncode = await process.wait()
        assert returncode == 0
        with trio.fail_after(5):
            stderr = b""
            while chunk := await process.stderr.receive_some(65536):
                stderr += chunk
        assert b"Traceback" not in stderr, stderr.decode()
        assert b"the client closed our stdout: stopping" in stderr
    finally:
        with trio.CancelScope(shield=True):
            if process.returncode is None:
                process.kill()
                await process.wait()
            await process.stdin.aclose()
            await process.stderr.aclose()


async def test_a_client_that_stops_reading_holds_the_server_back() -> None:
    """Backpressure end to end: while nobody reads its stdout, the server stops reading its
    stdin after a bounded number of requests (its handler slots, their queue, the answers
    waiting to be written, the pipes) instead of buffering every answer; once read, every
    request is answered."""
    process = await trio.lowlevel.open_process(
        [sys.executable, str(SERVER)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=ENV,
    )
    assert process.stdin is not None and process.stdout is not None
    total = 4000  # 8 KiB each: 32 MiB of requests, twice that in answers if all were taken
    sent = 0

    async def write() -> None:
        nonlocal sent
        assert process.stdin is not None
        await process.stdin.send_all(lines(INITIALIZE, INITIALIZED))
        for id in range(1, total + 1):
            await process.stdin.send_all(lines(call(id, "echo", text="x" * 8192)))
            sent = id
        await process.stdin.aclose()

    try:
        with trio.fail_after(60):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(write)
                stalled_at = -1
                # A real server process: until nothing more is taken for 0.3 s of real time
                # (bounded by the fail_after above).
                while sent != stalled_at:
                    stalled_at = sent
                    await trio.sleep(0.3)
                # The server's limits: 256 running, 256 waiting, 256 answers waiting to be
                # written (a few more in the pipes and buffers).
                assert 0 < stalled_at < 1000
                received = bytearray()
                while chunk := await process.stdout.receive_some(1 << 16):
                    received += chunk
            answers = [orjson.loads(line) for line in received.splitlines()]
            assert sorted(a["id"] for a in answers) == list(range(total + 1))
            # Each one answered: echoed, or (past the waiting room) refused as busy at once.
            echoed = [a for a in answers[1:] if "result" in a]
            busy = [a for a in answers[1:] if "error" in a]
            assert all(a["result"]["content"][0]["text"] == "x" * 8192 for a in echoed)
            assert all(a["error"]["code"] == -32603 for a in busy)
            assert len(echoed) > len(busy)
            assert await process.wait() == 0
    finally:
        with trio.CancelScope(shield=True):
            if process.returncode is None:  # pragma: no cover - only when the test failed
                process.kill()
                await process.wait()
            await process.stdout.aclose()


@pytest.mark.parametrize(
    "protocol_version", [None, "2026-07-28", "2025-11-25", "2025-06-18", "2024-11-05"]
)
async def test_open_stdio_client(protocol_version: str | None) -> None:
    async with open_stdio_client(
        [sys.executable, str(SERVER)],
        env={"PYTHONPATH": str(ROOT)},
        protocol_version=protocol_version,
        grace=2,
    ) as client:
        expected = protocol_version or "2026-07-28"
        assert client.protocol_version == expected
        assert [tool.name for tool in await client.list_tools()] == ["echo", "slow", "chatty"]
        result = await client.call_tool("echo", {"text": "héllo"})
        assert result.content[0].text == "héllo"  # type: ignore[union-attr]
        with trio.move_on_after(0.2):
            await client.call_tool("slow", {"seconds": 30})
        assert (await client.call_tool("chatty")).content[0].text == "ok"  # type: ignore[union-attr]


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except FileNotFoundError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


async def test_connect_stdio_client_fails_pending_calls_when_the_child_is_killed() -> None:
    failures: list[ConnectionClosed] = []

    async def pending(client: trio_mcp.Client) -> None:
        with pytest.raises(ConnectionClosed) as caught:
            await client.call_tool("slow", {"seconds": 60})
        failures.append(caught.value)

    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            client = await connect_stdio_client(
                nursery,
                [sys.executable, str(SERVER)],
                env={"PYTHONPATH": str(ROOT)},
                stderr=lambda line: None,
                stderr_tail_lines=1,  # the options of open_process_stream reach the stream
            )
            stream = client.session.stream
            assert isinstance(stream, ProcessMessageStream)
            for _ in range(2):
                assert (await client.call_tool("chatty")).content[0].text == "ok"  # type: ignore[union-attr]
            nursery.start_soon(pending, client)
            nursery.start_soon(pending, client)
            await trio.testing.wait_all_tasks_blocked()  # both calls are in the pipe
            killed = trio.current_time()
            os.kill(stream.pid, signal.SIGKILL)
            with trio.fail_after(5):
                while len(failures) < 2:
                    await trio.sleep(0.01)
            assert trio.current_time() - killed < 2  # at once: no timeout, no grace
            await client.aclose()
    for failure in failures:
        assert failure.returncode == -signal.SIGKILL
        # chatty's prints went to stderr; only the last line is kept.
        assert failure.stderr_tail == "this would corrupt the protocol"


async def test_cancelling_the_nursery_of_connect_stdio_client_reaps_the_child() -> None:
    grace = 0.3
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            client = await connect_stdio_client(
                nursery,
                [sys.executable, str(SERVER)],
                env={"PYTHONPATH": str(ROOT)},
                grace=grace,
                stderr=lambda line: None,
            )
            stream = client.session.stream
            assert isinstance(stream, ProcessMessageStream)
            nursery.start_soon(client.call_tool, "slow", {"seconds": 60})
            await trio.testing.wait_all_tasks_blocked()
            assert _alive(stream.pid)
            cancelled = trio.current_time()
            nursery.cancel_scope.cancel()
        elapsed = trio.current_time() - cancelled
    assert nursery.cancel_scope.cancelled_caught
    # Within the ladder's bound (2 * grace + kill_timeout). The cancelled call's
    # notifications/cancelled reaches the server before its stdin closes, so it exits at
    # once (test_a_deadline_around_the_whole_block_still_cancels_the_call checks that).
    assert elapsed < 2 * grace + 2
    assert stream.returncode == 0  # trio_mcp.run exits cleanly either way
    assert not _alive(stream.pid)


async def test_a_missing_command_is_a_clear_error() -> None:
    with pytest.raises(FileNotFoundError, match="no-such-mcp-server"):
        async with open_stdio_client(["no-such-mcp-server-anywhere"]):
            pass


NAPPING = ROOT / "tests" / "programs" / "napping_server.py"


@pytest.mark.parametrize("protocol_version", ["2026-07-28", "2025-11-25"])
async def test_a_deadline_around_the_whole_block_still_cancels_the_call(
    protocol_version: str, tmp_path: Path
) -> None:
    """``with trio.move_on_after(t): async with open_stdio_client(...) as c: await c.call_tool(...)``
    (what ``trio-mcp call-tool --timeout`` does): the deadline cancels the call, the
    session's tasks and the process's at once. The call's notifications/cancelled must
    still reach the server before its stdin closes, every time: then it stops napping and
    exits on end of input, instead of draining until SIGTERM. Twenty times in a row, since
    it once depended on the order Trio ran the cancelled tasks in (lost a third of the time)."""
    grace = 5.0  # what a lost cancel would cost: the server naps on until SIGTERM
    for run in range(20):
        record = tmp_path / f"record-{run}"
        with trio.fail_after(30):
            with trio.CancelScope() as deadline:

                def started(progress: object) -> None:
                    # The call runs: the deadline fires soon, with every task blocked.
                    deadline.deadline = trio.current_time() + 0.05

                async with open_stdio_client(
                    [sys.executable, str(NAPPING), str(record)],
                    env={"PYTHONPATH": str(ROOT)},
                    protocol_version=protocol_version,
                    grace=grace,
                ) as client:
                    await client.call_tool("nap", {"seconds": 60}, on_progress=started)
            elapsed = trio.current_time() - deadline.deadline
        assert deadline.cancelled_caught
        assert record.exists() and record.read_text() == "cancelled\n", f"run {run}: no cancel"
        assert elapsed < grace / 2, f"run {run}: the block took {elapsed:.1f} s to end"
