"""What the connection tells its driver: records of requests in flight and the events
:meth:`Connection.receive <trio_mcp.protocol.Connection.receive>` returns."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, TypeAlias

import attrs

from .. import _jsonrpc as rpc
from .._errors import ErrorCode, McpError
from .._types._base import LoggingLevel, ProgressToken, RequestId
from .._types._converter import explain
from .._types._methods import MethodSpec
from .._types._notifications import ProgressNotificationParams
from ._envelope import Envelope


@attrs.define(eq=False)
class OutboundRequest:
    """A request we sent and await an answer to."""

    id: RequestId
    method: str
    spec: MethodSpec | None
    #: The revision the answer is read in.
    version: str
    progress_token: ProgressToken | None = None
    cancellable: bool = True


_UNREAD: Final = object()


@attrs.define(eq=False)
class InboundRequest:
    """A request from the peer, to be handled by the application.

    :attr:`params` is the typed params model for known methods (read from
    ``raw_params`` on first use), the raw dict (or ``None``) for methods the
    protocol does not define.
    """

    id: RequestId
    method: str
    raw_params: dict[str, Any] | None
    spec: MethodSpec | None
    #: The revision to answer in.
    version: str
    #: The modern envelope, for a modern request.
    envelope: Envelope | None = None
    progress_token: ProgressToken | None = None
    cancelled: bool = False
    finished: bool = False
    #: Reads ``raw_params`` as ``params_type`` (``None``: params stay raw).
    read_params: Callable[[Any, Any], Any] | None = None
    params_type: Any = None
    _params: Any = attrs.field(default=_UNREAD, init=False)

    @property
    def params(self) -> Any:
        """The typed params (read once, on first use).

        Raises:
            McpError: -32602 when the params do not fit the method; answering with it is
                what a handler should do (the session does so for exceptions it sees).
        """
        value = self._params
        if value is _UNREAD:
            read = self.read_params
            if read is None:
                value = self.raw_params
            else:
                raw = self.raw_params if self.raw_params is not None else {}
                try:
                    value = read(raw, self.params_type)
                except Exception:  # noqa: BLE001 - explained, off the fast path
                    why = explain(raw, self.params_type)
                    raise McpError(
                        f"Invalid params for {self.method}: {why}", code=ErrorCode.INVALID_PARAMS
                    ) from None
            self._params = value
        return value

    @property
    def log_level(self) -> LoggingLevel | None:
        return self.envelope.log_level if self.envelope is not None else None


class _Event:
    """Base of the events :meth:`Connection.receive` returns: immutable records, equal when
    of the same class with equal fields.

    Plain slotted classes, not attrs ones: every program loads this module, and creating
    an attrs class costs far more start-up time than a plain one
    (``benchmarks/startup.py --models`` measures both).
    """

    __slots__ = ()
    __match_args__: tuple[str, ...] = ()

    def __setattr__(self, name: str, value: object) -> None:
        raise attrs.exceptions.FrozenInstanceError

    def __delattr__(self, name: str) -> None:
        raise attrs.exceptions.FrozenInstanceError

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__match_args__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash((self.__class__, *self._fields()))

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__match_args__)
        return f"{type(self).__name__}({fields})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (self.__class__, self._fields())


_set = object.__setattr__


class Dispatch(_Event):
    """Run the application's handler for ``request``."""

    __slots__ = __match_args__ = ("request",)
    request: InboundRequest

    def __init__(self, request: InboundRequest) -> None:
        _set(self, "request", request)


class Reply(_Event):
    """Send ``message`` right away (an error, or an answer the protocol gives itself)."""

    __slots__ = __match_args__ = ("message",)
    message: rpc.Message

    def __init__(self, message: rpc.Message) -> None:
        _set(self, "message", message)


class ResponseReceived(_Event):
    """The answer to one of our requests; hand it to whoever awaits it."""

    __slots__ = __match_args__ = ("request", "response")
    request: OutboundRequest
    response: rpc.ResultResponse | rpc.ErrorResponse | rpc.InvalidMessage

    def __init__(
        self,
        request: OutboundRequest,
        response: rpc.ResultResponse | rpc.ErrorResponse | rpc.InvalidMessage,
    ) -> None:
        _set(self, "request", request)
        _set(self, "response", response)


class CancelRequested(_Event):
    """The peer cancelled ``request``: cancel its handler and send nothing for it."""

    __slots__ = __match_args__ = ("request", "reason")
    request: InboundRequest
    reason: str | None

    def __init__(self, request: InboundRequest, reason: str | None) -> None:
        _set(self, "request", request)
        _set(self, "reason", reason)


class PeerCancelled(_Event):
    """The peer ended one of *our* requests (a modern server ending ``subscriptions/listen``)."""

    __slots__ = __match_args__ = ("request", "reason")
    request: OutboundRequest
    reason: str | None

    def __init__(self, request: OutboundRequest, reason: str | None) -> None:
        _set(self, "request", request)
        _set(self, "reason", reason)


class ProgressReceived(_Event):
    """Progress for one of our requests."""

    __slots__ = __match_args__ = ("request", "progress")
    request: OutboundRequest
    progress: ProgressNotificationParams

    def __init__(self, request: OutboundRequest, progress: ProgressNotificationParams) -> None:
        _set(self, "request", request)
        _set(self, "progress", progress)


class NotificationReceived(_Event):
    """A notification for the application (typed params for known methods)."""

    __slots__ = __match_args__ = ("method", "params", "spec")
    method: str
    params: Any
    spec: MethodSpec | None

    def __init__(self, method: str, params: Any, spec: MethodSpec | None) -> None:
        _set(self, "method", method)
        _set(self, "params", params)
        _set(self, "spec", spec)


class Dropped(_Event):
    """Nothing to do; ``reason`` says why (also counted in :class:`Statistics`)."""

    __slots__ = __match_args__ = ("reason",)
    reason: str

    def __init__(self, reason: str) -> None:
        _set(self, "reason", reason)


ReceiveEvent: TypeAlias = (
    Dispatch
    | Reply
    | ResponseReceived
    | CancelRequested
    | PeerCancelled
    | ProgressReceived
    | NotificationReceived
    | Dropped
)


@attrs.define
class Statistics:
    """Counters of what the connection saw; ``statistics()`` returns a copy."""

    requests_sent: int = 0
    requests_received: int = 0
    notifications_sent: int = 0
    notifications_received: int = 0
    responses_dropped: int = 0
    progress_dropped: int = 0
    cancellations_ignored: int = 0
    invalid_messages: int = 0
    errors_replied: int = 0
