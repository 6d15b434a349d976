"""A pair of message streams joined in memory, for tests and in-process use.

Each message is serialized to bytes and parsed again on the way through, so
what passes is exactly what a real transport would carry.
"""

from __future__ import annotations

import trio

from .._jsonrpc import Message, dumps, parse
from .._types._base import RequestId
from ._stream import MessageStream, Received


class MemoryMessageStream(MessageStream):
    """One end of :func:`memory_stream_pair`."""

    def __init__(
        self,
        send_channel: trio.MemorySendChannel[bytes],
        receive_channel: trio.MemoryReceiveChannel[bytes],
    ) -> None:
        self._send_channel = send_channel
        self._receive_channel = receive_channel
        #: Every message sent, with its ``related`` id, for tests that look at routing.
        self.sent_related: list[RequestId | None] | None = None

    async def send(self, message: Message, *, related: RequestId | None = None) -> None:
        # A memory channel takes each message whole, so concurrent senders need no lock.
        await self._send_channel.send(dumps(message))
        if self.sent_related is not None:
            self.sent_related.append(related)

    def send_nowait(self, message: Message, *, related: RequestId | None = None) -> None:
        self._send_channel.send_nowait(dumps(message))
        if self.sent_related is not None:
            self.sent_related.append(related)

    async def send_raw(self, data: bytes) -> None:
        """Send bytes that need not be a valid message (for tests of bad input)."""
        await self._send_channel.send(data)

    async def receive(self) -> Received:
        return parse(await self._receive_channel.receive())

    def receive_nowait(self) -> Received:
        try:
            return parse(self._receive_channel.receive_nowait())
        except (trio.EndOfChannel, trio.ClosedResourceError, trio.BrokenResourceError):
            raise trio.WouldBlock from None

    async def aclose(self) -> None:
        await self._send_channel.aclose()
        await self._receive_channel.aclose()


def memory_stream_pair(buffer: int = 64) -> tuple[MemoryMessageStream, MemoryMessageStream]:
    """Two connected message streams.

    Args:
        buffer: how many messages may wait in each direction before ``send``
            blocks. ``0`` makes every ``send`` wait for the peer's ``receive``
            (lockstep: the "clogged" pair of transport tests).
    """
    a_send, b_receive = trio.open_memory_channel[bytes](buffer)
    b_send, a_receive = trio.open_memory_channel[bytes](buffer)
    return MemoryMessageStream(a_send, a_receive), MemoryMessageStream(b_send, b_receive)
