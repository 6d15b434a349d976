"""The stderr drain's cost bound (issue 11, item 8), on a scripted stream and Trio's mock
clock: past its rate it drops and counts, keeps the tail, and reads at most a few times a
second, however fast the child writes."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from trio_mcp._transports._stderr import StderrDrain
from trio_mcp.transports import STDERR_DROP_PAUSE

LINE = b"noise %06d " + b"." * 86 + b"\n"
LINE_SIZE = len(LINE % 0)  # 100 bytes


class FloodStream(trio.abc.ReceiveStream):
    """A child that writes stderr as fast as it is read: every read finds a full chunk of
    numbered 100-byte lines. Ends after ``max_reads`` (so a drain without a bound cannot
    spin for ever under the mock clock, which never advances while it runs)."""

    def __init__(self, max_reads: int) -> None:
        self.max_reads = max_reads
        self.reads = 0
        self.next_line = 0

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        await trio.lowlevel.checkpoint()
        if self.reads >= self.max_reads:
            return b""
        self.reads += 1
        count = max(1, (max_bytes or 65536) // LINE_SIZE)
        chunk = b"".join(LINE % n for n in range(self.next_line, self.next_line + count))
        self.next_line += count
        return chunk

    async def aclose(self) -> None:
        await trio.lowlevel.checkpoint()


async def test_a_flood_is_read_a_few_times_a_second_and_handed_on_at_the_rate(
    autojump_clock: trio.testing.MockClock,
) -> None:
    handed: list[str] = []
    drain = StderrDrain(handed.append, tail_lines=3, rate=100)
    flood = FloodStream(max_reads=100_000)
    seconds = 10.0
    with trio.move_on_after(seconds):
        await drain.run(flood)
    stats = drain.statistics()
    # The burst (10 s worth: 1000 lines, two 64 KiB reads) then one read per pause.
    assert stats.reads == flood.reads
    assert stats.reads <= 3 + seconds / STDERR_DROP_PAUSE
    # Handed on: the burst, the rate, and about once a second a line saying what was dropped.
    reports = [line for line in handed if line.startswith("[trio_mcp: dropped ")]
    assert 1 <= len(reports) <= seconds
    assert stats.lines == len(handed) <= 1000 + 100 * seconds + len(reports)
    lines_read = flood.next_line
    assert stats.dropped_lines >= lines_read - stats.lines - 1
    assert stats.dropped_lines > 100 * stats.lines  # most of the flood went unread by anyone
    assert stats.dropped_bytes >= 100 * stats.dropped_lines
    assert handed[0] == (LINE % 0).decode().rstrip("\n")
    # The tail is the end of what was read, dropped or not.
    tail = drain.tail
    assert tail is not None
    assert tail.splitlines()[-1] == (LINE % (lines_read - 1)).decode().rstrip("\n")


async def test_what_was_dropped_is_reported_and_the_tail_kept_at_the_end(
    autojump_clock: trio.testing.MockClock,
) -> None:
    handed: list[str] = []
    drain = StderrDrain(handed.append, tail_lines=2, rate=1)  # a burst of 10 lines
    await drain.run(FloodStream(max_reads=1))
    assert handed[:10] == [(LINE % n).decode().rstrip("\n") for n in range(10)]
    assert handed[10:] == [
        "[trio_mcp: dropped 645 lines (64500 bytes) of this server's stderr:"
        " more than 1 lines a second]"
    ]
    assert drain.statistics().dropped_lines == 645
    assert drain.tail == "\n".join([(LINE % 654).decode().rstrip("\n"), handed[-1]])


async def test_within_the_rate_every_line_is_handed_on() -> None:
    handed: list[str] = []
    drain = StderrDrain(handed.append, tail_lines=2)
    await drain.run(FloodStream(max_reads=3))  # 1965 lines at once: within the burst
    assert len(handed) == 3 * 655
    assert drain.statistics().dropped_lines == 0


def test_the_rate_must_be_positive() -> None:
    with pytest.raises(ValueError, match="rate"):
        StderrDrain(print, tail_lines=1, rate=0)
