"""A request of ours in flight, as its caller holds it: progress, then the answer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, TypeVar

import trio

from .. import _jsonrpc as rpc
from .._errors import McpError, ProtocolError
from .._protocol._connection import Connection
from .._protocol._events import OutboundRequest
from .._types._base import RequestId
from .._types._mrtr import InputRequiredResult
from .._types._notifications import ProgressNotificationParams
from ._waiter import Closed, Waiter

if TYPE_CHECKING:
    from ._outbound import Outbound

R = TypeVar("R")


class Call(Generic[R]):
    """A request in flight (see :meth:`Session.open_request`).

    ``async for update in call`` yields its progress until the answer arrives;
    ``await call.result()`` waits for the answer. Unread progress is kept in a
    bounded buffer (:data:`~trio_mcp.session.PROGRESS_BUFFER` updates) that
    drops the oldest when full; :attr:`dropped_progress` counts what was lost.
    """

    def __init__(
        self, outbound: Outbound, pending: OutboundRequest, waiter: Waiter, model: type[R] | None
    ) -> None:
        self._outbound = outbound
        self.request = pending
        self._waiter = waiter
        self._model = model

    @property
    def id(self) -> RequestId:
        """The request's JSON-RPC id."""
        return self.request.id

    @property
    def dropped_progress(self) -> int:
        """How many of this request's progress updates were dropped, unread, because
        more than :data:`~trio_mcp.session.PROGRESS_BUFFER` were waiting."""
        return self._waiter.dropped_progress

    def __aiter__(self) -> Call[R]:
        if self._waiter.progress is None:
            raise RuntimeError("this request was not sent with progress=True")
        return self

    async def __anext__(self) -> ProgressNotificationParams:
        waiter = self._waiter
        await self._outbound.wait_for(waiter)
        if waiter.progress:
            update: ProgressNotificationParams = waiter.progress.popleft()
            await trio.lowlevel.checkpoint_if_cancelled()
            return update
        raise StopAsyncIteration

    async def answer(self) -> rpc.ResultResponse | rpc.ErrorResponse | rpc.InvalidMessage:
        """Block until the answer; return it as it came (unread).

        Raises:
            ConnectionClosed: the connection ended first.
        """
        waiter = self._waiter
        await self._outbound.await_answer(waiter, None)
        await trio.lowlevel.checkpoint_if_cancelled()
        answer = waiter.answer
        if type(answer) is Closed:
            raise answer.error
        message: rpc.ResultResponse | rpc.ErrorResponse | rpc.InvalidMessage = answer
        return message

    async def result(self) -> R | InputRequiredResult:
        """Block until the answer; return it read as the result model (or, from a modern
        peer, as the :class:`~trio_mcp.types.InputRequiredResult` it answered with).

        Raises:
            McpError: the peer answered with an error.
            ConnectionClosed: the connection ended first.
            ProtocolError: the answer was malformed.
        """
        answer = await self.answer()
        result: R | InputRequiredResult = read_answer(
            self._outbound.connection, self.request, answer, self._model
        )
        return result


def read_answer(
    connection: Connection, pending: OutboundRequest, answer: Any, model: type[Any] | None
) -> Any:
    """``pending``'s answer read as ``model``; raises what an answer that is no result
    means."""
    match answer:
        case rpc.ResultResponse():
            return connection.read_result(pending, answer.result, model)
        case rpc.ErrorResponse():
            raise McpError.from_error(answer.error)
        case Closed():
            raise answer.error
        case _:
            raise ProtocolError(f"malformed answer to {pending.method}: {answer.reason}")
