"""Our own server with task tools (the ``io.modelcontextprotocol/tasks`` extension), over
stdio, for the fuzzer's no-false-positives test: every status a task can reach is
reachable here (``compute`` completes, ``fail`` fails with a JSON-RPC error, ``ask`` goes
``input_required`` until ``tasks/update`` answers it, and any of them can be cancelled).
"""

from __future__ import annotations

import trio

import trio_mcp
from trio_mcp import Context, Server
from trio_mcp.server import TaskSettings

server = Server("own-tasks", tasks=TaskSettings(poll_interval_ms=50))


@server.tool(task="optional")
async def compute(n: int) -> int:
    """Doubles ``n`` after a short while (at most a fifth of a second)."""
    await trio.sleep(min(abs(n), 20) / 100)
    return 2 * n


@server.tool(task="optional")
async def fail() -> str:
    """Fails with a JSON-RPC error."""
    await trio.sleep(0.05)
    raise trio_mcp.McpError("the job broke", code=trio_mcp.ErrorCode.INTERNAL_ERROR)


@server.tool(task="always")
async def ask(ctx: Context) -> str:
    """Asks for a name (through the task), then greets."""
    answer = await ctx.elicit(
        "Your name?", {"type": "object", "properties": {"name": {"type": "string"}}}
    )
    return f"Hello, {(answer.content or {}).get('name', 'stranger')}!"


if __name__ == "__main__":
    trio_mcp.run(server)
