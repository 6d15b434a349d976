"""Chapter 7: testing concurrent code. Virtual time (``autojump_clock``, or a ``MockClock``
you move by hand), ``wait_all_tasks_blocked`` to know every task is waiting, and a
Hypothesis property over many concurrent calls.

Run it: ``python examples/course/07_testing.py`` (it runs pytest on itself; the project's
``trio_mode = true`` makes every ``async def`` test a Trio test). See docs/course/07-testing.md.
"""

from __future__ import annotations

import subprocess
import sys

import trio
import trio.testing
from hypothesis import given, settings, strategies as st

from trio_mcp import Server
from trio_mcp.testing import connect

server = Server("timer")


@server.tool()
async def wait(seconds: int) -> str:
    """Wait, then say so."""
    await trio.sleep(seconds)
    return f"waited {seconds} s"


async def test_an_hour_takes_no_time(autojump_clock: trio.testing.MockClock) -> None:
    async with connect(server) as client:
        start = trio.current_time()
        await client.call_tool("wait", {"seconds": 3600})
        assert trio.current_time() - start == 3600


async def test_a_deadline_on_a_clock_moved_by_hand(mock_clock: trio.testing.MockClock) -> None:
    async with connect(server) as client, trio.open_nursery() as nursery:
        scope = trio.CancelScope(deadline=trio.current_time() + 10)

        async def call() -> None:
            with scope:
                await client.call_tool("wait", {"seconds": 60})

        nursery.start_soon(call)
        await trio.testing.wait_all_tasks_blocked()  # the call is sent; everyone waits
        mock_clock.jump(9.9)
        await trio.testing.wait_all_tasks_blocked()
        assert not scope.cancelled_caught  # 0.1 s to go
        mock_clock.jump(0.1)
        await trio.testing.wait_all_tasks_blocked()
        assert scope.cancelled_caught


async def calls_at_once(durations: list[int]) -> float:
    async with connect(server) as client, trio.open_nursery() as nursery:
        start = trio.current_time()
        for seconds in durations:
            nursery.start_soon(client.call_tool, "wait", {"seconds": seconds})
    return trio.current_time() - start


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=1000), min_size=1, max_size=10))
def test_calls_at_once_take_as_long_as_the_longest(durations: list[int]) -> None:
    clock = trio.testing.MockClock(autojump_threshold=0)
    assert trio.run(calls_at_once, durations, clock=clock) == max(durations)


if __name__ == "__main__":
    sys.exit(
        subprocess.call([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__])
    )
