"""The tasks extension (``io.modelcontextprotocol/tasks``) as the checker sees it: every task
a server creates, followed through the answers to ``tools/call``, ``tasks/get``,
``tasks/cancel`` and ``tasks/update``.

Plain code, like the checker that calls it: told of each answer (with the request it
answers and the sequence numbers of both), it returns the invariants that failed. What
it keeps is bounded: at most :data:`MAX_TASKS` tasks per connection, the oldest forgotten
first.

Order is judged only between observations that cannot have crossed: a ``tasks/get``
sent *after* the previous observation of the same task arrived. Two polls in flight at
once may be answered in either order, and their answers say nothing about the order
of the states they read.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Final

import attrs
import orjson

from .._protocol._envelope import CLIENT_CAPABILITIES
from ._validate import Validator

__all__ = ["MAX_TASKS", "TASK_STATUSES", "TASKS_EXTENSION", "TaskWatch", "declares_tasks"]

TASKS_EXTENSION: Final = "io.modelcontextprotocol/tasks"
#: The statuses a task may have; the last three are terminal.
TASK_STATUSES: Final = ("working", "input_required", "completed", "failed", "cancelled")
TERMINAL: Final = frozenset({"completed", "failed", "cancelled"})
#: The most tasks followed per connection.
MAX_TASKS: Final = 256
#: The fields of a task: a cancel or update acknowledgement carries none of them.
_TASK_FIELDS: Final = frozenset(
    {
        "taskId",
        "status",
        "statusMessage",
        "createdAt",
        "lastUpdatedAt",
        "ttlMs",
        "pollIntervalMs",
        "result",
        "error",
        "inputRequests",
    }
)
#: ``tasks/get`` answers with an error of this code for a task it does not know.
_UNKNOWN_TASK_CODE: Final = -32602

Failure = tuple[str, str]


def declares_tasks(params: Any) -> bool:
    """Whether a request's ``_meta`` client capabilities declare the tasks extension."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    capabilities = meta.get(CLIENT_CAPABILITIES) if isinstance(meta, dict) else None
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    return isinstance(extensions, dict) and TASKS_EXTENSION in extensions


@attrs.define(eq=False)
class _Task:
    """What we know of one task."""

    status: str
    #: The sequence number of the answer that told us ``status``.
    seen: int
    created: float
    ttl_ms: int | None
    #: The completed task's result, as sorted JSON, once seen.
    result: bytes | None = None


def _short(value: Any, limit: int = 200) -> str:
    try:
        text = orjson.dumps(value).decode()
    except TypeError:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class TaskWatch:
    """Follows the tasks of one connection. See the module docstring.

    Args:
        validator: checks results against the extension's schema, when it is at hand.
    """

    def __init__(self, validator: Validator) -> None:
        self.validator = validator
        self._tasks: OrderedDict[str, _Task] = OrderedDict()

    def known(self, task_id: Any) -> bool:
        return isinstance(task_id, str) and task_id in self._tasks

    def on_result(
        self,
        method: str,
        params: dict[str, Any] | None,
        result: dict[str, Any],
        *,
        sent: int,
        seq: int,
        now: float,
    ) -> list[Failure]:
        """Judge a result of a modern ``method`` (sent at ``sent``, answered at ``seq``)."""
        if method == "tools/call":
            if result.get("resultType") != "task":
                return []
            return self._created(params, result, seq, now)
        if method == "tasks/get":
            return self._polled(params, result, sent, seq)
        if method in ("tasks/cancel", "tasks/update"):
            return self._acknowledged(method, params, result)
        return []

    def on_error(
        self,
        method: str,
        params: dict[str, Any] | None,
        code: int,
        message: str,
        *,
        now: float,
    ) -> list[Failure]:
        """Judge an error answer of a modern ``method`` from a client that declared tasks."""
        if method not in ("tasks/get", "tasks/cancel") or not declares_tasks(params):
            return []
        task_id = (params or {}).get("taskId")
        task = self._tasks.get(task_id) if isinstance(task_id, str) else None
        if task is None or not self._alive(task, now):
            return []
        if method == "tasks/get":
            if code != _UNKNOWN_TASK_CODE:
                return []
            return [
                (
                    "task-durable-create",
                    f"tasks/get for task {task_id!r}, which the server created "
                    f"{now - task.created:.2f} s before (ttlMs {task.ttl_ms}), was answered "
                    f"with error {code} ({message!r}), as for an unknown task",
                )
            ]
        return [
            (
                "task-cancel-ack",
                f"tasks/cancel for task {task_id!r} (last seen {task.status}) was answered "
                f"with error {code} ({message!r}); expected an empty acknowledgement",
            )
        ]

    # -- each kind of answer ----------------------------------------------------------------------

    def _alive(self, task: _Task, now: float) -> bool:
        """Whether the task is still within its ttlMs (after it, the server may forget it)."""
        return task.ttl_ms is None or (now - task.created) * 1000 < task.ttl_ms

    def _common(self, what: str, name: str, result: dict[str, Any]) -> list[Failure]:
        failures: list[Failure] = []
        problems = self.validator.extension_problems(name, result)
        if problems:
            failures.append(
                (
                    "message-matches-schema",
                    f"{what} does not match the tasks extension's {name}: {'; '.join(problems)}",
                )
            )
        if "requestState" in result:
            failures.append(
                ("task-no-request-state", f"{what} carries requestState: {_short(result)}")
            )
        return failures

    def _created(
        self, params: dict[str, Any] | None, result: dict[str, Any], seq: int, now: float
    ) -> list[Failure]:
        failures = self._common("the CreateTaskResult of tools/call", "CreateTaskResult", result)
        if not declares_tasks(params):
            failures.append(
                (
                    "only-negotiated-capabilities",
                    "tools/call from a client that did not declare the tasks extension was "
                    f"answered with a CreateTaskResult: {_short(result)}",
                )
            )
        task_id, status = result.get("taskId"), result.get("status")
        failures.extend(self._status_known(status, "the CreateTaskResult"))
        if not isinstance(task_id, str) or not isinstance(status, str):
            return failures
        ttl = result.get("ttlMs")
        self._tasks[task_id] = _Task(
            status=status,
            seen=seq,
            created=now,
            ttl_ms=ttl if isinstance(ttl, int) and not isinstance(ttl, bool) else None,
        )
        while len(self._tasks) > MAX_TASKS:
            self._tasks.popitem(last=False)
        return failures

    def _status_known(self, status: Any, where: str) -> list[Failure]:
        if status in TASK_STATUSES:
            return []
        return [
            (
                "task-status-forward",
                f"{where} has status {_short(status)}, which is none of {', '.join(TASK_STATUSES)}",
            )
        ]

    def _polled(
        self, params: dict[str, Any] | None, result: dict[str, Any], sent: int, seq: int
    ) -> list[Failure]:
        task_id = (params or {}).get("taskId")
        what = f"tasks/get for task {_short(task_id)}"
        failures = self._common(f"the result of {what}", "GetTaskResult", result)
        if result.get("resultType", "complete") != "complete":
            failures.append(
                (
                    "message-matches-schema",
                    f"{what} answered resultType {_short(result.get('resultType'))}; "
                    'tasks/get answers "complete"',
                )
            )
        status = result.get("status")
        failures.extend(self._status_known(status, f"the answer to {what}"))
        if not isinstance(status, str) or status not in TASK_STATUSES:
            return failures
        if "result" in result and status != "completed":
            failures.append(
                ("task-result-once", f"{what}: status {status!r} with a result: {_short(result)}")
            )
        if "error" in result and status != "failed":
            failures.append(
                ("task-result-once", f"{what}: status {status!r} with an error: {_short(result)}")
            )
        if status == "completed" and not isinstance(result.get("result"), dict):
            failures.append(
                ("task-result-once", f"{what}: status 'completed' without a result object")
            )
        if status == "failed" and not isinstance(result.get("error"), dict):
            failures.append(
                ("task-result-once", f"{what}: status 'failed' without an error object")
            )
        task = self._tasks.get(task_id) if isinstance(task_id, str) else None
        if task is None:
            return failures
        if sent > task.seen:
            # Sent after the last observation arrived: this state is the later one.
            if task.status in TERMINAL and status != task.status:
                failures.append(
                    (
                        "task-status-forward",
                        f"{what}: the task was {task.status!r}, a terminal status, and is now "
                        f"{status!r}",
                    )
                )
            else:
                task.status, task.seen = status, seq
        if status == "completed" and isinstance(result.get("result"), dict):
            snapshot = orjson.dumps(result["result"], option=orjson.OPT_SORT_KEYS)
            if task.result is None:
                task.result = snapshot
            elif snapshot != task.result:
                failures.append(
                    (
                        "task-result-once",
                        f"{what}: the completed task's result changed between two polls, from "
                        f"{_short(orjson.loads(task.result))} to {_short(result['result'])}",
                    )
                )
        return failures

    def _acknowledged(
        self, method: str, params: dict[str, Any] | None, result: dict[str, Any]
    ) -> list[Failure]:
        task_id = (params or {}).get("taskId")
        what = f"{method} for task {_short(task_id)}"
        name = "CancelTaskResult" if method == "tasks/cancel" else "UpdateTaskResult"
        failures = self._common(f"the result of {what}", name, result)
        fields = sorted(_TASK_FIELDS & result.keys())
        if method == "tasks/cancel" and (fields or result.get("resultType") != "complete"):
            task = self._tasks.get(task_id) if isinstance(task_id, str) else None
            status = task.status if task is not None else None
            failures.append(
                (
                    "task-cancel-ack",
                    f"{what}"
                    + (f" (last seen {status})" if status else "")
                    + f" answered {_short(result)}; expected an empty acknowledgement "
                    '({"resultType": "complete"})',
                )
            )
        return failures
