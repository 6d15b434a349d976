"""Tasks as the 2025-11-25 revision defines them (an extension from 2026-07-28 on)."""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import attrs

from ._base import (
    Cursor,
    MetaObject,
    Notification,
    PaginatedRequestParams,
    Request,
    RequestParams,
    Result,
)

TaskStatus: TypeAlias = Literal["working", "input_required", "completed", "failed", "cancelled"]


@attrs.frozen(kw_only=True)
class Task:
    task_id: str
    status: TaskStatus
    created_at: str
    last_updated_at: str
    #: Retention in ms from creation; ``None`` means unlimited (written as ``null``).
    ttl: int | None
    status_message: str | None = None
    poll_interval: int | None = None


@attrs.frozen(kw_only=True)
class RelatedTaskMetadata:
    task_id: str


@attrs.frozen(kw_only=True)
class TaskAugmentedRequestParams(RequestParams):
    task: TaskMetadata | None = None


@attrs.frozen(kw_only=True)
class CreateTaskResult(Result):
    task: Task


@attrs.frozen(kw_only=True)
class TaskResult(Task):
    """A task's state sent as a result (``tasks/get``, ``tasks/cancel``)."""

    meta: MetaObject | None = None


@attrs.frozen(kw_only=True)
class GetTaskResult(TaskResult):
    pass


@attrs.frozen(kw_only=True)
class CancelTaskResult(TaskResult):
    pass


@attrs.frozen(kw_only=True)
class TaskIdParams(RequestParams):
    task_id: str


@attrs.frozen(kw_only=True)
class GetTaskRequest(Request[GetTaskResult]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskIdParams
    result_model = GetTaskResult


@attrs.frozen(kw_only=True)
class CancelTaskRequest(Request[CancelTaskResult]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskIdParams
    result_model = CancelTaskResult


@attrs.frozen(kw_only=True)
class GetTaskPayloadResult(Result):
    """The result of the task's original request; its fields depend on that request.

    On the wire those fields sit at the top level of the result, beside ``_meta``;
    here they are kept, as plain JSON, in ``extra`` (``None`` when there are none).
    Read them with the original request's ``result_model``.
    """

    extra: dict[str, Any] | None = None


@attrs.frozen(kw_only=True)
class GetTaskPayloadRequest(Request[GetTaskPayloadResult]):
    method: Literal["tasks/result"] = "tasks/result"
    params: TaskIdParams
    result_model = GetTaskPayloadResult


@attrs.frozen(kw_only=True)
class ListTasksResult(Result):
    tasks: list[Task]
    next_cursor: Cursor | None = None


@attrs.frozen(kw_only=True)
class ListTasksRequest(Request[ListTasksResult]):
    method: Literal["tasks/list"] = "tasks/list"
    params: PaginatedRequestParams | None = None
    result_model = ListTasksResult


@attrs.frozen(kw_only=True)
class TaskStatusNotificationParams(Task):
    meta: MetaObject | None = None


@attrs.frozen(kw_only=True)
class TaskStatusNotification(Notification):
    method: Literal["notifications/tasks/status"] = "notifications/tasks/status"
    params: TaskStatusNotificationParams


from ._tools import TaskMetadata  # noqa: E402
