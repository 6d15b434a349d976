"""Prompts: templates of messages a user can pick."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, Literal

import attrs

from ._base import (
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
    Role,
)
from ._content import ContentBlock


@attrs.frozen(kw_only=True, repr=False, eq=False)
class PromptArgument(Model):
    name: str
    title: str | None = None
    description: str | None = None
    required: bool | None = None

    __since__: ClassVar[Mapping[str, str]] = {"title": "2025-06-18"}


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Prompt(Model):
    name: str
    title: str | None = None
    description: str | None = None
    arguments: list[PromptArgument] | None = None
    icons: list[Icon] | None = None
    meta: MetaObject | None = None

    __since__: ClassVar[Mapping[str, str]] = {"title": "2025-06-18", "icons": "2025-11-25"}


@attrs.frozen(kw_only=True, repr=False, eq=False)
class PromptMessage(Model):
    role: Role
    content: ContentBlock


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ListPromptsResult(CacheablePaginatedResult):
    prompts: list[Prompt]


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ListPromptsRequest(Request[ListPromptsResult]):
    method: Literal["prompts/list"] = "prompts/list"
    params: PaginatedRequestParams | None = None
    result_model = ListPromptsResult


@attrs.frozen(kw_only=True, repr=False, eq=False)
class GetPromptRequestParams(RequestParams):
    name: str
    arguments: dict[str, str] | None = None
    input_responses: InputResponses | None = None
    request_state: str | None = None

    __since__: ClassVar[Mapping[str, str]] = {
        "input_responses": "2026-07-28",
        "request_state": "2026-07-28",
    }


@attrs.frozen(kw_only=True, repr=False, eq=False)
class GetPromptResult(Result):
    messages: list[PromptMessage]
    description: str | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class GetPromptRequest(Request[GetPromptResult]):
    method: Literal["prompts/get"] = "prompts/get"
    params: GetPromptRequestParams
    result_model = GetPromptResult


@attrs.frozen(kw_only=True, repr=False, eq=False)
class PromptListChangedNotification(Notification):
    method: Literal["notifications/prompts/list_changed"] = "notifications/prompts/list_changed"
    params: NotificationParams | None = None
