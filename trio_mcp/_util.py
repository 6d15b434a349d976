"""Small Trio helpers used across the library."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import trio


@asynccontextmanager
async def open_nursery_unwrapped() -> AsyncIterator[trio.Nursery]:
    """A nursery for a library's context manager whose own tasks never raise.

    What escapes is the one exception the ``async with`` body (or a task)
    raised, not an :class:`ExceptionGroup` around it, so callers write
    ``except McpError`` as they would for a plain call. A group of several
    exceptions is raised as is.
    """
    try:
        async with trio.open_nursery() as nursery:
            yield nursery
    except BaseExceptionGroup as group:
        leaves = _leaves(group)
        if len(leaves) == 1:
            raise leaves[0] from None
        raise


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    found: list[BaseException] = []
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            found.extend(_leaves(exc))
        else:
            found.append(exc)
    return found
