"""``subscriptions/listen`` (2026-07-28): one long-lived request whose answer is a stream
of change notifications."""

from __future__ import annotations

from typing import Literal

import attrs

from ._base import (
    MetaObject,
    Model,
    Notification,
    NotificationParams,
    Request,
    RequestParams,
    Result,
)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class SubscriptionFilter(Model):
    """Which notifications a client wants. Absent means "not this kind"."""

    tools_list_changed: bool | None = None
    prompts_list_changed: bool | None = None
    resources_list_changed: bool | None = None
    resource_subscriptions: list[str] | None = None
    #: The tasks extension's key: the tasks whose ``notifications/tasks`` are wanted.
    task_ids: list[str] | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class SubscriptionsListenRequestParams(RequestParams):
    notifications: SubscriptionFilter


@attrs.frozen(kw_only=True, repr=False, eq=False)
class SubscriptionsListenResult(Result):
    """Sent when the server ends the stream gracefully.

    ``_meta`` is required: it names the subscription that ended under
    ``io.modelcontextprotocol/subscriptionId`` (build it with
    :class:`SubscriptionsListenResultMetaObject`).
    """

    meta: MetaObject


@attrs.frozen(kw_only=True, repr=False, eq=False)
class SubscriptionsListenRequest(Request[SubscriptionsListenResult]):
    method: Literal["subscriptions/listen"] = "subscriptions/listen"
    params: SubscriptionsListenRequestParams
    result_model = SubscriptionsListenResult


@attrs.frozen(kw_only=True, repr=False, eq=False)
class SubscriptionsAcknowledgedNotificationParams(NotificationParams):
    notifications: SubscriptionFilter


@attrs.frozen(kw_only=True, repr=False, eq=False)
class SubscriptionsAcknowledgedNotification(Notification):
    """The first message of a subscription: what the server agreed to send."""

    method: Literal["notifications/subscriptions/acknowledged"] = (
        "notifications/subscriptions/acknowledged"
    )
    params: SubscriptionsAcknowledgedNotificationParams
