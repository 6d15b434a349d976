"""Long tool calls as tasks (the io.modelcontextprotocol/tasks extension), in memory.

Run it: ``python examples/long_running.py``

The server marks its slow tools with ``task=``; the client asks for a task with
``as_task=True`` (or ``open_tool_task``), and the call is answered at once with a task
id while the tool runs in the server's task nursery. The client polls for the result,
answers the task's questions, cancels it by leaving its block, or detaches from it and
takes it up again later by its id.
"""

from __future__ import annotations

import trio

from trio_mcp import Context, Server
from trio_mcp.client import TaskCancelled
from trio_mcp.server import TaskSettings
from trio_mcp.testing import connect
from trio_mcp.types import ElicitResult

server = Server("reports", tasks=TaskSettings(poll_interval_ms=200))


@server.tool(task="optional")
async def build_report(pages: int, ctx: Context) -> str:
    """Build a report, a page every 0.2 s."""
    for page in range(1, pages + 1):
        await trio.sleep(0.2)
        await ctx.report_progress(page, pages, f"page {page}")
    return f"report of {pages} pages"


@server.tool(task="always")
async def delete_all(ctx: Context) -> str:
    """Delete everything, once the user confirms."""
    answer = await ctx.elicit("Really delete everything?", {"type": "object", "properties": {}})
    return "deleted" if answer.action == "accept" else "kept everything"


async def confirm(params: object) -> ElicitResult:
    print("the task asks: Really delete everything? -> accept")
    return ElicitResult(action="accept", content={})


async def main() -> None:
    async with connect(server, protocol_version="2026-07-28", elicitation=confirm) as client:
        # Wait for the result; cancelling this call would cancel the task.
        result = await client.call_tool("build_report", {"pages": 3}, as_task=True)
        print("as_task ->", result.content[0].text)  # type: ignore[union-attr]

        # A task that asks for input goes input_required; the client's handler answers.
        async with client.open_tool_task("delete_all") as task:
            print("task", "created" if task.task_id else "missing", "status", task.status)
            result = await task.result()
        print("delete_all ->", result.content[0].text)  # type: ignore[union-attr]

        # Detach, and take the task up again later by its id.
        async with client.open_tool_task("build_report", {"pages": 2}) as task:
            task_id = task.detach()
        async with client.open_task(task_id) as again:
            print("taken up again:", again.status)
            result = await again.result()
        print("detached ->", result.content[0].text)  # type: ignore[union-attr]

        # Leaving the block before the result cancels the task on the server.
        with trio.move_on_after(0.5):
            async with client.open_tool_task("build_report", {"pages": 60}) as task:
                cancelled = task
                await task.result()
        print("left the block after 0.5 s; status now:", await cancelled.poll())
        try:
            await cancelled.result()
        except TaskCancelled as exc:
            print("result ->", type(exc).__name__)


if __name__ == "__main__":
    trio.run(main)
