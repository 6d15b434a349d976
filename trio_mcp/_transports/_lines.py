"""Newline-delimited JSON-RPC over a pair of byte streams: the stdio framing.

One message per line, UTF-8 JSON with no embedded newline (what the stdio
transport specifies, and what its custom-transport section recommends for any
reliable byte stream: pipes, Unix sockets, TCP).

Theory of operation
-------------------

*Reading* happens in :meth:`LineMessageStream.receive` itself, in the task that
calls it: it takes bytes from the receive stream into a buffer and hands out
one line at a time. A cancelled ``receive`` loses nothing, because bytes are
only ever consumed from the buffer synchronously, after the last checkpoint.
A line longer than ``max_message_size`` is never buffered whole: as soon as the
partial line passes the limit the stream is broken, and ``receive`` raises
:exc:`MessageTooLarge` (a :exc:`trio.BrokenResourceError`) then and on every later
call. Skipping the line and going on would be worse: the lost line may be the
answer some caller waits for, or a request whose sender waits, and nothing in
what is left says which, so that caller would wait for ever. A session whose
input breaks fails every request still waiting with the reason, at once.

*Writing* is done by one writer task fed through a bounded memory channel.
``send`` serializes the message and puts the line in the channel: the channel
takes it whole or not at all, so a cancelled ``send`` never leaves half a line
on the wire, and concurrent senders need no lock. The writer joins whatever is
queued into one ``send_all``. When the peer stops reading, the OS buffer
fills, the writer blocks, the channel fills, and ``send`` blocks: memory held
for outgoing data is at most ``send_buffer`` lines plus the batch being
written.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Final, TypedDict, Unpack

import orjson
import trio

from .._jsonrpc import Message, parse, serialize
from .._types._base import RequestId
from .._util import open_nursery_unwrapped
from ._stream import MessageStream, MessageTooLarge, Received

if sys.platform != "win32":
    import fcntl

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "DEFAULT_SEND_BUFFER",
    "LineMessageStream",
    "LineStreamOptions",
    "connect_line_stream",
    "open_line_stream",
]

#: The default cap on one incoming line, in bytes (4 MiB).
DEFAULT_MAX_MESSAGE_SIZE: Final = 4 * 1024 * 1024
#: The default number of serialized messages that may wait for the writer task.
DEFAULT_SEND_BUFFER: Final = 16

_READ_SIZE: Final = 65536
#: The writer joins queued lines into one write up to about this many bytes.
_BATCH_BYTES: Final = 256 * 1024
_WHITESPACE: Final = frozenset(b" \t\r")
_NEWLINE: Final = ord("\n")


class LineMessageStream(MessageStream):
    """A :class:`~trio_mcp.transports.MessageStream` of newline-delimited JSON over a
    byte :class:`~trio.abc.ReceiveStream` and :class:`~trio.abc.SendStream`.

    Create it with :func:`open_line_stream` or :func:`connect_line_stream` (it
    needs its writer task running). It owns both byte streams and closes them.

    Blocking and cancellation:

    * :meth:`send` blocks only while ``send_buffer`` lines already wait for the
      writer (the peer is not reading). It returns once the line is queued,
      before it is written; if cancelled, nothing of the message is written.
    * :meth:`receive` blocks until a whole line arrives. Cancelling it loses
      nothing: the next call returns what would have come.
    * :meth:`aclose` waits up to ``flush_timeout`` seconds for queued lines to
      be written, then closes both byte streams. If cancelled it stops
      waiting, closes at once and re-raises.

    Error handling:

    * End of input raises :exc:`trio.EndOfChannel`, again on every later call.
      A non-blank last line without its newline is still delivered first.
    * When the peer stops reading for good (broken pipe), the writer task
      ends quietly and the next :meth:`send` raises
      :exc:`trio.BrokenResourceError`. Lines queued before that are lost, as
      bytes in an OS buffer would be.
    * After :meth:`aclose`, :meth:`send` and :meth:`receive` raise
      :exc:`trio.ClosedResourceError`, including a ``receive`` or ``send``
      blocked at the time.
    * Blank lines are skipped; a line that is not JSON-RPC arrives as an
      :class:`~trio_mcp.jsonrpc.InvalidMessage`, and the stream goes on.
    * A line over ``max_message_size`` breaks the input: :meth:`receive`
      raises :exc:`MessageTooLarge` (a :exc:`trio.BrokenResourceError` saying the
      limit), then and on every later call, without buffering the line whole.
      Sending still works (to tell the peer why, before closing).

    Args:
        receive_stream: where lines come from.
        send_stream: where lines go.
        max_message_size: the longest line accepted, in bytes (not counting
            the newline).
        send_buffer: how many serialized messages may wait for the writer
            before :meth:`send` blocks (``0``: every ``send`` waits for the
            writer to take its line).
        flush_timeout: how long :meth:`aclose` waits for queued lines to be
            written (``math.inf``: as long as it takes; ``0``: drop them).
    """

    def __init__(
        self,
        receive_stream: trio.abc.ReceiveStream,
        send_stream: trio.abc.SendStream,
        *,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        send_buffer: int = DEFAULT_SEND_BUFFER,
        flush_timeout: float = 2.0,
    ) -> None:
        if max_message_size < 1:
            raise ValueError("max_message_size must be at least 1")
        self.max_message_size = max_message_size
        self.flush_timeout = flush_timeout
        self._receive_stream = receive_stream
        self._send_stream = send_stream
        self._queue_in, self._queue_out = trio.open_memory_channel[bytes](send_buffer)
        #: Lines queued or being written by the writer: while any are, sends must queue
        #: behind them, so only when there are none may a sender write directly.
        self._pending = 0
        # The pipes' descriptors, for direct reads and writes (asked for at each use: a
        # closed trio FdStream answers -1, where a number kept would name whatever file is
        # opened next). None: use the streams' own methods.
        self._out_fileno = _fileno_of(send_stream)
        self._in_fileno = _fileno_of(receive_stream)
        if self._in_fileno is not None and self._in_fileno() == _descriptor(self._out_fileno):
            # One descriptor both ways (a socket in an FdStream): waking the reader through
            # it would wake the writer too, so reads go through the stream's own method.
            self._in_fileno = None
        #: Whether a direct read may wait for the descriptor before reading (see _read_pipe):
        #: pipes and sockets only (epoll refuses regular files and most devices).
        self._may_wait_first = self._in_fileno is not None and _pollable(self._in_fileno())
        #: The last direct read took less than a full buffer: the pipe is most likely empty.
        self._drained = False
        # receiving
        self._buffer = bytearray()
        self._start = 0  # where the unconsumed data in _buffer begins
        self._scan = 0  # where to resume looking for a newline
        self._too_long = False  # a line passed max_message_size: the input is broken
        self._at_eof = False
        self._receiving = False
        self._receive_done: trio.Event | None = None  # set when the current receive returns
        self._receive_scope: trio.CancelScope | None = None
        # writing and closing
        self._writer_scope = trio.CancelScope()
        self._writer_done = trio.Event()
        self._closed = False

    # -- sending ----------------------------------------------------------------------------------

    async def send(self, message: Message, *, related: RequestId | None = None) -> None:
        """Send one message (``related`` is ignored: a pipe has one channel).

        When nothing is waiting to be written and the pipe has room, the line is
        written at once, without waiting; otherwise it queues for the writer task
        (blocking while the queue is full). Either way a line is written whole:
        what the pipe does not take at once is handed to the writer, which writes
        it before anything else. A cancellation point always; it yields only when
        it has to wait.

        Raises:
            trio.ClosedResourceError: the stream was closed, before or during the call.
            trio.BrokenResourceError: the peer stopped reading for good.
            TypeError: the message holds something JSON cannot represent.
        """
        line = orjson.dumps(serialize(message), option=orjson.OPT_APPEND_NEWLINE)
        await trio.lowlevel.checkpoint_if_cancelled()
        if self._pending == 0 and self._out_fileno is not None and not self._closed:
            line = self._write_now(line, self._out_fileno())
            if not line:
                await trio.lowlevel.cancel_shielded_checkpoint()
                return
        await self._enqueue(line)

    def _write_now(self, line: bytes, fd: int) -> bytes:
        """Write as much of ``line`` as the pipe takes without blocking; return the rest."""
        if fd < 0:
            return line  # closed under us: the writer task reports it
        try:
            written = os.write(fd, line)
        except BlockingIOError:
            return line
        except OSError as exc:
            # The peer closed its end (EPIPE), or the descriptor is gone.
            raise trio.BrokenResourceError("the peer is no longer reading") from exc
        return line[written:]

    def send_nowait(self, message: Message, *, related: RequestId | None = None) -> None:
        """Send one message without waiting: written at once when nothing is queued and
        the pipe has room, else queued for the writer if the queue has room.

        Raises:
            trio.WouldBlock: the queue is full; use :meth:`send`.
            trio.ClosedResourceError, trio.BrokenResourceError: as :meth:`send`.
        """
        line = orjson.dumps(serialize(message), option=orjson.OPT_APPEND_NEWLINE)
        if self._pending == 0 and self._out_fileno is not None and not self._closed:
            # Nothing queued, so the queue has room for whatever the pipe leaves over
            # (it is never unbuffered): a line is never left half written.
            line = self._write_now(line, self._out_fileno())
            if not line:
                return
        try:
            self._queue_in.send_nowait(line)
        except trio.BrokenResourceError:
            raise trio.BrokenResourceError("the peer is no longer reading") from None
        self._pending += 1

    async def send_raw(self, data: bytes) -> None:
        """Queue bytes to write as they are (for tests of bad input; include the newline).

        Raises as :meth:`send` does.
        """
        await self._enqueue(bytes(data))

    async def _enqueue(self, line: bytes) -> None:
        self._pending += 1
        try:
            await self._queue_in.send(line)
        except trio.BrokenResourceError:
            self._pending -= 1
            # The writer task has ended: the peer stopped reading (or the writer's
            # nursery was cancelled); nothing more can be delivered.
            raise trio.BrokenResourceError("the peer is no longer reading") from None
        except BaseException:
            self._pending -= 1
            raise

    async def _write_loop(
        self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        queue = self._queue_out
        send_all = self._send_stream.send_all
        try:
            with self._writer_scope, queue:
                task_status.started()
                async for line in queue:
                    batch = [line]
                    size = len(line)
                    while size < _BATCH_BYTES:
                        try:
                            line = queue.receive_nowait()
                        except (trio.WouldBlock, trio.EndOfChannel):
                            break
                        batch.append(line)
                        size += len(line)
                    try:
                        await send_all(batch[0] if len(batch) == 1 else b"".join(batch))
                        self._pending -= len(batch)
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        # Broken: the peer closed its end. Closed: our aclose gave up
                        # on the flush. Either way, leaving closes the queue, so
                        # senders learn of it.
                        return
        finally:
            self._writer_done.set()

    async def wait_reader_gone(self) -> None:
        """Block until the peer has closed its end of our output pipe: nothing sent from
        now on can be read.

        The write end of a pipe never becomes readable; when its reader goes, the OS
        marks it with an error (hang-up) condition instead, which epoll (Linux) and
        kqueue (macOS, the BSDs) report to a task waiting for it to become readable.
        So this waits for that, in :func:`trio.lowlevel.wait_readable`: it costs
        nothing while the peer reads, and wakes as soon as the peer is gone, whether
        or not anything is being written. (asyncio's pipe transports notice a closed
        pipe the same way.) Writing is not needed to notice, unlike ``EPIPE``.

        Only an output that is the write end of a pipe (or of a FIFO opened for
        writing only) is watched. For anything else (a socket, whose readability
        means data; a regular file; a stream this class does not write to
        directly) it blocks until cancelled. One task at a time.

        Raises:
            trio.ClosedResourceError: the stream was closed (before or during the wait).
            trio.BusyResourceError: another task is already waiting.
        """
        fd = _descriptor(self._out_fileno)
        if self._closed or (fd is not None and fd < 0):
            await trio.lowlevel.checkpoint()
            raise trio.ClosedResourceError("the message stream is closed")
        if fd is None or not _is_write_end_of_pipe(fd):
            await trio.sleep_forever()
        try:
            await trio.lowlevel.wait_readable(fd)
        except trio.ClosedResourceError:
            raise trio.ClosedResourceError("the message stream is closed") from None

    # -- receiving --------------------------------------------------------------------------------

    async def receive(self) -> Received:
        """Wait for the next line and parse it.

        Raises:
            trio.EndOfChannel: the input ended (again on every later call).
            trio.ClosedResourceError: the stream was closed, before or during the call.
            trio.BrokenResourceError: the underlying stream broke.
            trio.BusyResourceError: another task is already receiving.
        """
        if self._receiving:
            raise trio.BusyResourceError("another task is already receiving from this stream")
        self._receiving = True
        try:
            # Nothing is consumed before this point, so a cancellation here loses nothing;
            # after it, only the read itself may be cancelled (and it consumes nothing then).
            # A read that will wait for the pipe first is such a cancellation point already.
            ended = self._closed or self._at_eof or self._too_long
            if self._buffer or not self._drained or ended:
                await trio.lowlevel.checkpoint_if_cancelled()
            # (An empty buffer, the usual case, has nothing to take.)
            item = self._next_from_buffer() if self._buffer and not ended else None
            if item is not None or ended or self._too_long:
                await trio.lowlevel.cancel_shielded_checkpoint()
            if item is not None:
                return item
            while True:
                if self._closed:
                    raise trio.ClosedResourceError("the message stream is closed")
                if self._too_long:
                    raise MessageTooLarge(self.max_message_size)
                if self._at_eof:
                    raise trio.EndOfChannel
                data = await (self._read_pipe() if self._in_fileno is not None else self._read())
                if not data:
                    self._at_eof = True
                    item = self._residue()
                    if item is not None:
                        return item
                    raise trio.EndOfChannel
                buffer = self._buffer
                if (
                    not buffer
                    and len(data) > 1
                    and data[-1] == _NEWLINE
                    and data.find(b"\n") == len(data) - 1
                    and len(data) - 1 <= self.max_message_size
                    and data[0] not in _WHITESPACE
                ):
                    # The usual read: exactly one whole line. Parse it where it lies.
                    return parse(data[:-1])
                buffer += data
                item = self._next_from_buffer()
                if item is not None:
                    return item
        finally:
            self._receiving = False
            done = self._receive_done
            if done is not None:
                self._receive_done = None
                done.set()

    def receive_nowait(self) -> Received:
        """The next message if one is already buffered; never reads from the byte stream.

        Raises:
            trio.WouldBlock: nothing complete is buffered (or the stream is closed, at its
                end, or another task is receiving): call :meth:`receive`.
        """
        if not self._buffer or self._receiving or self._closed or self._at_eof or self._too_long:
            raise trio.WouldBlock
        item = self._next_from_buffer()
        if item is None:
            raise trio.WouldBlock
        return item

    async def _read_pipe(self) -> bytes:
        """Read what the input pipe has (``b""`` at its end), waiting until it has some.

        What trio's ``FdStream.receive_some`` does, minus its scheduling point before the
        read: a read that must wait yields in ``wait_readable`` alone, and only a read
        that finds data at once yields afterwards (shielded: the data is not lost). For a
        client waiting on one answer at a time that is one trip through the scheduler per
        message instead of two.

        After a read that emptied the pipe (less than a full buffer), it waits for the
        pipe to be readable before reading: the next message comes only once the peer has
        answered us, so a read at once would almost always fail with ``EAGAIN``, a
        system call and an exception per message for nothing. (Only where epoll can
        watch the descriptor: a pipe or a socket.)

        No cancel scope of our own (entering one costs about as much as the read):
        closing wakes a read blocked on the descriptor with notify_closing instead (see
        :meth:`_wake_reader`).

        Raises:
            trio.ClosedResourceError: the stream or the pipe was closed (before or during
                the wait).
            trio.BrokenResourceError: the read failed.
        """
        assert self._in_fileno is not None
        fd = self._in_fileno()
        if fd < 0:
            if self._closed:
                raise trio.ClosedResourceError("the message stream is closed")
            raise trio.ClosedResourceError("the pipe is closed")
        try:
            waited = self._drained
            if waited:
                await trio.lowlevel.wait_readable(fd)
            while True:
                try:
                    data = os.read(fd, _READ_SIZE)
                except BlockingIOError:
                    await trio.lowlevel.wait_readable(fd)
                    waited = True
                    continue
                except OSError as exc:
                    if exc.errno == errno.EBADF:
                        raise trio.ClosedResourceError("the pipe is closed") from None
                    raise trio.BrokenResourceError(f"reading the pipe failed: {exc}") from exc
                break
        except trio.ClosedResourceError:
            if self._closed:
                raise trio.ClosedResourceError("the message stream is closed") from None
            raise
        if not waited:
            await trio.lowlevel.cancel_shielded_checkpoint()
        self._drained = self._may_wait_first and len(data) < _READ_SIZE
        return data

    async def _read(self) -> bytes | bytearray:
        """Read from the receive stream (not a pipe we read directly)."""
        with trio.CancelScope() as scope:
            self._receive_scope = scope
            try:
                return await self._receive_stream.receive_some(_READ_SIZE)
            except trio.ClosedResourceError:
                if self._closed:
                    raise trio.ClosedResourceError("the message stream is closed") from None
                raise
            finally:
                self._receive_scope = None
        # Only our aclose cancels this scope.
        raise trio.ClosedResourceError("the message stream is closed")

    def _next_from_buffer(self) -> Received | None:
        """Take the next complete line out of the buffer, or make room to read more."""
        buffer = self._buffer
        limit = self.max_message_size
        while True:
            newline = buffer.find(b"\n", self._scan)
            if newline < 0:
                break
            start = self._start
            self._start = self._scan = newline + 1
            if newline - start > limit:
                self._break_for_too_long()
                return None
            if newline == start or (
                buffer[start] in _WHITESPACE and not buffer[start:newline].strip()
            ):
                continue  # blank line
            return parse(buffer[start:newline])
        # No newline in the rest. Drop what is consumed, and watch the partial line's size.
        del buffer[: self._start]
        self._start = 0
        self._scan = len(buffer)
        if len(buffer) > limit:
            self._break_for_too_long()
        return None

    def _break_for_too_long(self) -> None:
        """A line passed the limit: drop everything buffered (the rest of that line is never
        read) and mark the input broken, for :meth:`receive` to raise :exc:`MessageTooLarge`."""
        del self._buffer[:]
        self._start = self._scan = 0
        self._too_long = True

    def _residue(self) -> Received | None:
        """At end of input: a last line without its newline, if there is one."""
        rest = bytes(self._buffer[self._start :])
        del self._buffer[:]
        self._start = self._scan = 0
        if not rest.strip():
            return None
        return parse(rest)

    # -- closing ----------------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Flush queued lines (up to ``flush_timeout`` seconds), then close both byte
        streams. Wakes a task blocked in :meth:`receive` or :meth:`send` with
        :exc:`trio.ClosedResourceError`. Idempotent; closes even when cancelled."""
        await self._close(trio.current_time() + self.flush_timeout)

    async def _close(self, flush_deadline: float) -> None:
        """Close, giving the writer until ``flush_deadline`` to write what is queued."""
        try:
            await self._close_sending(flush_deadline)
        finally:
            await trio.aclose_forcefully(self._receive_stream)

    async def _close_sending(self, flush_deadline: float) -> None:
        """Close for our user and close the send stream (after the writer wrote what is
        queued, or at ``flush_deadline``), but leave the receive stream open for
        :meth:`_discard_input`."""
        if self._closed:
            await trio.lowlevel.checkpoint()
            return
        self._closed = True
        self._queue_in.close()  # the writer drains the queue, then stops
        self._wake_reader()
        try:
            with trio.move_on_at(flush_deadline):
                await self._writer_done.wait()
        finally:
            self._writer_scope.cancel()
            await trio.aclose_forcefully(self._send_stream)

    def _wake_reader(self) -> None:
        """Wake a task blocked reading with :exc:`trio.ClosedResourceError`, but leave the
        input open for :meth:`_discard_input`."""
        if self._receive_scope is not None:
            self._receive_scope.cancel()
        elif self._receiving and self._in_fileno is not None:
            fd = self._in_fileno()
            if fd >= 0:
                # Wakes whoever waits on the descriptor without closing it; a later read
                # (_discard_input) waits on it afresh.
                trio.lowlevel.notify_closing(fd)

    async def _discard_input(self) -> None:
        """After :meth:`_close_sending`: read and drop whatever the peer still writes, until
        its end (a peer blocked writing to us can then go on and exit). Cancel it to stop.
        """
        if self._receiving:
            # Wait until the woken receiver has let go of the stream.
            done = self._receive_done = trio.Event()
            await done.wait()
        try:
            while await self._receive_stream.receive_some(_READ_SIZE):
                pass
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            pass


async def connect_line_stream(
    nursery: trio.Nursery,
    receive_stream: trio.abc.ReceiveStream,
    send_stream: trio.abc.SendStream,
    *,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    send_buffer: int = DEFAULT_SEND_BUFFER,
    flush_timeout: float = 2.0,
) -> LineMessageStream:
    """Start a :class:`LineMessageStream` whose writer task runs in ``nursery`` (yours).

    Returns once the writer runs. The nursery will not exit until the stream is
    closed (:meth:`LineMessageStream.aclose`) or the nursery is cancelled;
    cancelling it stops the writer, after which sends raise
    :exc:`trio.BrokenResourceError`. Options are :class:`LineMessageStream`'s.
    """
    stream = LineMessageStream(
        receive_stream,
        send_stream,
        max_message_size=max_message_size,
        send_buffer=send_buffer,
        flush_timeout=flush_timeout,
    )
    await nursery.start(stream._write_loop)
    return stream


class LineStreamOptions(TypedDict, total=False):
    """The keyword options of :func:`open_line_stream` and :func:`connect_line_stream`:
    :class:`LineMessageStream`'s (see it for what each means and its default)."""

    max_message_size: int
    send_buffer: int
    flush_timeout: float


@asynccontextmanager
async def open_line_stream(
    receive_stream: trio.abc.ReceiveStream,
    send_stream: trio.abc.SendStream,
    **options: Unpack[LineStreamOptions],
) -> AsyncIterator[LineMessageStream]:
    """A :class:`LineMessageStream` for the duration of the block.

    Entering starts the writer task; leaving closes the stream (flushing queued
    lines for up to ``flush_timeout`` seconds) and waits for the writer to end.

    Example::

        async with open_line_stream(trio.lowlevel.FdStream(r), trio.lowlevel.FdStream(w)) as s:
            await s.send(jsonrpc.JsonRpcNotification("notifications/initialized"))
    """
    async with open_nursery_unwrapped() as nursery:
        stream = await connect_line_stream(nursery, receive_stream, send_stream, **options)
        try:
            yield stream
        finally:
            await stream.aclose()


def _fileno_of(stream: object) -> Callable[[], int] | None:
    # Only trio's own pipe streams (or a wrapper that names one as ``fd_stream``): their
    # descriptors are non-blocking, and fileno() says -1 once closed. The descriptor of
    # anything else might block the whole event loop.
    inner = getattr(stream, "fd_stream", stream)
    return inner.fileno if isinstance(inner, trio.lowlevel.FdStream) else None


def _descriptor(fileno: Callable[[], int] | None) -> int | None:
    return None if fileno is None else fileno()


def _pollable(fd: int) -> bool:
    """Whether epoll can watch ``fd`` (a pipe or a socket)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _is_write_end_of_pipe(fd: int) -> bool:
    """Whether ``fd`` is a pipe (or FIFO) open for writing only: it can become readable
    only by its reader going away."""
    if sys.platform == "win32":
        return False
    try:
        return (
            stat.S_ISFIFO(os.fstat(fd).st_mode)
            and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY
        )
    except OSError:
        return False
