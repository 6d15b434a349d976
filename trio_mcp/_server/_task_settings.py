"""How a server runs tasks (the ``io.modelcontextprotocol/tasks`` extension): its
settings, read when a server is built. The runner itself (:mod:`._tasks`) loads when a
server first serves with tasks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import attrs

if TYPE_CHECKING:
    from .._tasks._store import TaskStore

__all__ = ["TASKS_EXTENSION", "TaskSettings"]

#: The extension's identifier, under ``capabilities.extensions``.
TASKS_EXTENSION: Final = "io.modelcontextprotocol/tasks"


@attrs.frozen(kw_only=True)
class TaskSettings:
    """How a server runs tasks.

    Args:
        store: where tasks are recorded: a URL for :func:`~trio_mcp.tasks.open_task_store`
            (``memory:``, the default; ``sqlite:///path.db``; ``redis://host:port/db``),
            opened by each serving entry point, or a :class:`~trio_mcp.tasks.TaskStore` you
            opened yourself.
        max_running: tasks that run at once (default 64); the rest wait, ``working``.
        max_waiting: tasks that may wait for a turn besides (default 1,024); past that, a
            call that would become a task is refused (:class:`~trio_mcp.RetryLater`,
            -32603 "Server busy"; over HTTP 503 with ``Retry-After``) and nothing is
            recorded.
        max_running_per_principal: the tasks of one principal that run at once (default
            16); its others wait, even while other principals' slots are free.
        max_waiting_per_principal: the tasks of one principal that may wait besides
            (default 256); past that, its calls are refused (:class:`~trio_mcp.RetryLater`,
            ``"quota"``; over HTTP 429 with ``Retry-After``), while other principals still
            get theirs. Requests without a principal (stdio, HTTP without ``auth=`` or a
            ``principal`` function) share only the server's bounds.
        ttl_ms: how long a task is kept after its creation, in milliseconds (default one
            hour; ``None`` keeps it as long as the store does).
        poll_interval_ms: the polling interval suggested to clients (default 500 ms).
    """

    store: str | TaskStore = "memory:"
    max_running: int = 64
    max_waiting: int = 1024
    max_running_per_principal: int = 16
    max_waiting_per_principal: int = 256
    ttl_ms: int | None = 3_600_000
    poll_interval_ms: int = 500

    def __attrs_post_init__(self) -> None:
        if self.max_running < 1:
            raise ValueError("max_running must be at least 1")
        if self.max_waiting < 0:
            raise ValueError("max_waiting must be 0 or more")
        if self.max_running_per_principal < 1:
            raise ValueError("max_running_per_principal must be at least 1")
        if self.max_waiting_per_principal < 0:
            raise ValueError("max_waiting_per_principal must be 0 or more")
        if self.ttl_ms is not None and self.ttl_ms < 1:
            raise ValueError("ttl_ms must be positive (or None)")
        if self.poll_interval_ms < 1:
            raise ValueError("poll_interval_ms must be positive")
