"""Sampling: a server asks the client's LLM for a completion (deprecated in 2026-07-28)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

import attrs

from ._base import MetaObject, Request, RequestParams, Role
from ._content import SamplingMessageContentBlock
from ._tools import TaskMetadata, Tool


@attrs.frozen(kw_only=True)
class ModelHint:
    name: str | None = None


@attrs.frozen(kw_only=True)
class ModelPreferences:
    hints: list[ModelHint] | None = None
    cost_priority: float | None = None
    speed_priority: float | None = None
    intelligence_priority: float | None = None


@attrs.frozen(kw_only=True)
class ToolChoice:
    mode: Literal["auto", "required", "none"] | None = None


@attrs.frozen(kw_only=True)
class SamplingMessage:
    role: Role
    content: SamplingMessageContentBlock | list[SamplingMessageContentBlock]
    meta: MetaObject | None = None

    __since__: ClassVar[Mapping[str, str]] = {"meta": "2025-11-25"}


@attrs.frozen(kw_only=True)
class CreateMessageRequestParams(RequestParams):
    messages: list[SamplingMessage]
    max_tokens: int
    model_preferences: ModelPreferences | None = None
    system_prompt: str | None = None
    include_context: Literal["none", "thisServer", "allServers"] | None = None
    temperature: float | None = None
    stop_sequences: list[str] | None = None
    metadata: dict[str, Any] | None = None
    tools: list[Tool] | None = None
    tool_choice: ToolChoice | None = None
    task: TaskMetadata | None = None

    __since__: ClassVar[Mapping[str, str]] = {
        "tools": "2025-11-25",
        "tool_choice": "2025-11-25",
        "task": "2025-11-25",
    }
    __until__: ClassVar[Mapping[str, str]] = {"task": "2025-11-25"}


@attrs.frozen(kw_only=True)
class CreateMessageResult:
    """The client's sampled message."""

    role: Role
    content: SamplingMessageContentBlock | list[SamplingMessageContentBlock]
    model: str
    stop_reason: str | None = None
    meta: MetaObject | None = None


@attrs.frozen(kw_only=True)
class CreateMessageRequest(Request[CreateMessageResult]):
    method: Literal["sampling/createMessage"] = "sampling/createMessage"
    params: CreateMessageRequestParams
    result_model = CreateMessageResult
