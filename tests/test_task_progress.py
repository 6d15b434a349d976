"""``on_progress`` for a call made with ``as_task=True`` (issue 22, defect 2): a task has no
request to send progress notifications for, so its progress is its status message, which
the client reads while it polls and hands to ``on_progress``."""

from __future__ import annotations

from typing import Any

import trio
from feature_harness import open_pair

from trio_mcp import Context, Server

MODERN = "2026-07-28"


def make_server() -> Server:
    server = Server("progress")

    @server.tool(task="optional")
    async def slow(seconds: float, ctx: Context) -> str:
        await ctx.report_progress(0, seconds, "started")
        await trio.sleep(seconds)
        return "done"

    @server.tool(task="optional")
    async def steps(ctx: Context) -> str:
        for n in range(1, 4):
            await ctx.report_progress(n, 3, f"step {n}")
            await trio.sleep(1)
        return "done"

    return server


async def test_a_task_reports_progress_as_a_plain_call_does(autojump_clock: Any) -> None:
    seen: dict[bool, list[tuple[float, float | None, str | None]]] = {}
    async with open_pair(make_server(), protocol_version=MODERN) as pair:
        for as_task in (False, True):
            updates: list[tuple[float, float | None, str | None]] = []
            result = await pair.client.call_tool(
                "slow",
                {"seconds": 0.5},
                as_task=as_task,
                on_progress=lambda p, updates=updates: updates.append(
                    (p.progress, p.total, p.message)
                ),
            )
            assert result.content[0].text == "done"  # type: ignore[union-attr]
            seen[as_task] = updates
    assert seen[False] == [(0, 0.5, "started")]
    assert seen[True] == seen[False]


async def test_each_step_is_seen_once_and_in_order(autojump_clock: Any) -> None:
    updates: list[tuple[float, float | None, str | None]] = []

    async def on_progress(p: Any) -> None:  # an async callback is awaited
        updates.append((p.progress, p.total, p.message))

    async with open_pair(make_server(), protocol_version=MODERN) as pair:
        await pair.client.call_tool("steps", as_task=True, on_progress=on_progress)
    assert updates == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
