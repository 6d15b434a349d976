"""The server side of stdio: a message stream over this process's own stdin and stdout.

Resource handling
-----------------

The stream reads and writes *duplicates* of file descriptors 0 and 1 (as
:class:`trio.lowlevel.FdStream`), so closing it never closes the process's
standard streams. With ``protect_stdio`` (the default), while the stream is
open, fd 1 points at stderr and fd 0 at ``/dev/null``: a stray ``print()``, a
C library's output, or a subprocess a tool starts (which inherits fds 0, 1 and 2)
can then neither corrupt the JSON-RPC on stdout nor swallow bytes meant for
the server. Both are put back when the stream closes.

Caveats
-------

Trio needs the pipes in non-blocking mode, and that mode belongs to the open
file, shared by every descriptor and process that uses it. Run as an MCP
server (stdin and stdout are pipes from the client) this is harmless. In a
terminal, where stdin, stdout and stderr are often one open file, stderr
becomes non-blocking too until the stream closes (see the warning on
:class:`trio.lowlevel.FdStream`). Open one such stream at a time.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Unpack

import trio
from trio.lowlevel import FdStream

from .._util import open_nursery_unwrapped
from ._lines import (
    DEFAULT_MAX_MESSAGE_SIZE,
    DEFAULT_SEND_BUFFER,
    LineMessageStream,
    LineStreamOptions,
)

__all__ = [
    "StdioServerStreamOptions",
    "connect_stdio_server_stream",
    "open_stdio_server_stream",
]


class _StandardOutput(trio.abc.SendStream):
    """A duplicate of the original stdout; closing it runs ``restore`` (once)."""

    def __init__(self, stream: FdStream, restore: Callable[[], None] | None) -> None:
        #: The pipe itself (line streams write to it directly when it has room).
        self.fd_stream = stream
        self._restore = restore

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self.fd_stream.send_all(data)

    def fileno(self) -> int:
        return self.fd_stream.fileno()

    async def wait_send_all_might_not_block(self) -> None:
        await self.fd_stream.wait_send_all_might_not_block()

    async def aclose(self) -> None:
        self.fd_stream.close()
        restore, self._restore = self._restore, None
        if restore is not None:
            restore()
        await trio.lowlevel.checkpoint()


def _flush_stdout() -> None:
    if sys.stdout is not None:
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass


def _take_standard_streams(protect_stdio: bool) -> tuple[FdStream, _StandardOutput]:
    _flush_stdout()
    stdin_fd = os.dup(0)
    stdout_fd = os.dup(1)
    if not protect_stdio:
        return FdStream(stdin_fd), _StandardOutput(FdStream(stdout_fd), None)
    saved_stdin, saved_stdout = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    try:
        os.dup2(devnull, 0)
        try:
            os.dup2(2, 1)  # stray output goes to stderr ...
        except OSError:
            os.dup2(devnull, 1)  # ... or nowhere, if there is no stderr
    finally:
        os.close(devnull)

    def restore() -> None:
        _flush_stdout()  # what was printed meanwhile belongs to stderr
        os.dup2(saved_stdout, 1)
        os.dup2(saved_stdin, 0)
        os.close(saved_stdout)
        os.close(saved_stdin)

    return FdStream(stdin_fd), _StandardOutput(FdStream(stdout_fd), restore)


async def connect_stdio_server_stream(
    nursery: trio.Nursery,
    *,
    protect_stdio: bool = True,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    send_buffer: int = DEFAULT_SEND_BUFFER,
    flush_timeout: float = 2.0,
) -> LineMessageStream:
    """A message stream over this process's stdin and stdout, its writer task in
    ``nursery`` (yours). Close it with :meth:`~LineMessageStream.aclose`.

    See :func:`open_stdio_server_stream` for the arguments.
    """
    receive_stream, send_stream = _take_standard_streams(protect_stdio)
    stream = LineMessageStream(
        receive_stream,
        send_stream,
        max_message_size=max_message_size,
        send_buffer=send_buffer,
        flush_timeout=flush_timeout,
    )
    try:
        await nursery.start(stream._write_loop)
    except BaseException:
        await trio.aclose_forcefully(stream)
        raise
    return stream


class StdioServerStreamOptions(LineStreamOptions, total=False):
    """The keyword options of :func:`open_stdio_server_stream` and
    :func:`connect_stdio_server_stream` (see :func:`open_stdio_server_stream` for what
    each means and its default)."""

    protect_stdio: bool


@asynccontextmanager
async def open_stdio_server_stream(
    **options: Unpack[StdioServerStreamOptions],
) -> AsyncIterator[LineMessageStream]:
    """Serve MCP over this process's stdin and stdout for the duration of the block.

    ``receive`` raises :exc:`trio.EndOfChannel` when the client closes our
    stdin, which the stdio transport makes the signal to shut down. Leaving the
    block writes what is still queued (for up to ``flush_timeout`` seconds)
    and closes our duplicates of stdin and stdout.

    Example::

        async with open_stdio_server_stream() as stream:
            async with open_session(stream, Connection("server", info=...), handler=...) as s:
                await s.wait_finished()

    Args:
        protect_stdio: while the stream is open, point fd 1 at stderr and fd 0
            at ``/dev/null`` (see the module docs), so stdout carries nothing
            but JSON-RPC.
        max_message_size: the longest line accepted, in bytes.
        send_buffer: messages that may wait for the writer before ``send`` blocks.
        flush_timeout: how long closing waits for queued messages to be written.

    Raises:
        OSError: fd 0 or 1 is not open.
    """
    async with open_nursery_unwrapped() as nursery:
        stream = await connect_stdio_server_stream(nursery, **options)
        try:
            yield stream
        finally:
            await stream.aclose()
