"""Opening a conversation: ``initialize`` (legacy era), ``server/discover`` (modern era),
and ``ping``."""

from __future__ import annotations

from typing import Literal

import attrs

from ._base import (
    CacheableResult,
    EmptyResult,
    Implementation,
    Notification,
    NotificationParams,
    Request,
    RequestParams,
    Result,
)
from ._capabilities import ClientCapabilities, ServerCapabilities


@attrs.frozen(kw_only=True, repr=False, eq=False)
class InitializeRequestParams(RequestParams):
    protocol_version: str
    capabilities: ClientCapabilities
    client_info: Implementation


@attrs.frozen(kw_only=True, repr=False, eq=False)
class InitializeResult(Result):
    protocol_version: str
    capabilities: ServerCapabilities
    server_info: Implementation
    instructions: str | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class InitializeRequest(Request[InitializeResult]):
    """Legacy era: the first request of a session. It cannot be cancelled."""

    method: Literal["initialize"] = "initialize"
    params: InitializeRequestParams
    result_model = InitializeResult


@attrs.frozen(kw_only=True, repr=False, eq=False)
class InitializedNotification(Notification):
    method: Literal["notifications/initialized"] = "notifications/initialized"
    params: NotificationParams | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class PingRequest(Request[EmptyResult]):
    """Legacy era: either side checks the other is alive."""

    method: Literal["ping"] = "ping"
    params: RequestParams | None = None
    result_model = EmptyResult


@attrs.frozen(kw_only=True, repr=False, eq=False)
class DiscoverResult(CacheableResult):
    """What a modern server supports: versions, capabilities, instructions."""

    supported_versions: list[str]
    capabilities: ServerCapabilities
    instructions: str | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class DiscoverRequest(Request[DiscoverResult]):
    """Modern era: ask a server what it supports (also the stdio era probe)."""

    method: Literal["server/discover"] = "server/discover"
    params: RequestParams | None = None
    result_model = DiscoverResult
