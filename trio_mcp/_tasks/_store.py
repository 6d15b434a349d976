"""Where tasks are kept: the :class:`TaskStore` interface and the in-memory store.

A task is recorded before anyone is told it exists (the extension requires that a
``tasks/get`` for a returned task id resolves), so :meth:`TaskStore.create` returns only
once the record is as durable as the store makes it. Status only moves forward:
:meth:`TaskStore.update` leaves a terminal record as it is, atomically, so a task that
completes while it is being cancelled ends up in exactly one terminal status.

Every store is made for one process incarnation, named by :attr:`TaskStore.runner`. A task
still ``working`` (or ``input_required``) whose runner is gone, because its process died,
is never reported as unknown nor as working forever: the store records it as ``failed``
with :data:`RUNNER_GONE` as the reason.
"""

from __future__ import annotations

import abc
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, ClassVar, Final

import trio

from ._record import TaskPosition, TaskRecord, TaskUpdate

__all__ = ["RUNNER_GONE", "MemoryTaskStore", "TaskStore", "TaskStoreFull"]

_RUNNER_GONE_MESSAGE: Final = "The server running this task stopped before the task finished"
#: The error recorded for a task whose process stopped before the task finished.
RUNNER_GONE: Final[dict[str, Any]] = {"code": -32603, "message": _RUNNER_GONE_MESSAGE}
#: The change that records such a task as failed.
ORPHANED: Final = TaskUpdate(
    status="failed", error=RUNNER_GONE, status_message=_RUNNER_GONE_MESSAGE
)


class TaskStoreFull(Exception):
    """The store holds as many live tasks as it may; no task was created."""


class TaskStore(abc.ABC):
    """Storage for task records, shared by every request of one server (and, for a shared
    store, by every worker of a fleet).

    Args:
        clock: wall-clock seconds since the epoch (for ``createdAt`` and TTLs).
    """

    #: Whether other processes may write the same records (a fleet's workers sharing a
    #: database): then a server watches its running tasks' records, so that a
    #: ``tasks/cancel`` answered by another worker stops the work here too.
    shared: ClassVar[bool] = True

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        #: This process incarnation's name, written into the records of tasks it runs.
        self.runner = uuid.uuid4().hex

    @abc.abstractmethod
    async def create(self, record: TaskRecord) -> None:
        """Record a new task; returns once a :meth:`get` of its id finds it.

        Raises:
            TaskStoreFull: the store's bound on live tasks is reached.
            ValueError: a task with that id exists.
        """

    @abc.abstractmethod
    async def get(self, task_id: str) -> TaskRecord | None:
        """The task, or ``None`` when it is unknown or its TTL has run out. A non-terminal
        task whose runner is gone comes back (and stays) ``failed``."""

    @abc.abstractmethod
    async def update(self, task_id: str, change: TaskUpdate) -> TaskRecord | None:
        """Apply ``change`` unless the task is terminal (then nothing changes), atomically.

        Returns the record as stored afterwards, or ``None`` when the task is unknown or
        expired.
        """

    @abc.abstractmethod
    async def delete_expired(self) -> int:
        """Delete the records whose TTL has run out; returns how many."""

    async def list_owned(
        self, owner: str | None, *, after: TaskPosition | None, limit: int
    ) -> list[TaskRecord]:
        """Up to ``limit`` live tasks of ``owner``, oldest first, those after ``after``
        only (a page's last :attr:`TaskRecord.position`), for ``tasks/list``. A store that
        does not override it cannot list: a server on it does not offer ``tasks/list``.

        Raises:
            NotImplementedError: this store cannot list tasks.
        """
        raise NotImplementedError(f"{type(self).__name__} cannot list tasks")

    @classmethod
    def can_list(cls) -> bool:
        """Whether this kind of store implements :meth:`list_owned`."""
        return cls.list_owned is not TaskStore.list_owned

    def new_record(
        self,
        *,
        owner: str | None,
        ttl_ms: int | None,
        poll_interval_ms: int | None = None,
        status_message: str | None = None,
    ) -> TaskRecord:
        """A fresh ``working`` record run by this incarnation, with an unguessable id."""
        now = self.clock()
        return TaskRecord(
            task_id=str(uuid.uuid4()),
            owner=owner,
            status="working",
            created_at=now,
            updated_at=now,
            ttl_ms=ttl_ms,
            poll_interval_ms=poll_interval_ms,
            status_message=status_message,
            runner=self.runner,
        )


class MemoryTaskStore(TaskStore):
    """Tasks kept in this process's memory: gone when it exits (the records of its own tasks
    need no recovery, since nothing outlives it). Not shared: only this process writes it.

    Args:
        max_tasks: records kept at most (default 10,000). When full, expired records go
            first, then the oldest terminal ones; when every record is a live task,
            :meth:`create` raises :exc:`TaskStoreFull`.
        clock: wall-clock seconds since the epoch.
    """

    shared: ClassVar[bool] = False

    def __init__(self, *, max_tasks: int = 10_000, clock: Callable[[], float] = time.time) -> None:
        super().__init__(clock=clock)
        if max_tasks < 1:
            raise ValueError("max_tasks must be at least 1")
        self.max_tasks = max_tasks
        self._tasks: OrderedDict[str, TaskRecord] = OrderedDict()

    def __len__(self) -> int:
        return len(self._tasks)

    async def create(self, record: TaskRecord) -> None:
        await trio.lowlevel.checkpoint()
        if record.task_id in self._tasks:
            raise ValueError(f"a task {record.task_id!r} exists")
        if len(self._tasks) >= self.max_tasks:
            self._make_room()
        self._tasks[record.task_id] = record

    def _make_room(self) -> None:
        now = self.clock()
        for task_id in [t for t, r in self._tasks.items() if r.expired(now)]:
            del self._tasks[task_id]
        if len(self._tasks) < self.max_tasks:
            return
        oldest_terminal = next((t for t, r in self._tasks.items() if r.terminal), None)
        if oldest_terminal is None:
            raise TaskStoreFull(f"{self.max_tasks} tasks are running or waiting for input")
        del self._tasks[oldest_terminal]

    async def get(self, task_id: str) -> TaskRecord | None:
        await trio.lowlevel.checkpoint()
        return self._live(task_id)

    def _live(self, task_id: str) -> TaskRecord | None:
        record = self._tasks.get(task_id)
        if record is not None and record.expired(self.clock()):
            del self._tasks[task_id]
            return None
        return record

    async def update(self, task_id: str, change: TaskUpdate) -> TaskRecord | None:
        await trio.lowlevel.checkpoint()
        record = self._live(task_id)
        if record is None:
            return None
        record = self._tasks[task_id] = change.apply(record, self.clock())
        return record

    async def delete_expired(self) -> int:
        await trio.lowlevel.checkpoint()
        now = self.clock()
        expired = [t for t, r in self._tasks.items() if r.expired(now)]
        for task_id in expired:
            del self._tasks[task_id]
        return len(expired)

    async def list_owned(
        self, owner: str | None, *, after: TaskPosition | None, limit: int
    ) -> list[TaskRecord]:
        await trio.lowlevel.checkpoint()
        now = self.clock()
        owned = sorted(
            (r for r in self._tasks.values() if r.owner == owner and not r.expired(now)),
            key=lambda r: r.position,
        )
        return [r for r in owned if after is None or r.position > after][:limit]
