"""Tasks (the io.modelcontextprotocol/tasks extension) per second on each store: how many
``tools/call`` requests become tasks, and how many ``tasks/get`` polls are answered, end to
end over in-memory streams (trio_mcp's client and server, the store doing its real work). Polls go to a task that stays ``working``.

    python benchmarks/tasks_bench.py [--n N] [--rounds R] [--redis redis://127.0.0.1:6379/0]

Stores: ``memory:``; SQLite with ``synchronous=FULL`` (the default: every create is
synced to disk) and ``NORMAL`` (survives a killed process, not a power cut); Redis when
``--redis`` names a server (start one with ``redis-server --port 6379 --save ''``). The
tool is an ``async def`` that returns at once, so what is measured is the protocol and
the store, not the work. Medians of the rounds; the first round warms up and is dropped.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import trio

from trio_mcp import Server
from trio_mcp.server import TaskSettings
from trio_mcp.tasks import TaskStore, open_redis_task_store, open_sqlite_task_store, open_task_store
from trio_mcp.testing import connect


def make_server(store: TaskStore) -> Server:
    server = Server("bench", tasks=TaskSettings(store=store, max_running=1024))

    @server.tool(task="optional")
    async def quick() -> str:
        return "done"

    @server.tool(task="optional")
    async def wait() -> str:
        await trio.sleep_forever()

    return server


async def one_round(store: TaskStore, n: int) -> tuple[float, float]:
    async with connect(make_server(store), protocol_version="2026-07-28") as client:
        ids: list[str] = []
        started = time.perf_counter()
        for _ in range(n):
            async with client.open_tool_task("quick") as task:
                ids.append(task.detach())
        created = n / (time.perf_counter() - started)
        async with client.open_tool_task("wait") as task:  # stays working: every poll asks
            started = time.perf_counter()
            for _ in range(n):
                await task.poll()
            polled = n / (time.perf_counter() - started)
    return created, polled


def stores(redis: str | None, folder: Path) -> dict[str, Callable[[], object]]:
    counter = iter(range(1_000_000))

    @asynccontextmanager
    async def sqlite(synchronous: str) -> AsyncIterator[TaskStore]:
        path = folder / f"tasks-{next(counter)}.db"
        async with open_sqlite_task_store(path, synchronous=synchronous) as store:  # type: ignore[arg-type]
            yield store

    @asynccontextmanager
    async def redis_store() -> AsyncIterator[TaskStore]:
        assert redis is not None
        async with open_redis_task_store(redis, prefix=f"bench:{time.monotonic_ns()}:") as store:
            yield store

    found: dict[str, Callable[[], object]] = {
        "memory": lambda: open_task_store("memory:"),
        "sqlite FULL": lambda: sqlite("FULL"),
        "sqlite NORMAL": lambda: sqlite("NORMAL"),
    }
    if redis is not None:
        found["redis"] = redis_store
    return found


async def main(n: int, rounds: int, redis: str | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        print(f"{'store':<14} {'created/s':>10} {'tasks/get/s':>12}")
        for name, make in stores(redis, Path(tmp)).items():
            created: list[float] = []
            polled: list[float] = []
            for index in range(rounds + 1):
                async with make() as store:  # type: ignore[attr-defined]
                    c, p = await one_round(store, n)
                if index:
                    created.append(c)
                    polled.append(p)
            print(
                f"{name:<14} {statistics.median(created):>10,.0f} {statistics.median(polled):>12,.0f}"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--redis", default=None)
    args = parser.parse_args()
    trio.run(main, args.n, args.rounds, args.redis)
