"""Tools: listing and calling."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

import attrs

from ._base import (
    OMIT_IF_DEFAULT,
    CacheablePaginatedResult,
    Icon,
    InputResponses,
    MetaObject,
    Model,
    Notification,
    NotificationParams,
    PaginatedRequestParams,
    Request,
    RequestParams,
    Result,
)
from ._content import ContentBlock


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ToolAnnotations(Model):
    """Hints about a tool's behaviour. Untrusted unless the server is."""

    title: str | None = None
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    idempotent_hint: bool | None = None
    open_world_hint: bool | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ToolExecution(Model):
    """Execution properties of a tool (2025-11-25 tasks)."""

    task_support: Literal["forbidden", "optional", "required"] | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Tool(Model):
    """A tool the server offers. ``input_schema`` and ``output_schema`` are JSON Schemas, kept
    exactly as given."""

    name: str
    input_schema: dict[str, Any]
    title: str | None = None
    description: str | None = None
    output_schema: dict[str, Any] | None = None
    annotations: ToolAnnotations | None = None
    icons: list[Icon] | None = None
    execution: ToolExecution | None = None
    meta: MetaObject | None = None

    __since__: ClassVar[Mapping[str, str]] = {
        "title": "2025-06-18",
        "output_schema": "2025-06-18",
        "annotations": "2025-03-26",
        "icons": "2025-11-25",
        "execution": "2025-11-25",
    }
    __until__: ClassVar[Mapping[str, str]] = {"execution": "2025-11-25"}


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ListToolsResult(CacheablePaginatedResult):
    tools: list[Tool]


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ListToolsRequest(Request[ListToolsResult]):
    method: Literal["tools/list"] = "tools/list"
    params: PaginatedRequestParams | None = None
    result_model = ListToolsResult


@attrs.frozen(kw_only=True, repr=False, eq=False)
class TaskMetadata(Model):
    """Asks for a request to run as a task (2025-11-25)."""

    ttl: int | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CallToolRequestParams(RequestParams):
    name: str
    arguments: dict[str, Any] | None = None
    #: Task augmentation (2025-11-25 only).
    task: TaskMetadata | None = None
    #: MRTR retry (2026-07-28): answers to the previous round's ``inputRequests``.
    input_responses: InputResponses | None = None
    #: MRTR retry (2026-07-28): the opaque state, echoed unchanged.
    request_state: str | None = None

    __since__: ClassVar[Mapping[str, str]] = {
        "task": "2025-11-25",
        "input_responses": "2026-07-28",
        "request_state": "2026-07-28",
    }
    __until__: ClassVar[Mapping[str, str]] = {"task": "2025-11-25"}


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CallToolResult(Result):
    """A tool's answer. ``is_error`` marks a failure the model should see, not a protocol
    error; ``False`` where the server left ``isError`` out (the spec's default), and left
    out on the wire when ``False``."""

    content: list[ContentBlock]
    structured_content: Any = None
    is_error: bool = attrs.field(default=False, metadata={OMIT_IF_DEFAULT: True})

    __since__: ClassVar[Mapping[str, str]] = {"structured_content": "2025-06-18"}


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CallToolRequest(Request[CallToolResult]):
    method: Literal["tools/call"] = "tools/call"
    params: CallToolRequestParams
    result_model = CallToolResult


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ToolListChangedNotification(Notification):
    method: Literal["notifications/tools/list_changed"] = "notifications/tools/list_changed"
    params: NotificationParams | None = None
