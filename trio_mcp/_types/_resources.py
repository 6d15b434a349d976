"""Resources: listing, templates, reading and (legacy) subscriptions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, Literal

import attrs

from ._base import (
    CacheablePaginatedResult,
    CacheableResult,
    EmptyResult,
    Icon,
    InputResponses,
    MetaObject,
    Model,
    Notification,
    NotificationParams,
    PaginatedRequestParams,
    Request,
    RequestParams,
)
from ._content import Annotations, BlobResourceContents, TextResourceContents


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Resource(Model):
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    icons: list[Icon] | None = None
    annotations: Annotations | None = None
    meta: MetaObject | None = None

    __since__: ClassVar[Mapping[str, str]] = {"title": "2025-06-18", "icons": "2025-11-25"}


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ResourceTemplate(Model):
    """A family of resources named by an RFC 6570 URI template."""

    uri_template: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    icons: list[Icon] | None = None
    annotations: Annotations | None = None
    meta: MetaObject | None = None

    __since__: ClassVar[Mapping[str, str]] = {"title": "2025-06-18", "icons": "2025-11-25"}


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ListResourcesResult(CacheablePaginatedResult):
    resources: list[Resource]


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ListResourcesRequest(Request[ListResourcesResult]):
    method: Literal["resources/list"] = "resources/list"
    params: PaginatedRequestParams | None = None
    result_model = ListResourcesResult


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ListResourceTemplatesResult(CacheablePaginatedResult):
    resource_templates: list[ResourceTemplate]


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ListResourceTemplatesRequest(Request[ListResourceTemplatesResult]):
    method: Literal["resources/templates/list"] = "resources/templates/list"
    params: PaginatedRequestParams | None = None
    result_model = ListResourceTemplatesResult


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ResourceRequestParams(RequestParams):
    uri: str


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ReadResourceRequestParams(ResourceRequestParams):
    input_responses: InputResponses | None = None
    request_state: str | None = None

    __since__: ClassVar[Mapping[str, str]] = {
        "input_responses": "2026-07-28",
        "request_state": "2026-07-28",
    }


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ReadResourceResult(CacheableResult):
    contents: list[TextResourceContents | BlobResourceContents]


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ReadResourceRequest(Request[ReadResourceResult]):
    method: Literal["resources/read"] = "resources/read"
    params: ReadResourceRequestParams
    result_model = ReadResourceResult


@attrs.frozen(kw_only=True, repr=False, eq=False)
class SubscribeRequestParams(ResourceRequestParams):
    pass


@attrs.frozen(kw_only=True, repr=False, eq=False)
class SubscribeRequest(Request[EmptyResult]):
    """Legacy era: ask for ``notifications/resources/updated`` about one URI."""

    method: Literal["resources/subscribe"] = "resources/subscribe"
    params: SubscribeRequestParams
    result_model = EmptyResult


@attrs.frozen(kw_only=True, repr=False, eq=False)
class UnsubscribeRequestParams(ResourceRequestParams):
    pass


@attrs.frozen(kw_only=True, repr=False, eq=False)
class UnsubscribeRequest(Request[EmptyResult]):
    method: Literal["resources/unsubscribe"] = "resources/unsubscribe"
    params: UnsubscribeRequestParams
    result_model = EmptyResult


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ResourceUpdatedNotificationParams(NotificationParams):
    uri: str


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ResourceUpdatedNotification(Notification):
    method: Literal["notifications/resources/updated"] = "notifications/resources/updated"
    params: ResourceUpdatedNotificationParams


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ResourceListChangedNotification(Notification):
    method: Literal["notifications/resources/list_changed"] = "notifications/resources/list_changed"
    params: NotificationParams | None = None
