"""Draining a child's stderr: forward it line by line and keep its last lines.

A child that writes to a pipe nobody reads blocks once the pipe is full (64
KiB on Linux), and a stdio server blocked on stderr stops answering. So stderr
is always read, whatever the caller wants done with it.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from typing import Final

import trio

__all__ = ["DEFAULT_STDERR_TAIL_LINES", "MAX_STDERR_LINE", "StderrDrain", "log_stderr_line"]

#: How many of the child's last stderr lines are kept for :exc:`~trio_mcp.ConnectionClosed`.
DEFAULT_STDERR_TAIL_LINES: Final = 20
#: A stderr line longer than this many bytes is passed on in pieces of this size.
MAX_STDERR_LINE: Final = 8192

_READ_SIZE: Final = 65536

stderr_log = logging.getLogger("trio_mcp.stdio.stderr")


def log_stderr_line(pid: int) -> Callable[[str], None]:
    """The default stderr handler: each line goes to the ``trio_mcp.stdio.stderr``
    logger at INFO level (a server's stderr is its log, not necessarily an error)."""

    def handle(line: str) -> None:
        stderr_log.info("[pid %d] %s", pid, line)

    return handle


class StderrDrain:
    """Reads a byte stream to its end, one line at a time.

    Each line (decoded as UTF-8, undecodable bytes replaced, without its line
    ending) is passed to ``handler`` and kept among the last ``tail_lines``.
    Memory is bounded: a line longer than :data:`MAX_STDERR_LINE` bytes is
    handed on in pieces.

    ``handler`` runs in the draining task and must not block; an exception it
    raises ends the drain and propagates.
    """

    def __init__(self, handler: Callable[[str], object], *, tail_lines: int) -> None:
        self._handler = handler
        self._tail: deque[str] = deque(maxlen=tail_lines)
        self.done = trio.Event()

    @property
    def tail(self) -> str | None:
        """The last lines seen, joined with newlines (``None`` if there were none)."""
        return "\n".join(self._tail) if self._tail else None

    def _emit(self, raw: bytes | bytearray) -> None:
        line = raw.decode("utf-8", errors="replace").rstrip("\r")
        self._tail.append(line)
        self._handler(line)

    async def run(self, stream: trio.abc.ReceiveStream) -> None:
        """Read ``stream`` until its end (or until it is closed, or this is cancelled).
        Sets :attr:`done` when finished, however it finishes."""
        pending = bytearray()  # the start of a line whose end has not come yet
        try:
            while True:
                try:
                    data = await stream.receive_some(_READ_SIZE)
                except (trio.ClosedResourceError, trio.BrokenResourceError):
                    data = b""
                if not data:
                    if pending:
                        self._emit(pending)
                    return
                pending += data
                # Each piece leaves the buffer before the handler sees it (deleting from
                # the front of a bytearray is cheap), so a failing handler never gets a
                # line twice.
                while (newline := pending.find(b"\n", 0, MAX_STDERR_LINE + 1)) >= 0 or len(
                    pending
                ) > MAX_STDERR_LINE:
                    end = newline if newline >= 0 else MAX_STDERR_LINE
                    line = bytes(pending[:end])
                    del pending[: end + 1 if newline >= 0 else end]
                    self._emit(line)
        finally:
            self.done.set()
