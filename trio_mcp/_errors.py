"""The exception hierarchy. Every error maps to a JSON-RPC error code.

``McpError`` is what a peer answered (or what a handler raises to answer
with); ``ProtocolError`` means the peer broke the protocol;
``ConnectionClosed`` means the peer is gone; ``RetryLater`` that a request was refused for
now (busy, over a quota, a store away); ``RequestTimeout`` means a
request's own deadline passed (after we told the peer to cancel it).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum
from typing import TYPE_CHECKING, Any, Final, Literal

from . import _lazy
from ._types._base import Error
from ._types._converter import structure, unstructure

if TYPE_CHECKING:
    from ._types._elicitation import ElicitRequestURLParams


class ErrorCode(IntEnum):
    """JSON-RPC and MCP error codes."""

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    #: Local: the connection closed before an answer came (never sent on the wire).
    CONNECTION_CLOSED = -32000
    #: Local: the request's deadline passed (never sent on the wire).
    REQUEST_TIMEOUT = -32001
    #: Resource not found, 2025-11-25 and earlier (later revisions use -32602).
    RESOURCE_NOT_FOUND = -32002
    #: 2026-07-28: an HTTP header disagrees with the body.
    HEADER_MISMATCH = -32020
    #: 2026-07-28: the request needs a client capability the request did not declare.
    MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
    #: 2026-07-28: the server does not speak the request's protocol version.
    UNSUPPORTED_PROTOCOL_VERSION = -32022
    #: 2025-11-25 only: the server needs a URL-mode elicitation first.
    URL_ELICITATION_REQUIRED = -32042


class McpError(Exception):
    """An error with a JSON-RPC error object: raised for an error answer from the peer, and
    raised by handlers to answer with one.

    Args:
        code: the JSON-RPC error code (see :class:`ErrorCode`).
        message: a short human-readable description.
        data: optional extra JSON data.
    """

    default_code: int = ErrorCode.INTERNAL_ERROR

    def __init__(self, message: str, *, code: int | None = None, data: Any = None) -> None:
        super().__init__(message)
        self.code = int(self.default_code if code is None else code)
        self.message = message
        self.data = data

    @property
    def error(self) -> Error:
        """The JSON-RPC error object."""
        return Error(code=self.code, message=self.message, data=self.data)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self.message, self.code, self.data, self.__dict__))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, code={self.code})"

    @classmethod
    def from_error(cls, error: Error) -> McpError:
        """The most specific exception for an error object received from a peer."""
        if error.code == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION:
            return UnsupportedProtocolVersion.from_data(error.message, error.data)
        if error.code == ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY:
            return MissingRequiredClientCapability.from_data(error.message, error.data)
        if error.code == ErrorCode.URL_ELICITATION_REQUIRED:
            return URLElicitationRequired.from_data(error.message, error.data)
        if error.code == ErrorCode.INTERNAL_ERROR and retry_hint(error.data) is not None:
            return RetryLater.from_data(error.message, error.data)
        return McpError(error.message, code=error.code, data=error.data)


def _rebuild(
    cls: type[McpError], message: str, code: int, data: Any, state: dict[str, Any]
) -> McpError:
    err = cls.__new__(cls)
    Exception.__init__(err, message)
    err.__dict__.update(state)
    err.code, err.message, err.data = code, message, data
    return err


#: Why a request was refused for now (the ``reason`` of :class:`RetryLater`): the server is
#: busy, the caller is over a quota of its own, or a store the request needs is away.
RetryReason = Literal["busy", "quota", "unavailable"]
_RETRY_REASONS: Final = ("busy", "quota", "unavailable")


def retry_hint(data: Any) -> tuple[int, RetryReason] | None:
    """``(seconds, reason)`` of an error's data that says to retry later
    (``{"retryAfter": 5, "reason": "busy"}``), else ``None``."""
    if not isinstance(data, dict):
        return None
    seconds, reason = data.get("retryAfter"), data.get("reason")
    if type(seconds) is not int or seconds < 0 or reason not in _RETRY_REASONS:
        return None
    return seconds, reason


class RetryLater(McpError):
    """The request was refused for now, and nothing was done: the server is busy, the
    caller is over a quota of its own, or a store it needs is away. JSON-RPC error -32603
    whose data says when to try again: ``{"retryAfter": seconds, "reason": reason}``; over
    HTTP, status 503 (429 for ``"quota"``) with ``Retry-After``.

    Raise it from a handler to refuse a request that way; a client receives it as this
    class.
    """

    default_code = ErrorCode.INTERNAL_ERROR

    def __init__(self, message: str, *, retry_after: int, reason: RetryReason) -> None:
        super().__init__(message, data={"retryAfter": retry_after, "reason": reason})
        #: Seconds after which the request may succeed.
        self.retry_after = retry_after
        #: ``"busy"``, ``"quota"`` or ``"unavailable"``.
        self.reason = reason

    @classmethod
    def from_data(cls, message: str, data: Any) -> RetryLater:
        hint = retry_hint(data)
        assert hint is not None
        return cls(message, retry_after=hint[0], reason=hint[1])


class ProtocolError(McpError):
    """The peer broke the protocol: a malformed message, a result of the wrong shape, a
    version or capability it should not have used."""

    default_code = ErrorCode.INVALID_REQUEST


class ConnectionClosed(McpError):
    """The connection to the peer is gone; no answer will come.

    Attributes:
        returncode: for a stdio server, its exit status if it has exited.
        stderr_tail: for a stdio server, the last lines it wrote to stderr.
    """

    default_code = ErrorCode.CONNECTION_CLOSED

    def __init__(
        self,
        message: str = "connection closed",
        *,
        code: int | None = None,
        data: Any = None,
        returncode: int | None = None,
        stderr_tail: str | None = None,
    ) -> None:
        super().__init__(message, code=code, data=data)
        self.returncode = returncode
        self.stderr_tail = stderr_tail

    def __str__(self) -> str:
        text = self.message
        if self.returncode is not None:
            text += f" (exit status {self.returncode})"
        if self.stderr_tail:
            text += f"; stderr ends with:\n{self.stderr_tail}"
        return text


class RequestTimeout(McpError):
    """A request's deadline passed; the peer was told to cancel it."""

    default_code = ErrorCode.REQUEST_TIMEOUT


class UnsupportedProtocolVersion(McpError):
    """The server does not speak the requested revision; ``supported`` lists what it does."""

    default_code = ErrorCode.UNSUPPORTED_PROTOCOL_VERSION

    def __init__(
        self,
        message: str = "Unsupported protocol version",
        *,
        supported: list[str],
        requested: str | None,
        code: int | None = None,
    ) -> None:
        super().__init__(
            message, code=code, data={"supported": list(supported), "requested": requested}
        )
        self.supported = list(supported)
        self.requested = requested

    @classmethod
    def from_data(cls, message: str, data: Any) -> UnsupportedProtocolVersion:
        data = data if isinstance(data, dict) else {}
        supported = data.get("supported")
        requested = data.get("requested")
        return cls(
            message,
            supported=[v for v in supported if isinstance(v, str)]
            if isinstance(supported, list)
            else [],
            requested=requested if isinstance(requested, str) else None,
        )


class MissingRequiredClientCapability(McpError):
    """The request needs client capabilities it did not declare (``required_capabilities``,
    a client-capabilities object such as ``{"sampling": {}}``)."""

    default_code = ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY

    def __init__(
        self,
        message: str = "Missing required client capability",
        *,
        required_capabilities: dict[str, Any],
        code: int | None = None,
    ) -> None:
        super().__init__(message, code=code, data={"requiredCapabilities": required_capabilities})
        self.required_capabilities = required_capabilities

    @classmethod
    def from_data(cls, message: str, data: Any) -> MissingRequiredClientCapability:
        required = data.get("requiredCapabilities") if isinstance(data, dict) else None
        return cls(message, required_capabilities=required if isinstance(required, dict) else {})


class URLElicitationRequired(McpError):
    """(2025-11-25) The request cannot go on until the user completes one or more URL-mode
    elicitations (out-of-band interactions: a sign-in, a payment), listed in
    ``elicitations``; retry it once they are done.

    A handler raises it to answer with error -32042 (``URLElicitationRequiredError``),
    whose ``data`` carries the elicitations. Each needs an ``elicitation_id``, so the
    server can announce its end with ``ctx.elicitation_complete(elicitation_id)``. A
    client that did not declare URL-mode elicitation, or an older revision, gets
    :class:`MissingRequiredClientCapability` instead; a 2026-07-28 client gets the
    elicitations as the questions of an input round (``inputRequests``), and its retry
    runs the handler again.

    A client receives it for such an error answer: show the user each elicitation's
    ``url`` (after asking their consent), then retry; the client's
    ``on_elicitation_complete`` handler hears when the server says one is done.

    Args:
        elicitations: the URL-mode elicitations to complete (each with an
            ``elicitation_id``).
        message: a short description.

    Raises:
        ValueError: an elicitation has no ``elicitation_id``.
    """

    default_code = ErrorCode.URL_ELICITATION_REQUIRED

    def __init__(
        self,
        elicitations: Sequence[ElicitRequestURLParams],
        message: str = "This request requires more information.",
        *,
        code: int | None = None,
    ) -> None:
        elicitations = list(elicitations)
        for elicitation in elicitations:
            if elicitation.elicitation_id is None:
                raise ValueError(
                    f"the URL elicitation of {elicitation.url!r} has no elicitation_id"
                )
        data = {"elicitations": [unstructure(e, "2025-11-25") for e in elicitations]}
        super().__init__(message, code=code, data=data)
        self.elicitations = elicitations

    @classmethod
    def from_data(cls, message: str, data: Any) -> URLElicitationRequired:
        """The error for the ``data`` a server sent; elicitations that are malformed or
        have no ``elicitationId`` are left out."""
        items = data.get("elicitations") if isinstance(data, dict) else None
        elicitations = []
        for item in items if isinstance(items, list) else ():
            try:
                elicitation = structure(item, _lazy.ElicitRequestURLParams)
            except ValueError:
                continue
            if elicitation.elicitation_id is not None:
                elicitations.append(elicitation)
        error = cls(elicitations, message)
        error.data = data  # as received
        return error
