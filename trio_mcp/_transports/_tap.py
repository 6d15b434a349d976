"""A message stream that shows each message to an observer as it passes: what a client's
``on_message`` option (and ``trio-mcp --output raw``) is built on."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from .._jsonrpc import Message
from .._types._base import RequestId
from ._stream import MessageStream, Received

__all__ = ["Direction", "MessageTap", "TappedStream"]

#: Which way a message went: ``"sent"`` to the peer, ``"received"`` from it.
Direction = Literal["sent", "received"]
#: Told each message, and which way it went; called synchronously, so it must not block
#: (an exception from it propagates to the send or receive, as the stream's own would).
MessageTap = Callable[[Direction, Received], None]


class TappedStream(MessageStream):
    """``inner``, with ``tap`` told each message once it was sent (a send that fails was
    not sent) or received. Anything else a transport offers (its close details, say) is
    ``inner``'s."""

    def __init__(self, inner: MessageStream, tap: MessageTap) -> None:
        self._inner = inner
        self._tap = tap

    async def send(self, message: Message, *, related: RequestId | None = None) -> None:
        await self._inner.send(message, related=related)
        self._tap("sent", message)

    def send_nowait(self, message: Message, *, related: RequestId | None = None) -> None:
        self._inner.send_nowait(message, related=related)
        self._tap("sent", message)

    async def receive(self) -> Received:
        received = await self._inner.receive()
        self._tap("received", received)
        return received

    def receive_nowait(self) -> Received:
        received = self._inner.receive_nowait()
        self._tap("received", received)
        return received

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
