"""Building blocks every wire model shares.

Conventions (the converter in :mod:`._converter` relies on them):

* Models are ``attrs`` classes, ``frozen``, ``slots``, ``kw_only``.
* Attributes are snake_case; the wire name is the camelCase form, except
  ``meta`` which is ``_meta`` everywhere, and the names listed in a class's
  ``__wire_names__``.
* An optional attribute defaults to ``None`` and is left off the wire when it
  is ``None``; every other attribute is always written, except one whose field
  metadata sets :data:`OMIT_IF_DEFAULT` (a flag whose spec default is ``false``:
  read as ``False`` when absent, left off the wire when ``False``).
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

#: Field metadata key: leave the attribute off the wire when it has its default value.
OMIT_IF_DEFAULT = "trio_mcp.omit_if_default"
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


class Model:
    """Base of every wire model: value equality, hashing and a readable ``repr``.

    attrs would generate these three methods for each of the 150-odd models, at a cost
    in start-up time (``benchmarks/startup.py --models`` measures it); models share
    these instead (declared with ``repr=False, eq=False``). They behave as attrs'
    would: equal when of the same class with equal attributes, hashable when the
    attributes are.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        fields = ", ".join(
            f"{a.name}={getattr(self, a.name)!r}"
            for a in self.__attrs_attrs__  # type: ignore[attr-defined]
        )
        return f"{type(self).__name__}({fields})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(
            getattr(self, a.name) == getattr(other, a.name)
            for a in self.__attrs_attrs__  # type: ignore[attr-defined]
        )

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(
            (self.__class__, *(getattr(self, a.name) for a in self.__attrs_attrs__))  # type: ignore[attr-defined]
        )


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Implementation(Model):
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


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Icon(Model):
    """An icon a client may show for a tool, prompt, resource or implementation."""

    src: str
    mime_type: str | None = None
    sizes: list[str] | None = None
    theme: Literal["light", "dark"] | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Error(Model):
    """A JSON-RPC error object."""

    code: int
    message: str
    data: Any = None


# --- Request, notification and result bases ------------------------------------------------


@attrs.frozen(kw_only=True, repr=False, eq=False)
class RequestParams(Model):
    """Params every request may carry: just ``_meta``."""

    meta: MetaObject | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class PaginatedRequestParams(RequestParams):
    cursor: Cursor | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class NotificationParams(Model):
    meta: MetaObject | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Request(Model, Generic[ResultT]):
    """Base of typed requests: ``method`` and ``params``, without the JSON-RPC envelope.

    ``result_model`` names the model the answer is structured as. Each request class
    gives its ``method`` again, as a ``Literal`` with a default (the attribute it
    declares replaces this one, so its fields and their order are its own).
    """

    method: str
    result_model: ClassVar[type[Any]]


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Notification(Model):
    """Base of typed notifications: ``method`` and ``params``. Each notification class
    gives its ``method`` again, as a ``Literal`` with a default (as :class:`Request`)."""

    method: str


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Result(Model):
    """Base of every result.

    ``result_type`` is written only to modern (2026-07-28) peers; a result
    from a legacy peer has none and reads as ``"complete"``.
    """

    meta: MetaObject | None = None
    result_type: ResultType = "complete"

    __since__: ClassVar[Mapping[str, str]] = {"result_type": "2026-07-28"}


@attrs.frozen(kw_only=True, repr=False, eq=False)
class EmptyResult(Result):
    """A result with no fields of its own (``ping``, ``logging/setLevel``, ...)."""


@attrs.frozen(kw_only=True, repr=False, eq=False)
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


@attrs.frozen(kw_only=True, repr=False, eq=False)
class PaginatedResult(Result):
    next_cursor: Cursor | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CacheablePaginatedResult(CacheableResult):
    """A page of a cacheable list (``tools/list``, ``prompts/list``, ``resources/list`` ...).

    The same fields as :class:`PaginatedResult` plus the caching hints; a
    separate class because slotted classes cannot inherit from both.
    """

    next_cursor: Cursor | None = None
