"""What the connection tells its driver: records of requests in flight and the events
:meth:`Connection.receive <trio_mcp.protocol.Connection.receive>` returns."""

from __future__ import annotations

from typing import Any, TypeAlias

import attrs

from .. import _jsonrpc as rpc
from .._types._base import LoggingLevel, ProgressToken, RequestId
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


@attrs.define(eq=False)
class InboundRequest:
    """A request from the peer, to be handled by the application.

    ``params`` is the typed params model for known methods, the raw dict (or
    ``None``) for methods the protocol does not define.
    """

    id: RequestId
    method: str
    params: Any
    raw_params: dict[str, Any] | None
    spec: MethodSpec | None
    #: The revision to answer in.
    version: str
    #: The modern envelope, for a modern request.
    envelope: Envelope | None = None
    progress_token: ProgressToken | None = None
    cancelled: bool = False
    finished: bool = False

    @property
    def log_level(self) -> LoggingLevel | None:
        return self.envelope.log_level if self.envelope is not None else None


@attrs.frozen
class Dispatch:
    """Run the application's handler for ``request``."""

    request: InboundRequest


@attrs.frozen
class Reply:
    """Send ``message`` right away (an error, or an answer the protocol gives itself)."""

    message: rpc.Message


@attrs.frozen
class ResponseReceived:
    """The answer to one of our requests; hand it to whoever awaits it."""

    request: OutboundRequest
    response: rpc.ResultResponse | rpc.ErrorResponse | rpc.InvalidMessage


@attrs.frozen
class CancelRequested:
    """The peer cancelled ``request``: cancel its handler and send nothing for it."""

    request: InboundRequest
    reason: str | None


@attrs.frozen
class PeerCancelled:
    """The peer ended one of *our* requests (a modern server ending ``subscriptions/listen``)."""

    request: OutboundRequest
    reason: str | None


@attrs.frozen
class ProgressReceived:
    """Progress for one of our requests."""

    request: OutboundRequest
    progress: ProgressNotificationParams


@attrs.frozen
class NotificationReceived:
    """A notification for the application (typed params for known methods)."""

    method: str
    params: Any
    spec: MethodSpec | None


@attrs.frozen
class Dropped:
    """Nothing to do; ``reason`` says why (also counted in :class:`Statistics`)."""

    reason: str


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
