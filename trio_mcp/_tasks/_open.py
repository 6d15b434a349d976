"""One way to name a task store: a URL, as ``--store`` takes it on the command line."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import trio

from ._redis import open_redis_task_store
from ._sqlite import open_sqlite_task_store
from ._store import MemoryTaskStore, TaskStore

__all__ = ["open_task_store"]


@asynccontextmanager
async def open_task_store(
    url: str, *, clock: Callable[[], float] = time.time
) -> AsyncIterator[TaskStore]:
    """Open the task store named by ``url``:

    - ``memory:`` — :class:`~trio_mcp.tasks.MemoryTaskStore` (gone with the process);
    - ``sqlite:///path/to/tasks.db`` (absolute) or ``sqlite:relative.db`` —
      :func:`~trio_mcp.tasks.open_sqlite_task_store`;
    - ``redis://host:port/db`` — :func:`~trio_mcp.tasks.open_redis_task_store` (needs the
      ``tasks-redis`` extra); ``?lease=SECONDS`` sets the worker lease (default 10),
      ``?prefix=...`` the keys' prefix (default ``trio-mcp:``).

    Raises:
        ValueError: the scheme is none of these.
    """
    scheme = urlsplit(url).scheme
    if scheme == "memory":
        await trio.lowlevel.checkpoint()
        yield MemoryTaskStore(clock=clock)
    elif scheme == "sqlite":
        path = url.removeprefix("sqlite:").removeprefix("//")
        if not path:
            raise ValueError(f"no file in {url!r}: write sqlite:///absolute/path.db")
        async with open_sqlite_task_store(path, clock=clock) as store:
            yield store
    elif scheme in ("redis", "rediss"):
        parts = urlsplit(url)
        options = parse_qs(parts.query)
        lease = float(options.pop("lease", ["10"])[-1])
        prefix = options.pop("prefix", ["trio-mcp:"])[-1]
        rest = urlencode({k: v[-1] for k, v in options.items()})
        async with open_redis_task_store(
            urlunsplit(parts._replace(query=rest)), prefix=prefix, lease=lease, clock=clock
        ) as store:
            yield store
    else:
        raise ValueError(f"no task store for {url!r}: use memory:, sqlite:///FILE or redis://")
