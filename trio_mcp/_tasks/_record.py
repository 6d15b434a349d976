"""What a task store keeps of one task, and the rules its status follows.

A task moves ``working`` <-> ``input_required`` and then, once, to a terminal status
(``completed``, ``failed`` or ``cancelled``); a terminal record never changes again. The
record holds the task's wire payload (its result, error or input requests) as plain JSON
values, so that every store keeps the same bytes whatever the models look like.
"""

from __future__ import annotations

import datetime
from typing import Any, Final, Literal, TypeAlias

import attrs
import orjson

__all__ = ["TERMINAL", "TaskPosition", "TaskRecord", "TaskStatus", "TaskUpdate"]

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
#: The statuses a task never leaves.
TERMINAL: Final = frozenset({"completed", "failed", "cancelled"})
_STATUSES: Final = frozenset({"working", "input_required", *TERMINAL})
#: A task's place in its owner's list (``tasks/list``): creation time, then id.
TaskPosition: TypeAlias = tuple[float, str]


def _iso(timestamp: float) -> str:
    moment = datetime.datetime.fromtimestamp(timestamp, tz=datetime.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@attrs.frozen(kw_only=True)
class TaskRecord:
    """One task as a store keeps it.

    Times are seconds since the epoch (wall clock: they are shown to peers as ISO 8601).
    ``owner`` is the principal that created the task (``None`` when the transport named
    none); only the same principal may see or steer it. ``runner`` names the process
    incarnation running the task; a store reports a non-terminal task whose runner is gone
    as ``failed`` (see :meth:`TaskStore.get <trio_mcp.tasks.TaskStore.get>`).
    """

    task_id: str
    owner: str | None
    status: TaskStatus
    created_at: float
    updated_at: float
    ttl_ms: int | None
    poll_interval_ms: int | None = None
    status_message: str | None = None
    #: The original request's result (``completed``), as its JSON object.
    result: dict[str, Any] | None = None
    #: The JSON-RPC error object (``failed``).
    error: dict[str, Any] | None = None
    #: Outstanding server-to-client requests by key (``input_required``).
    input_requests: dict[str, Any] | None = None
    runner: str | None = None
    #: Answers to ``input_requests`` that a ``tasks/update`` delivered through another
    #: worker than the runner's, waiting for the runner to take them (``input_required``).
    input_responses: dict[str, Any] | None = None

    @property
    def terminal(self) -> bool:
        """Whether the status is final."""
        return self.status in TERMINAL

    def expired(self, now: float) -> bool:
        """Whether the TTL, counted from creation, has run out at ``now``."""
        return self.ttl_ms is not None and now >= self.created_at + self.ttl_ms / 1000

    def wire(self) -> dict[str, Any]:
        """The task as the extension's ``DetailedTask`` JSON object (``tasks/get`` and status
        notifications): the payload its status carries is inlined."""
        task: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": _iso(self.created_at),
            "lastUpdatedAt": _iso(self.updated_at),
            "ttlMs": self.ttl_ms,
        }
        if self.poll_interval_ms is not None:
            task["pollIntervalMs"] = self.poll_interval_ms
        if self.status_message is not None:
            task["statusMessage"] = self.status_message
        if self.status == "completed":
            task["result"] = self.result if self.result is not None else {}
        elif self.status == "failed":
            task["error"] = self.error or {"code": -32603, "message": "The task failed"}
        elif self.status == "input_required":
            task["inputRequests"] = self.input_requests or {}
        return task

    @property
    def position(self) -> TaskPosition:
        """Where the task stands in its owner's list: by creation, then id."""
        return (self.created_at, self.task_id)

    def core_wire(self) -> dict[str, Any]:
        """The task as the 2025-11-25 revision's ``Task`` (``tasks/get``, ``tasks/cancel``,
        a ``CreateTaskResult``'s ``task``): its payload is not inlined (``tasks/result``
        gives it)."""
        task: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": _iso(self.created_at),
            "lastUpdatedAt": _iso(self.updated_at),
            "ttl": self.ttl_ms,
        }
        if self.poll_interval_ms is not None:
            task["pollInterval"] = self.poll_interval_ms
        if self.status_message is not None:
            task["statusMessage"] = self.status_message
        return task

    def dumps(self) -> bytes:
        """The record as JSON bytes, for stores that keep bytes."""
        return orjson.dumps(attrs.asdict(self))

    @classmethod
    def loads(cls, data: bytes | str) -> TaskRecord:
        """The inverse of :meth:`dumps`."""
        fields = orjson.loads(data)
        if fields.get("status") not in _STATUSES:
            raise ValueError(f"not a task status: {fields.get('status')!r}")
        return cls(**fields)


@attrs.frozen(kw_only=True)
class TaskUpdate:
    """A change to a task's status and payload, applied by :meth:`TaskStore.update
    <trio_mcp.tasks.TaskStore.update>` only while the task is not terminal.

    Moving to ``completed`` sets ``result``, to ``failed`` sets ``error``, to
    ``input_required`` sets ``input_requests`` (or keeps them, given none) and adds
    ``input_responses`` to those waiting; the other payloads are cleared. A change to a
    terminal status without a ``status_message`` keeps the last one (how far the task got).
    """

    status: TaskStatus
    status_message: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None
    #: Answers to add to the record's ``input_responses`` (kept while ``input_required``).
    input_responses: dict[str, Any] | None = None

    def __attrs_post_init__(self) -> None:
        if self.status not in _STATUSES:
            raise ValueError(f"not a task status: {self.status!r}")

    def apply(self, record: TaskRecord, now: float) -> TaskRecord:
        """``record`` after this change at ``now``, or ``record`` itself when it is terminal."""
        if record.terminal:
            return record
        return attrs.evolve(
            record,
            status=self.status,
            updated_at=max(now, record.updated_at),
            # A task that ends keeps its last message unless the change says another.
            status_message=self.status_message
            if self.status_message is not None or self.status not in TERMINAL
            else record.status_message,
            result=self.result if self.status == "completed" else None,
            error=self.error if self.status == "failed" else None,
            input_requests=(self.input_requests or record.input_requests)
            if self.status == "input_required"
            else None,
            # Answers wait while the task waits for input, merged; any other status ends it.
            input_responses={**(record.input_responses or {}), **(self.input_responses or {})}
            or None
            if self.status == "input_required"
            else None,
            runner=None if self.status in TERMINAL else record.runner,
        )
