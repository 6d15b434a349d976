"""Models that document what the library reads and writes as plain data: the reserved
keys of ``_meta`` (2026-07-28), and the schema's ``Icons`` and ``BaseMetadata``.

Nothing at run time builds them, so they live apart from :mod:`._base`, which every
program loads (start-up time); :mod:`trio_mcp.types` exports them with the rest.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import attrs

from ._base import Icon, Implementation, LoggingLevel, Model, ProgressToken, RequestId
from ._capabilities import ClientCapabilities


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Icons(Model):
    """Anything that can carry icons."""

    icons: list[Icon] | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class BaseMetadata(Model):
    """Programmatic name plus optional human-readable title."""

    name: str
    title: str | None = None


# --- _meta objects with reserved keys -----------------------------------------------------


@attrs.frozen(kw_only=True, repr=False, eq=False)
class RequestMetaObject(Model):
    """The reserved keys of a request's ``_meta`` (2026-07-28).

    Servers read these from the raw ``_meta`` dict (see
    :func:`trio_mcp.protocol.read_envelope`); this model documents them and
    lets clients build them.
    """

    protocol_version: str
    client_capabilities: ClientCapabilities
    client_info: Implementation | None = None
    log_level: LoggingLevel | None = None
    progress_token: ProgressToken | None = None

    __wire_names__: ClassVar[Mapping[str, str]] = {
        "protocol_version": "io.modelcontextprotocol/protocolVersion",
        "client_capabilities": "io.modelcontextprotocol/clientCapabilities",
        "client_info": "io.modelcontextprotocol/clientInfo",
        "log_level": "io.modelcontextprotocol/logLevel",
        "progress_token": "progressToken",
    }


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ResultMetaObject(Model):
    """The reserved keys of a result's ``_meta`` (2026-07-28)."""

    server_info: Implementation | None = None

    __wire_names__: ClassVar[Mapping[str, str]] = {
        "server_info": "io.modelcontextprotocol/serverInfo",
    }


@attrs.frozen(kw_only=True, repr=False, eq=False)
class NotificationMetaObject(Model):
    """The reserved keys of a notification's ``_meta`` (2026-07-28)."""

    subscription_id: RequestId | None = None

    __wire_names__: ClassVar[Mapping[str, str]] = {
        "subscription_id": "io.modelcontextprotocol/subscriptionId",
    }


@attrs.frozen(kw_only=True, repr=False, eq=False)
class SubscriptionsListenResultMetaObject(ResultMetaObject):
    """``_meta`` of the result that ends a ``subscriptions/listen`` stream."""

    subscription_id: RequestId

    __wire_names__: ClassVar[Mapping[str, str]] = {
        "server_info": "io.modelcontextprotocol/serverInfo",
        "subscription_id": "io.modelcontextprotocol/subscriptionId",
    }
