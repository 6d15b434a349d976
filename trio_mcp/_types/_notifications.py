"""Notifications that cut across features: cancellation, progress and log messages,
and the legacy ``logging/setLevel`` request."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

import attrs

from ._base import (
    EmptyResult,
    LoggingLevel,
    Notification,
    NotificationParams,
    ProgressToken,
    Request,
    RequestId,
    RequestParams,
)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CancelledNotificationParams(NotificationParams):
    request_id: RequestId | None = None
    reason: str | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CancelledNotification(Notification):
    method: Literal["notifications/cancelled"] = "notifications/cancelled"
    params: CancelledNotificationParams


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ProgressNotificationParams(NotificationParams):
    progress_token: ProgressToken
    progress: float
    total: float | None = None
    message: str | None = None

    __since__: ClassVar[Mapping[str, str]] = {"message": "2025-03-26"}


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ProgressNotification(Notification):
    method: Literal["notifications/progress"] = "notifications/progress"
    params: ProgressNotificationParams


@attrs.frozen(kw_only=True, repr=False, eq=False)
class LoggingMessageNotificationParams(NotificationParams):
    level: LoggingLevel
    data: Any
    logger: str | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class LoggingMessageNotification(Notification):
    method: Literal["notifications/message"] = "notifications/message"
    params: LoggingMessageNotificationParams


@attrs.frozen(kw_only=True, repr=False, eq=False)
class SetLevelRequestParams(RequestParams):
    level: LoggingLevel


@attrs.frozen(kw_only=True, repr=False, eq=False)
class SetLevelRequest(Request[EmptyResult]):
    """Legacy era: the lowest level of log messages the client wants."""

    method: Literal["logging/setLevel"] = "logging/setLevel"
    params: SetLevelRequestParams
    result_model = EmptyResult
