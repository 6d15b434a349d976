"""The fleet part of every serving entry point: :func:`running_fleet`, which costs nothing
(and imports nothing of Redis) without a shared state."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING
from urllib.parse import quote

import trio

from .._extras import require_extra
from . import _lazy
from ._state import RedisState, parse_state

if TYPE_CHECKING:
    from .._server._server import Server
    from ._fleet import Fleet

__all__ = ["running_fleet", "task_store_url"]


@asynccontextmanager
async def running_fleet(
    server: Server, state: str | RedisState | None
) -> AsyncIterator[Fleet | None]:
    """Be a worker of the fleet sharing ``state`` for the block (see
    :func:`~trio_mcp._fleet._fleet.open_fleet`), or nothing (``None``) without one.

    Raises:
        MissingExtra: a state is given but coredis (the ``tasks-redis`` extra) is not
            installed.
    """
    parsed = parse_state(state)
    if parsed is None:
        await trio.lowlevel.checkpoint()
        yield None
        return
    require_extra("tasks-redis", "a fleet's shared state (state=)")
    async with _lazy.open_fleet(server, parsed) as fleet:
        yield fleet


def task_store_url(state: RedisState) -> str:
    """The task store of a fleet whose server keeps tasks in memory by default: the same
    Redis, under the same prefix."""
    separator = "&" if "?" in state.url else "?"
    return f"{state.url}{separator}prefix={quote(state.prefix, safe='')}"
