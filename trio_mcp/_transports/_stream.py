"""The one interface every transport implements: a stream of JSON-RPC messages."""

from __future__ import annotations

import abc
from typing import TypeAlias

import trio

from .._errors import ErrorCode
from .._jsonrpc import Batch, ErrorResponse, InvalidMessage, Message
from .._types._base import Error, RequestId

Received: TypeAlias = Message | Batch | InvalidMessage


class MessageTooLarge(trio.BrokenResourceError):
    """The peer sent a message over the stream's size limit, which broke the stream's
    input (no later message can be trusted to be the next one): raised by
    :meth:`MessageStream.receive`, then by every later call.

    A session whose input breaks this way fails every request still waiting with this
    message, at once, and sends the peer :attr:`reply` if its output still works.

    Attributes:
        limit: the limit the message exceeded, in bytes.
        reply: the -32600 error (id ``null``) that tells the peer why.
    """

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"a message from the peer exceeded {limit} bytes (max_message_size); "
            "the connection cannot go on without it"
        )
        self.limit = limit
        self.reply = ErrorResponse(
            None,
            Error(
                code=ErrorCode.INVALID_REQUEST,
                message=f"Invalid Request: a message exceeded {limit} bytes",
            ),
        )


class MessageStream(trio.abc.AsyncResource):
    """A bidirectional stream of JSON-RPC messages.

    Contract (checked by :func:`trio_mcp.testing.check_transport`):

    * :meth:`send` may be called from several tasks at once; messages are
      written whole, one after another, in the order the calls got through.
      It blocks while the peer is not reading (backpressure, never an
      unbounded buffer).
    * :meth:`receive` is called by one task at a time (not always the same
      one: a session's caller may read for its receive loop). It returns
      whatever arrived: a message, a :class:`~trio_mcp.jsonrpc.Batch`, or an
      :class:`~trio_mcp.jsonrpc.InvalidMessage` for bytes that were not a
      valid message (the stream goes on). A cancelled :meth:`receive`
      consumes nothing: the message it would have returned is the next
      call's.
    * When the peer closes its side, :meth:`receive` raises
      :exc:`trio.EndOfChannel` (again on every later call). When the peer
      vanishes abruptly it raises :exc:`trio.BrokenResourceError`, and so does
      :meth:`send` when nothing can be delivered any more. A message over the
      stream's size limit that the stream cannot skip safely (a line of the
      stdio framing) breaks its input: :meth:`receive` raises
      :exc:`MessageTooLarge`, a :exc:`trio.BrokenResourceError` that says the
      limit, then and on every later call.
    * After :meth:`aclose`, both raise :exc:`trio.ClosedResourceError`.
      ``aclose`` is idempotent and, like every ``aclose`` in Trio, closes even
      when cancelled.
    """

    @abc.abstractmethod
    async def send(self, message: Message, *, related: RequestId | None = None) -> None:
        """Send one message.

        ``related`` names the request this message answers or belongs to
        (a response, a request's progress). Transports that carry each request
        on its own channel (Streamable HTTP) use it to pick the channel; others
        ignore it.
        """

    @abc.abstractmethod
    async def receive(self) -> Received:
        """Wait for the next message from the peer."""

    def send_nowait(self, message: Message, *, related: RequestId | None = None) -> None:
        """Send one message if that needs no waiting (room in the transport's buffer).

        Lets a session answer a request that needed no handler task without
        yielding, so a burst of such answers leaves in one write. The default
        never can.

        Raises:
            trio.WouldBlock: it would have to wait; use :meth:`send`.
            trio.ClosedResourceError, trio.BrokenResourceError: as :meth:`send`.
        """
        raise trio.WouldBlock

    def receive_nowait(self) -> Received:
        """The next message if it has already arrived, without waiting.

        Streams that read in chunks hold several messages at once; taking them
        all before yielding lets a server start their handlers together (and
        batch their answers). The default never has one ready.

        Raises:
            trio.WouldBlock: nothing is ready; use :meth:`receive`.
        """
        raise trio.WouldBlock

    def __aiter__(self) -> MessageStream:
        return self

    async def __anext__(self) -> Received:
        try:
            return await self.receive()
        except trio.EndOfChannel:
            raise StopAsyncIteration from None
