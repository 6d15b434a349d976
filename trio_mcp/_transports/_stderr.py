"""Draining a child's stderr: forward it line by line and keep its last lines, at a
bounded cost however much the child writes.

A child that writes to a pipe nobody reads blocks once the pipe is full (64
KiB on Linux), and a stdio server blocked on stderr stops answering. So stderr
is always read, whatever the caller wants done with it.

Theory of operation
-------------------

Each line costs the reader a decode and a call of the handler (by default a log
record), so a child that floods stderr could keep the host's one thread busy and
starve every other server it runs. The drain therefore hands on at most
``rate`` lines a second, with a burst allowance of ten seconds' worth (a token
bucket: a server that dumps its configuration at start-up loses nothing). Past
that, it *drops*:

* what it reads is no longer split into lines or handed on; it is counted
  (:meth:`StderrDrain.statistics`), and only the last lines are kept for the
  tail, so that :exc:`~trio_mcp.ConnectionClosed` still shows how the child ended;
* it reads in large chunks: it pauses :data:`STDERR_DROP_PAUSE` seconds between reads,
  so each read takes a pipeful (the pipe is enlarged to 1 MiB where Linux allows
  it), and the reads are at most ``1 / STDERR_DROP_PAUSE`` a second. A child that
  writes faster than a pipeful per pause waits for the pipe, as it would on a
  slow terminal, for at most the pause: it is never blocked for good.

When the budget allows a second's worth of lines again, the handler first gets
one line saying how many lines were dropped, then the lines as before.
"""

from __future__ import annotations

import logging
import math
import sys
from collections import deque
from collections.abc import Callable
from typing import Final

import attrs
import trio

if sys.platform == "linux":
    import fcntl

__all__ = [
    "DEFAULT_STDERR_RATE",
    "DEFAULT_STDERR_TAIL_LINES",
    "STDERR_DROP_PAUSE",
    "MAX_STDERR_LINE",
    "StderrDrain",
    "StderrStatistics",
    "log_stderr_line",
]

#: How many of the child's last stderr lines are kept for :exc:`~trio_mcp.ConnectionClosed`.
DEFAULT_STDERR_TAIL_LINES: Final = 20
#: A stderr line longer than this many bytes is passed on in pieces of this size.
MAX_STDERR_LINE: Final = 8192
#: How many stderr lines a second are handed on, sustained (ten times as many in a burst).
DEFAULT_STDERR_RATE: Final = 1000.0
#: Seconds between reads while lines are being dropped (so at most this many a second).
STDERR_DROP_PAUSE: Final = 0.05

#: How many seconds' worth of lines the budget holds at most.
_BURST_SECONDS: Final = 10.0
_READ_SIZE: Final = 65536
#: Reads while dropping take up to this much: an enlarged pipe's worth.
_DROP_READ_SIZE: Final = 1 << 20

stderr_log = logging.getLogger("trio_mcp.stdio.stderr")


def log_stderr_line(pid: int) -> Callable[[str], None]:
    """The default stderr handler: each line goes to the ``trio_mcp.stdio.stderr``
    logger at INFO level (a server's stderr is its log, not necessarily an error)."""

    def handle(line: str) -> None:
        stderr_log.info("[pid %d] %s", pid, line)

    return handle


@attrs.frozen(kw_only=True)
class StderrStatistics:
    """What a :class:`StderrDrain` has done so far.

    Attributes:
        reads: reads from the pipe.
        lines: lines (and pieces of long lines) handed to the handler.
        dropped_lines: lines read but not handed on (past the rate).
        dropped_bytes: bytes read but not handed on.
    """

    reads: int
    lines: int
    dropped_lines: int
    dropped_bytes: int


class StderrDrain:
    """Reads a byte stream to its end, one line at a time.

    Each line (decoded as UTF-8, undecodable bytes replaced, without its line
    ending) is passed to ``handler`` and kept among the last ``tail_lines``.
    Memory is bounded: a line longer than :data:`MAX_STDERR_LINE` bytes is
    handed on in pieces. At most ``rate`` lines a second are handed on (see the
    module notes); the rest are counted, and dropped but for the tail.

    ``handler`` runs in the draining task and must not block; an exception it
    raises ends the drain and propagates.
    """

    def __init__(
        self,
        handler: Callable[[str], object],
        *,
        tail_lines: int,
        rate: float = DEFAULT_STDERR_RATE,
    ) -> None:
        if math.isnan(rate) or rate <= 0:
            raise ValueError("the stderr rate must be a positive number of lines a second")
        self._handler = handler
        self._tail: deque[str] = deque(maxlen=tail_lines)
        self.done = trio.Event()
        self.rate = rate
        self._burst = rate * _BURST_SECONDS
        self._tokens = self._burst
        self._resume_at = max(1.0, min(rate, self._burst))
        self._refilled_at: float | None = None
        self._pending = bytearray()  # the start of a line whose end has not come yet
        self._dropping = False
        self._enlarged = False
        # statistics
        self._reads = 0
        self._lines = 0
        self._dropped_lines = 0
        self._dropped_bytes = 0
        # dropped since the handler last heard of it
        self._unreported_lines = 0
        self._unreported_bytes = 0

    @property
    def tail(self) -> str | None:
        """The last lines seen, joined with newlines (``None`` if there were none)."""
        return "\n".join(self._tail) if self._tail else None

    def statistics(self) -> StderrStatistics:
        """Counts of what was read, handed on and dropped."""
        return StderrStatistics(
            reads=self._reads,
            lines=self._lines,
            dropped_lines=self._dropped_lines,
            dropped_bytes=self._dropped_bytes,
        )

    async def run(self, stream: trio.abc.ReceiveStream) -> None:
        """Read ``stream`` until its end (or until it is closed, or this is cancelled).
        Sets :attr:`done` when finished, however it finishes."""
        try:
            while True:
                try:
                    data = await stream.receive_some(
                        _DROP_READ_SIZE if self._dropping else _READ_SIZE
                    )
                except (trio.ClosedResourceError, trio.BrokenResourceError):
                    data = b""
                if not data:
                    self._finish()
                    return
                self._reads += 1
                self._take(data)
                if self._dropping:
                    if not self._enlarged:
                        self._enlarged = True
                        _enlarge_pipe(stream)
                    # Let the pipe fill, so the next read takes a pipeful.
                    await trio.sleep(STDERR_DROP_PAUSE)
        finally:
            self.done.set()

    # -- lines ------------------------------------------------------------------------------------

    def _refill(self) -> None:
        if self.rate == math.inf:
            return
        now = trio.current_time()
        if self._refilled_at is not None:
            self._tokens = min(self._burst, self._tokens + (now - self._refilled_at) * self.rate)
        self._refilled_at = now

    def _take(self, data: bytes | bytearray) -> None:
        """Hand on the lines of ``data`` while the budget lasts; drop the rest."""
        self._refill()
        # Once dropping, hand on again only when a second's worth of lines is allowed: the
        # handler then hears of the drops about once a second, not after every pause.
        if self._tokens < (self._resume_at if self._dropping else 1):
            self._drop(data)
            return
        self._report_dropped()
        pending = self._pending
        pending += data
        # Each piece leaves the buffer before the handler sees it (deleting from the front
        # of a bytearray is cheap), so a failing handler never gets a line twice.
        while (newline := pending.find(b"\n", 0, MAX_STDERR_LINE + 1)) >= 0 or len(
            pending
        ) > MAX_STDERR_LINE:
            if self._tokens < 1:
                rest = bytes(pending)
                del pending[:]
                self._drop(rest)
                return
            self._tokens -= 1
            end = newline if newline >= 0 else MAX_STDERR_LINE
            line = bytes(pending[:end])
            del pending[: end + 1 if newline >= 0 else end]
            self._emit(line)

    def _emit(self, raw: bytes | bytearray) -> None:
        self._hand_on(raw.decode("utf-8", errors="replace").rstrip("\r"))

    def _hand_on(self, line: str) -> None:
        self._tail.append(line)
        self._lines += 1
        self._handler(line)

    def _drop(self, data: bytes | bytearray) -> None:
        """Past the rate: count ``data`` (which follows :attr:`_pending`) as dropped, keeping
        only the last lines for the tail; cost: a count and a few searches from the end."""
        self._dropping = True
        newlines = data.count(b"\n")
        self._dropped_bytes += len(data)
        self._dropped_lines += newlines
        self._unreported_bytes += len(data)
        self._unreported_lines += newlines
        last = data.rfind(b"\n")
        if last < 0:
            self._pending += data
            del self._pending[:-MAX_STDERR_LINE]  # the tail keeps a long line's end
            return
        wanted = self._tail.maxlen or 0
        kept: list[bytes] = []
        end = last
        while len(kept) < wanted:
            start = data.rfind(b"\n", 0, end) + 1
            if start == 0:
                kept.append((bytes(self._pending) + data[:end])[-MAX_STDERR_LINE:])
                break
            kept.append(bytes(data[max(start, end - MAX_STDERR_LINE) : end]))
            end = start - 1
        for raw in reversed(kept):
            self._tail.append(raw.decode("utf-8", errors="replace").rstrip("\r"))
        self._pending = bytearray(data[last + 1 :][-MAX_STDERR_LINE:])

    def _report_dropped(self) -> None:
        """Tell the handler how much was dropped since it last heard (if anything was)."""
        self._dropping = False
        if not self._unreported_bytes:
            return
        lines, size = self._unreported_lines, self._unreported_bytes
        self._unreported_lines = self._unreported_bytes = 0
        self._hand_on(
            f"[trio_mcp: dropped {lines} lines ({size} bytes) of this server's stderr:"
            f" more than {self.rate:g} lines a second]"
        )

    def _finish(self) -> None:
        """At the end of the stream: the last line without its newline, and what was dropped."""
        if self._dropping:
            self._report_dropped()
            if self._pending:
                self._tail.append(self._pending.decode("utf-8", errors="replace").rstrip("\r"))
        elif self._pending:
            self._emit(self._pending)
        del self._pending[:]


def _enlarge_pipe(stream: trio.abc.ReceiveStream) -> None:
    """Best effort: give the pipe behind ``stream`` 1 MiB, so a read takes more at once."""
    if sys.platform != "linux":
        return
    fileno = getattr(stream, "fileno", None)
    if fileno is None:
        return
    try:
        fcntl.fcntl(fileno(), fcntl.F_SETPIPE_SZ, _DROP_READ_SIZE)
    except (OSError, ValueError):
        pass  # over the user's pipe quota, or not a pipe: reads stay pipe-sized
