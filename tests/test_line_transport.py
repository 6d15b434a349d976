"""The newline-delimited framing over real OS pipes, in one process: the public conformance
check, then what the stdio framing promises beyond it."""

from __future__ import annotations

import fcntl
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import trio
import trio.testing
from hypothesis import given, strategies as st
from trio.lowlevel import FdStream

from trio_mcp import ConnectionClosed, jsonrpc as rpc
from trio_mcp.protocol import Connection
from trio_mcp.session import HANDBACK_DELAY, open_session
from trio_mcp.testing import check_transport
from trio_mcp.transports import (
    LineMessageStream,
    MessageStream,
    MessageTooLarge,
    open_line_stream,
)
from trio_mcp.types import ClientCapabilities, Implementation


def _pipe(size: int | None = None) -> tuple[FdStream, FdStream]:
    r, w = os.pipe()
    if size is not None:
        fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, size)
    return FdStream(r), FdStream(w)


@asynccontextmanager
async def pipe_pair(
    *, pipe_size: int | None = None, send_buffer: int = 16, **options: object
) -> AsyncIterator[tuple[LineMessageStream, LineMessageStream]]:
    a_to_b_r, a_to_b_w = _pipe(pipe_size)
    b_to_a_r, b_to_a_w = _pipe(pipe_size)
    async with (
        open_line_stream(b_to_a_r, a_to_b_w, send_buffer=send_buffer, **options) as a,  # type: ignore[arg-type]
        open_line_stream(a_to_b_r, b_to_a_w, send_buffer=send_buffer, **options) as b,  # type: ignore[arg-type]
    ):
        yield a, b


@asynccontextmanager
async def maker() -> AsyncIterator[tuple[MessageStream, MessageStream]]:
    async with pipe_pair() as (a, b):
        yield a, b


@asynccontextmanager
async def clogged() -> AsyncIterator[tuple[MessageStream, MessageStream]]:
    # The smallest pipe the kernel allows (one page) and no queue before the writer.
    async with pipe_pair(pipe_size=4096, send_buffer=0) as (a, b):
        yield a, b


async def send_raw(stream: MessageStream, data: bytes) -> None:
    assert isinstance(stream, LineMessageStream)
    await stream.send_raw(data + b"\n")


async def test_pipes_pass_check_transport(autojump_clock: object) -> None:
    await check_transport(maker, clogged, send_raw=send_raw)


# -- framing details, over scripted byte streams --------------------------------------------------


class ScriptedReceiveStream(trio.abc.ReceiveStream):
    """Hands out the given chunks one per ``receive_some``, then end of input."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = list(chunks)
        #: If set, the largest its read buffer got (checked at each read).
        self.watch: LineMessageStream | None = None
        self.most_buffered = 0

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        await trio.lowlevel.checkpoint()
        if self.watch is not None:
            self.most_buffered = max(self.most_buffered, len(self.watch._buffer))
        return self.chunks.pop(0) if self.chunks else b""

    async def aclose(self) -> None:
        await trio.lowlevel.checkpoint()


class RecordingSendStream(trio.abc.SendStream):
    """Records each ``send_all``; blocks while ``gate`` is not set."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.gate = trio.Event()
        self.gate.set()

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self.gate.wait()
        self.writes.append(bytes(data))

    async def wait_send_all_might_not_block(self) -> None:
        await trio.lowlevel.checkpoint()

    async def aclose(self) -> None:
        await trio.lowlevel.checkpoint()


async def receive_all(stream: MessageStream) -> list[object]:
    got: list[object] = []
    while True:
        try:
            got.append(await stream.receive())
        except trio.EndOfChannel:
            return got


PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'


async def test_blank_lines_crlf_and_a_last_line_without_newline() -> None:
    # Reads of exactly one line each (blank ones included) take a shortcut: same answers.
    chunks = [
        b"\n",
        b"\n\n  \r\n" + PING + b"\r\n",
        b"\t\n",
        b" \n",
        PING + b"\r\n",
        PING[:10],
        PING[10:] + b"\n" + PING,
    ]
    async with open_line_stream(ScriptedReceiveStream(chunks), RecordingSendStream()) as s:
        got = await receive_all(s)
        assert got == [rpc.JsonRpcRequest(1, "ping")] * 4
        with pytest.raises(trio.EndOfChannel):  # and again
            await s.receive()


async def test_bad_lines_arrive_as_invalid_messages_and_the_stream_goes_on() -> None:
    chunks = [b"not json\n", b"[1]\n" + PING + b"\n", b"\xff\xfe\n"]
    async with open_line_stream(ScriptedReceiveStream(chunks), RecordingSendStream()) as s:
        got = await receive_all(s)
    assert len(got) == 4
    assert isinstance(got[0], rpc.InvalidMessage)
    assert got[0].reply is not None
    assert got[0].reply.error.code == -32700
    assert isinstance(got[1], rpc.Batch)  # a batch of one invalid item: the session's call
    assert got[2] == rpc.JsonRpcRequest(1, "ping")
    assert isinstance(got[3], rpc.InvalidMessage)
    assert got[3].reply is not None
    assert got[3].reply.error.code == -32700  # invalid UTF-8


@pytest.mark.parametrize("chunk", [7, 100, 1 << 20])
async def test_an_oversized_line_breaks_the_input_without_buffering_it(chunk: int) -> None:
    # Skipping the line and going on would lose it silently: it may be the answer a
    # caller waits for. The input breaks instead, saying the limit, on every later call.
    limit = 1000
    huge = b'{"jsonrpc":"2.0","id":2,"result":{"pad":"' + b"y" * 50_000 + b'"}}\n'
    data = PING + b"\n" + huge + PING + b"\n"
    chunks = [data[i : i + chunk] for i in range(0, len(data), chunk)]
    source = ScriptedReceiveStream(chunks)
    async with open_line_stream(source, RecordingSendStream(), max_message_size=limit) as s:
        source.watch = s
        assert await s.receive() == rpc.JsonRpcRequest(1, "ping")
        for _ in range(2):
            with pytest.raises(MessageTooLarge, match="exceeded 1000 bytes") as caught:
                await s.receive()
            assert isinstance(caught.value, trio.BrokenResourceError)
            assert caught.value.limit == limit
            assert caught.value.reply.error.code == -32600
            with pytest.raises(trio.WouldBlock):
                s.receive_nowait()
    assert source.most_buffered <= limit + chunk


async def test_an_unterminated_oversized_tail_breaks_the_input_too() -> None:
    source = ScriptedReceiveStream([PING + b"\n", b"z" * 5000])
    async with open_line_stream(source, RecordingSendStream(), max_message_size=1000) as s:
        assert await s.receive() == rpc.JsonRpcRequest(1, "ping")
        with pytest.raises(MessageTooLarge):
            await s.receive()


async def test_a_line_of_exactly_the_limit_passes() -> None:
    async with open_line_stream(
        ScriptedReceiveStream([PING + b"\n"]), RecordingSendStream(), max_message_size=len(PING)
    ) as s:
        assert await s.receive() == rpc.JsonRpcRequest(1, "ping")
    async with open_line_stream(
        ScriptedReceiveStream([PING + b"\n"]), RecordingSendStream(), max_message_size=len(PING) - 1
    ) as s:
        with pytest.raises(MessageTooLarge):
            await s.receive()


@given(st.data())
async def test_any_chunking_gives_the_same_messages(data: st.DataObject) -> None:
    messages = [
        rpc.JsonRpcRequest(n, "tools/call", {"text": "é\n✓" * n})
        if n % 2
        else rpc.JsonRpcNotification("x/y")
        for n in range(12)
    ]
    wire = b"".join(rpc.dumps(m) + b"\n" for m in messages)
    cuts = sorted(data.draw(st.sets(st.integers(1, len(wire) - 1), max_size=40)))
    chunks = [wire[i:j] for i, j in zip([0, *cuts], [*cuts, len(wire)], strict=True)]
    async with open_line_stream(ScriptedReceiveStream(chunks), RecordingSendStream()) as s:
        assert await receive_all(s) == messages


async def test_queued_messages_go_out_in_one_write_and_aclose_flushes_them() -> None:
    sink = RecordingSendStream()
    sink.gate = trio.Event()  # hold the writer at its first write
    async with open_line_stream(ScriptedReceiveStream([]), sink, send_buffer=8) as s:
        for n in range(6):
            await s.send(rpc.JsonRpcNotification("n", {"n": n}))
        sink.gate.set()
    # The first line went out alone (the writer took it at once); the five queued behind
    # it while the write was blocked went out together, before aclose returned.
    assert len(sink.writes) == 2
    lines = b"".join(sink.writes).splitlines()
    assert [rpc.parse(line) for line in lines] == [
        rpc.JsonRpcNotification("n", {"n": n}) for n in range(6)
    ]


async def test_aclose_gives_up_on_a_stuck_flush_after_flush_timeout(autojump_clock: object) -> None:
    sink = RecordingSendStream()
    sink.gate = trio.Event()  # never opens: the peer does not read
    blocked: list[BaseException] = []

    async def blocked_send(s: LineMessageStream) -> None:
        try:
            await s.send(rpc.JsonRpcNotification("late"))
        except trio.ClosedResourceError as exc:
            blocked.append(exc)

    async with trio.open_nursery() as nursery:
        async with open_line_stream(
            ScriptedReceiveStream([]), sink, send_buffer=1, flush_timeout=3
        ) as s:
            await s.send(rpc.JsonRpcNotification("first"))
            await trio.testing.wait_all_tasks_blocked()  # the writer is stuck in send_all
            await s.send(rpc.JsonRpcNotification("second"))  # fills the queue
            nursery.start_soon(blocked_send, s)
            await trio.testing.wait_all_tasks_blocked()
            start = trio.current_time()
        assert trio.current_time() - start == pytest.approx(3)
    assert len(blocked) == 1  # the blocked sender was woken by the close
    assert sink.writes == []


async def test_send_after_the_peer_closed_its_end_is_broken() -> None:
    async with pipe_pair() as (a, b):
        await b._receive_stream.aclose()  # b stops reading; a's writes now fail with EPIPE
        with trio.fail_after(5):
            for _ in range(1000):
                try:
                    await a.send(rpc.JsonRpcNotification("into/the/void"))
                except trio.BrokenResourceError:
                    break
                await trio.sleep(0.001)
            else:
                pytest.fail("sending to a peer that closed its end never failed")


async def test_wait_reader_gone_wakes_when_the_reader_closes_its_end_without_a_write() -> None:
    """Nothing is written, so no EPIPE can tell: the pipe's error condition does. While
    the reader is there it blocks; closing the stream makes it raise ClosedResourceError."""
    async with pipe_pair() as (a, b), trio.open_nursery() as nursery:
        gone = trio.Event()

        async def watch() -> None:
            await a.wait_reader_gone()
            gone.set()

        nursery.start_soon(watch)
        await trio.testing.wait_all_tasks_blocked()
        assert not gone.is_set()  # b still reads (the pipe's write end is merely writable)
        await b._receive_stream.aclose()
        with trio.fail_after(5):
            await gone.wait()
    async with pipe_pair() as (a, b), trio.open_nursery() as nursery:

        async def wait_on_a() -> None:
            with pytest.raises(trio.ClosedResourceError):
                await a.wait_reader_gone()

        nursery.start_soon(wait_on_a)
        await trio.testing.wait_all_tasks_blocked()
        await a.aclose()
    with pytest.raises(trio.ClosedResourceError):
        await a.wait_reader_gone()


async def test_wait_reader_gone_does_not_watch_what_is_not_a_pipe(
    autojump_clock: object,
) -> None:
    """A socket's readability means data, not a departed reader: not watched."""
    left, right = trio.socket.socketpair()
    right.close()
    stream = FdStream(os.dup(left.fileno()))
    left.close()
    async with open_line_stream(ScriptedReceiveStream([]), stream) as s:
        with trio.move_on_after(60) as scope:
            await s.wait_reader_gone()
        assert scope.cancelled_caught


async def test_receive_is_one_task_at_a_time() -> None:
    async with pipe_pair() as (a, b), trio.open_nursery() as nursery:
        nursery.start_soon(b.receive)
        await trio.testing.wait_all_tasks_blocked()
        with pytest.raises(trio.BusyResourceError):
            await b.receive()
        await a.send(rpc.JsonRpcNotification("x"))


async def test_send_and_receive_are_checkpoints() -> None:
    async with pipe_pair() as (a, b):
        with trio.testing.assert_checkpoints():
            await a.send(rpc.JsonRpcNotification("x"))
        await a.send_raw(b'{"jsonrpc":"2.0","method":"y"}\n{"jsonrpc":"2.0","method":"z"}\n')
        with trio.testing.assert_checkpoints():
            await b.receive()
        with trio.testing.assert_checkpoints():
            await b.receive()  # the second line of a read comes from the buffer
        with trio.testing.assert_checkpoints():
            await b.receive()


async def test_send_nowait_writes_to_an_idle_pipe_at_once() -> None:
    """With nothing queued, the line goes straight into the pipe (no writer task turn),
    and a line the pipe cannot take whole is finished by the writer, in order."""
    r, w = os.pipe()
    fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, 4096)
    os.set_blocking(r, False)
    async with open_line_stream(ScriptedReceiveStream([]), FdStream(w)) as s:
        s.send_nowait(rpc.JsonRpcNotification("now"))
        assert os.read(r, 65536) == b'{"jsonrpc":"2.0","method":"now"}\n'  # no checkpoint between
        big = rpc.JsonRpcNotification("big", {"x": "y" * 10_000})
        s.send_nowait(big)  # 4 KiB now, the rest through the writer
        s.send_nowait(rpc.JsonRpcNotification("after"))  # queued behind the rest: not written yet
        received = bytearray(os.read(r, 65536))
        assert len(received) == 4096
        while received.count(b"\n") < 2:
            await trio.testing.wait_all_tasks_blocked()
            try:
                received += os.read(r, 65536)
            except BlockingIOError:
                await trio.sleep(0.001)
    first, second = bytes(received).splitlines()
    assert rpc.parse(first) == big
    assert rpc.parse(second) == rpc.JsonRpcNotification("after")


async def test_a_receive_that_waits_reads_the_pipe_itself_and_can_be_cancelled() -> None:
    async with pipe_pair() as (a, b):
        with trio.move_on_after(0.01) as scope:
            await b.receive()  # waits in wait_readable: cancelled there, nothing consumed
        assert scope.cancelled_caught
        await a.send(rpc.JsonRpcNotification("x"))
        with trio.fail_after(5):
            assert await b.receive() == rpc.JsonRpcNotification("x")
        await b._receive_stream.aclose()  # the descriptor is gone (fileno() is now -1)
        with pytest.raises(trio.ClosedResourceError):
            await b.receive()


async def test_after_a_read_that_emptied_the_pipe_the_next_receive_waits_first() -> None:
    """A short read leaves the pipe empty, so the next receive waits for it to be readable
    before reading (no read that fails with EAGAIN); cancelled in that wait, it loses
    nothing, and a full read goes on reading at once."""
    async with pipe_pair() as (a, b):
        await a.send(rpc.JsonRpcNotification("first"))
        with trio.fail_after(5):
            assert await b.receive() == rpc.JsonRpcNotification("first")
        assert b._drained
        with trio.move_on_after(0.01) as scope:
            await b.receive()
        assert scope.cancelled_caught
        big = rpc.JsonRpcNotification("big", {"x": "y" * 200_000})  # more than one full read
        await a.send(big)
        await a.send(rpc.JsonRpcNotification("after"))
        with trio.fail_after(5):
            assert await b.receive() == big
            assert await b.receive() == rpc.JsonRpcNotification("after")


async def test_input_from_a_regular_file_is_read_to_its_end(tmp_path: Path) -> None:
    """epoll refuses regular files: a stream over one never waits for it to be readable
    (every read of a file returns at once, data or its end)."""
    path = tmp_path / "input.jsonl"
    path.write_bytes(
        b"".join(rpc.dumps(rpc.JsonRpcNotification(f"n{i}")) + b"\n" for i in range(3))
    )
    _, w = _pipe()
    fd = os.open(path, os.O_RDONLY)
    async with open_line_stream(FdStream(fd), w) as stream:
        with trio.fail_after(5):
            assert [await stream.receive() for _ in range(3)] == [
                rpc.JsonRpcNotification(f"n{i}") for i in range(3)
            ]
            with pytest.raises(trio.EndOfChannel):
                await stream.receive()


async def test_closing_wakes_a_receive_blocked_on_the_pipe_and_the_input_stays_readable() -> None:
    """The direct pipe read has no cancel scope: closing wakes it through the descriptor
    (notify_closing), which must leave the pipe open, so the input can still be drained."""
    async with pipe_pair() as (a, b):

        async def blocked() -> None:
            with pytest.raises(trio.ClosedResourceError):
                await b.receive()

        with trio.fail_after(5):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(blocked)
                await trio.testing.wait_all_tasks_blocked()
                await b._close_sending(trio.current_time() + 1)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(b._discard_input)  # reads the same pipe afresh
                await a.send(rpc.JsonRpcNotification("drained"))
                await trio.testing.wait_all_tasks_blocked()
                assert b._receive_stream.fileno() >= 0
                await a.aclose()  # end of b's input: the drain ends


async def test_a_stream_that_merely_has_a_fileno_is_never_written_directly() -> None:
    """Its descriptor may be blocking: writing to it from the event loop could freeze
    everything. Only trio's FdStream (non-blocking) gets the direct path."""
    r, w = os.pipe()
    os.set_blocking(r, False)

    class BlockingPipe(trio.abc.SendStream):
        def fileno(self) -> int:
            return w  # blocking, as far as anyone knows

        async def send_all(self, data: bytes | bytearray | memoryview) -> None:
            await trio.to_thread.run_sync(os.write, w, bytes(data))

        async def wait_send_all_might_not_block(self) -> None:
            await trio.lowlevel.checkpoint()

        async def aclose(self) -> None:
            await trio.lowlevel.checkpoint()

    try:
        async with open_line_stream(ScriptedReceiveStream([]), BlockingPipe()) as s:
            s.send_nowait(rpc.JsonRpcNotification("queued"))
            with pytest.raises(BlockingIOError):
                os.read(r, 100)  # not written by send_nowait itself
        assert os.read(r, 100) == b'{"jsonrpc":"2.0","method":"queued"}\n'  # the writer's
    finally:
        os.close(r)
        os.close(w)


@pytest.mark.parametrize("handback_delay", [0.0, HANDBACK_DELAY])
async def test_a_session_fails_its_waiting_request_when_an_answer_is_over_the_limit(
    handback_delay: float,
) -> None:
    # Whoever reads (the receive loop, or with the handover the caller itself), the broken
    # input ends the session: the request waiting fails at once, saying the limit, and the
    # peer is told with -32600.
    async with pipe_pair(max_message_size=1000) as (ours, peer):
        connection = Connection(
            "client", info=Implementation(name="t", version="0"), capabilities=ClientCapabilities()
        )
        async with open_session(ours, connection, handback_delay=handback_delay) as session:
            pending, message = connection.initialize_request()
            with trio.fail_after(5):
                async with session.track(pending, message) as call:
                    request = await peer.receive()
                    assert isinstance(request, rpc.JsonRpcRequest)
                    await peer.send_raw(
                        b'{"jsonrpc":"2.0","id":1,"result":"' + b"y" * 5000 + b'"}\n'
                    )
                    with pytest.raises(ConnectionClosed, match="exceeded 1000 bytes"):
                        await call.answer()
                told = await peer.receive()
            assert isinstance(told, rpc.ErrorResponse)
            assert told.id is None
            assert told.error.code == -32600
            assert session.end_reason is not None
            assert "exceeded 1000 bytes" in session.end_reason.message
