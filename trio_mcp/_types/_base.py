"""Building blocks every wire model shares.

Conventions (the converter in :mod:`._converter` relies on them):

* Models are ``attrs`` classes, ``frozen``, ``slots``, ``kw_only``.
* Attributes are snake_case; the wire name is the camelCase form, except
  ``meta`` which is ``_meta`` everywhere, and the names listed in a class's
  ``__wire_names__``.
* An optional attribute defaults to ``None`` and is left off the wire when it
  is ``None``; every other attribute is always written.
* ``__since__`` maps attribute names to the first revision that has them, and
  ``__until__`` to the last; when we write for a peer on another revision, the
  attribute is left out. Both are merged along the class hierarchy.
* ``__wire_defaults__`` maps optional attributes that the revisions having them
  *require* to the value written for such a peer when the attribute is ``None``
  (``None`` then means "not given", as from a peer on a revision without them).
* Request and notification classes carry their ``method`` as a ``Literal``
  attribute with a default, so ``CallToolRequest(params=...)`` needs no method.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Generic, Literal, TypeAlias, TypeVar

import attrs

#: A JSON-RPC request id. MCP forbids ``null`` ids and fractional numbers.
RequestId: TypeAlias = str | int
#: A progress token chosen by the requester.
ProgressToken: TypeAlias = str | int
#: An opaque pagination cursor.
Cursor: TypeAlias = str
Role: TypeAlias = Literal["user", "assistant"]
LoggingLevel: TypeAlias = Literal[
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
]
#: Kinds of result (2026-07-28): a final result, or a request for more input.
ResultType: TypeAlias = str
#: Any JSON value.
JSONValue: TypeAlias = Any
JSONObject: TypeAlias = dict[str, Any]
JSONArray: TypeAlias = list[Any]
#: MRTR answers as they arrive on the wire, keyed like the ``inputRequests`` they answer.
#: The server structures each value as the result type of the request it asked
#: (``trio_mcp.types.InputResponse`` names the possibilities).
InputResponses: TypeAlias = dict[str, Any]
#: The ``_meta`` object: free-form, with reserved ``io.modelcontextprotocol/`` keys.
MetaObject: TypeAlias = dict[str, Any]

#: Syslog severities in increasing order; index them to compare levels.
LOGGING_LEVELS: tuple[LoggingLevel, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)

ResultT = TypeVar("ResultT")


@attrs.frozen(kw_only=True)
class Implementation:
    """Name and version of an MCP client or server implementation."""

    name: str
    version: str
    title: str | None = None
    description: str | None = None
    icons: list[Icon] | None = None
    website_url: str | None = None

    __since__: ClassVar[Mapping[str, str]] = {
        "title": "2025-06-18",
        "description": "2025-11-25",
        "icons": "2025-11-25",
        "website_url": "2025-11-25",
    }


@attrs.frozen(kw_only=True)
class Icon:
    """An icon a client may show for a tool, prompt, resource or implementation."""

    src: str
    mime_type: str | None = None
    sizes: list[str] | None = None
    theme: Literal["light", "dark"] | None = None


@attrs.frozen(kw_only=True)
class Icons:
    """Anything that can carry icons."""

    icons: list[Icon] | None = None


@attrs.frozen(kw_only=True)
class BaseMetadata:
    """Programmatic name plus optional human-readable title."""

    name: str
    title: str | None = None


@attrs.frozen(kw_only=True)
class Error:
    """A JSON-RPC error object."""

    code: int
    message: str
    data: Any = None


# --- _meta objects with reserved keys -----------------------------------------------------


@attrs.frozen(kw_only=True)
class RequestMetaObject:
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


@attrs.frozen(kw_only=True)
class ResultMetaObject:
    """The reserved keys of a result's ``_meta`` (2026-07-28)."""

    server_info: Implementation | None = None

    __wire_names__: ClassVar[Mapping[str, str]] = {
        "server_info": "io.modelcontextprotocol/serverInfo",
    }


@attrs.frozen(kw_only=True)
class NotificationMetaObject:
    """The reserved keys of a notification's ``_meta`` (2026-07-28)."""

    subscription_id: RequestId | None = None

    __wire_names__: ClassVar[Mapping[str, str]] = {
        "subscription_id": "io.modelcontextprotocol/subscriptionId",
    }


@attrs.frozen(kw_only=True)
class SubscriptionsListenResultMetaObject(ResultMetaObject):
    """``_meta`` of the result that ends a ``subscriptions/listen`` stream."""

    subscription_id: RequestId

    __wire_names__: ClassVar[Mapping[str, str]] = {
        "server_info": "io.modelcontextprotocol/serverInfo",
        "subscription_id": "io.modelcontextprotocol/subscriptionId",
    }


# --- Request, notification and result bases ------------------------------------------------


@attrs.frozen(kw_only=True)
class RequestParams:
    """Params every request may carry: just ``_meta``."""

    meta: MetaObject | None = None


@attrs.frozen(kw_only=True)
class PaginatedRequestParams(RequestParams):
    cursor: Cursor | None = None


@attrs.frozen(kw_only=True)
class NotificationParams:
    meta: MetaObject | None = None


@attrs.frozen(kw_only=True)
class Request(Generic[ResultT]):
    """Base of typed requests: ``method`` and ``params``, without the JSON-RPC envelope.

    ``result_model`` names the model the answer is structured as.
    """

    result_model: ClassVar[type[Any]]


@attrs.frozen(kw_only=True)
class Notification:
    """Base of typed notifications: ``method`` and ``params``."""


@attrs.frozen(kw_only=True)
class Result:
    """Base of every result.

    ``result_type`` is written only to modern (2026-07-28) peers; a result
    from a legacy peer has none and reads as ``"complete"``.
    """

    meta: MetaObject | None = None
    result_type: ResultType = "complete"

    __since__: ClassVar[Mapping[str, str]] = {"result_type": "2026-07-28"}


@attrs.frozen(kw_only=True)
class EmptyResult(Result):
    """A result with no fields of its own (``ping``, ``logging/setLevel``, ...)."""


@attrs.frozen(kw_only=True)
class CacheableResult(Result):
    """A result with caching hints (2026-07-28): freshness in ms, and who may share it.

    ``None`` means no hint was given (a legacy peer sends none). 2026-07-28 requires
    both, so a ``None`` is written to such a peer as the conservative hint: ``0``
    (immediately stale) and ``"private"`` (never shared across authorization contexts).
    """

    ttl_ms: int | None = None
    cache_scope: Literal["public", "private"] | None = None

    __since__: ClassVar[Mapping[str, str]] = {
        "ttl_ms": "2026-07-28",
        "cache_scope": "2026-07-28",
    }
    __wire_defaults__: ClassVar[Mapping[str, Any]] = {"ttl_ms": 0, "cache_scope": "private"}


@attrs.frozen(kw_only=True)
class PaginatedResult(Result):
    next_cursor: Cursor | None = None


# Forward references resolved by the converter; imported late to avoid a cycle.
from ._capabilities import ClientCapabilities  # noqa: E402


@attrs.frozen(kw_only=True)
class CacheablePaginatedResult(CacheableResult):
    """A page of a cacheable list (``tools/list``, ``prompts/list``, ``resources/list`` ...).

    The same fields as :class:`PaginatedResult` plus the caching hints; a
    separate class because slotted classes cannot inherit from both.
    """

    next_cursor: Cursor | None = None
