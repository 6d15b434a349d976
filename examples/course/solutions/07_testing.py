"""Chapter 7, exercise: two tests. A cancelled call runs its handler's cleanup (checked with
``wait_all_tasks_blocked``, on a clock that never moves); and, for any deadline and any
duration, a call is answered exactly when it is shorter than its deadline.

Run it: ``python examples/course/solutions/07_testing.py``
"""

from __future__ import annotations

import subprocess
import sys

import trio
import trio.testing
from hypothesis import assume, given, settings, strategies as st

from trio_mcp import Context, Server
from trio_mcp.testing import connect

server = Server("worker")
events: list[str] = []


@server.tool()
async def work(seconds: int, ctx: Context) -> str:
    """Work for a while."""
    events.append("started")
    try:
        await trio.sleep(seconds)
    finally:
        events.append(f"cleanup, cancelled: {ctx.cancelled}")
    return "done"


async def test_a_cancelled_call_runs_its_cleanup(mock_clock: trio.testing.MockClock) -> None:
    events.clear()
    async with connect(server) as client:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(client.call_tool, "work", {"seconds": 60})
            await trio.testing.wait_all_tasks_blocked()
            assert events == ["started"]
            nursery.cancel_scope.cancel()
        await trio.testing.wait_all_tasks_blocked()  # the server has seen the cancellation
        assert events == ["started", "cleanup, cancelled: True"]
        assert trio.current_time() == 0  # the clock never moved


async def answered_within(deadline: int, seconds: int) -> bool:
    async with connect(server) as client:
        with trio.move_on_after(deadline):
            await client.call_tool("work", {"seconds": seconds})
            return True
    return False


@settings(max_examples=30, deadline=None)
@given(st.integers(min_value=1, max_value=100), st.integers(min_value=0, max_value=100))
def test_answered_exactly_when_shorter_than_the_deadline(deadline: int, seconds: int) -> None:
    assume(deadline != seconds)  # a tie is decided by the scheduler
    clock = trio.testing.MockClock(autojump_threshold=0)
    assert trio.run(answered_within, deadline, seconds, clock=clock) == (seconds < deadline)


if __name__ == "__main__":
    sys.exit(
        subprocess.call([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__])
    )
