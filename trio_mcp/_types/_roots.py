"""Roots: the directories or files a client lets a server work in (deprecated in 2026-07-28)."""

from __future__ import annotations

from typing import Literal

import attrs

from ._base import MetaObject, Model, Notification, NotificationParams, Request, RequestParams


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Root(Model):
    uri: str
    name: str | None = None
    meta: MetaObject | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ListRootsResult(Model):
    roots: list[Root]
    meta: MetaObject | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ListRootsRequest(Request[ListRootsResult]):
    method: Literal["roots/list"] = "roots/list"
    params: RequestParams | None = None
    result_model = ListRootsResult


@attrs.frozen(kw_only=True, repr=False, eq=False)
class RootsListChangedNotification(Notification):
    """Legacy era only."""

    method: Literal["notifications/roots/list_changed"] = "notifications/roots/list_changed"
    params: NotificationParams | None = None
