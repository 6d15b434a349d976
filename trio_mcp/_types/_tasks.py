"""Tasks as the 2025-11-25 revision defines them (an extension from 2026-07-28 on)."""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import attrs

from ._base import (
    Cursor,
    MetaObject,
    Model,
    Notification,
    PaginatedRequestParams,
    Request,
    RequestParams,
    Result,
)

TaskStatus: TypeAlias = Literal["working", "input_required", "completed", "failed", "cancelled"]


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Task(Model):
    task_id: str
    status: TaskStatus
    created_at: str
    last_updated_at: str
    #: Retention in ms from creation; ``None`` means unlimited (written as ``null``).
    ttl: int | None
    status_message: str | None = None
    poll_interval: int | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class RelatedTaskMetadata(Model):
    task_id: str


@attrs.frozen(kw_only=True, repr=False, eq=False)
class TaskAugmentedRequestParams(RequestParams):
    task: TaskMetadata | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CreateTaskResult(Result):
    task: Task


@attrs.frozen(kw_only=True, repr=False, eq=False)
class TaskResult(Task):
    """A task's state sent as a result (``tasks/get``, ``tasks/cancel``)."""

    meta: MetaObject | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class GetTaskResult(TaskResult):
    pass


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CancelTaskResult(TaskResult):
    pass


@attrs.frozen(kw_only=True, repr=False, eq=False)
class TaskIdParams(RequestParams):
    task_id: str


@attrs.frozen(kw_only=True, repr=False, eq=False)
class GetTaskRequest(Request[GetTaskResult]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskIdParams
    result_model = GetTaskResult


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CancelTaskRequest(Request[CancelTaskResult]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskIdParams
    result_model = CancelTaskResult


@attrs.frozen(kw_only=True, repr=False, eq=False)
class GetTaskPayloadResult(Result):
    """The result of the task's original request; its fields depend on that request.

    On the wire those fields sit at the top level of the result, beside ``_meta``;
    here they are kept, as plain JSON, in ``extra`` (``None`` when there are none).
    Read them with the original request's ``result_model``.
    """

    extra: dict[str, Any] | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class GetTaskPayloadRequest(Request[GetTaskPayloadResult]):
    method: Literal["tasks/result"] = "tasks/result"
    params: TaskIdParams
    result_model = GetTaskPayloadResult


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ListTasksResult(Result):
    tasks: list[Task]
    next_cursor: Cursor | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ListTasksRequest(Request[ListTasksResult]):
    method: Literal["tasks/list"] = "tasks/list"
    params: PaginatedRequestParams | None = None
    result_model = ListTasksResult


@attrs.frozen(kw_only=True, repr=False, eq=False)
class TaskStatusNotificationParams(Task):
    meta: MetaObject | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class TaskStatusNotification(Notification):
    method: Literal["notifications/tasks/status"] = "notifications/tasks/status"
    params: TaskStatusNotificationParams


from ._tools import TaskMetadata  # noqa: E402
