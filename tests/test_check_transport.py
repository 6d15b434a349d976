"""check_transport can fail: each deliberately broken MessageStream below breaks one
promise of the contract, and the check must reject it with AssertionError (a hang is
reported as one too, once the check's ``wait`` runs out)."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing

from trio_mcp import jsonrpc as rpc
from trio_mcp.testing import PairMaker, check_transport
from trio_mcp.transports import MemoryMessageStream, MessageStream, memory_stream_pair


class Wrapped(MessageStream):
    """A memory stream passed through as it is; subclasses break one thing."""

    def __init__(self, inner: MemoryMessageStream) -> None:
        self.inner = inner

    async def send(self, message: rpc.Message, *, related: Any = None) -> None:
        await self.inner.send(message, related=related)

    async def receive(self) -> Any:
        return await self.inner.receive()

    async def aclose(self) -> None:
        await self.inner.aclose()


class Dropping(Wrapped):
    """Loses every third message it sends."""

    sent = 0

    async def send(self, message: rpc.Message, *, related: Any = None) -> None:
        self.sent += 1
        if self.sent % 3 == 0:
            await trio.lowlevel.checkpoint()
            return
        await super().send(message, related=related)


class Reordering(Wrapped):
    """Hands out what has piled up newest first."""

    def __init__(self, inner: MemoryMessageStream) -> None:
        super().__init__(inner)
        self.piled: list[Any] = []

    async def receive(self) -> Any:
        if not self.piled:
            self.piled.append(await self.inner.receive())
            while True:
                try:
                    self.piled.append(self.inner.receive_nowait())
                except trio.WouldBlock:
                    break
        return self.piled.pop()


class QuietAfterClose(Wrapped):
    """After aclose, receive reports an end of input instead of ClosedResourceError."""

    closed = False

    async def receive(self) -> Any:
        if self.closed:
            await trio.lowlevel.checkpoint()
            raise trio.EndOfChannel
        return await super().receive()

    async def aclose(self) -> None:
        self.closed = True
        await super().aclose()


class NeverEnding(Wrapped):
    """When the peer closes, receive waits for ever instead of reporting the end."""

    async def receive(self) -> Any:
        try:
            return await super().receive()
        except (trio.EndOfChannel, trio.BrokenResourceError):
            await trio.sleep_forever()
            raise AssertionError("unreachable") from None


def maker(kind: Callable[[MemoryMessageStream], MessageStream], buffer: float = 64) -> PairMaker:
    @asynccontextmanager
    async def pair() -> AsyncIterator[tuple[MessageStream, MessageStream]]:
        a, b = memory_stream_pair(buffer)  # type: ignore[arg-type]
        async with kind(a) as one, kind(b) as other:
            yield one, other

    return pair


GOOD = maker(Wrapped)
CLOGGED = maker(Wrapped, buffer=0)


async def test_the_wrapper_itself_passes(autojump_clock: trio.testing.MockClock) -> None:
    # So that what the cases below break is the only thing wrong with them.
    await check_transport(GOOD, CLOGGED)


@pytest.mark.parametrize(
    ("good", "clogged", "complaint"),
    [
        pytest.param(maker(Dropping), None, "'round trip' did not finish", id="drops-messages"),
        pytest.param(maker(Reordering), None, "sent .*, received", id="reorders-messages"),
        pytest.param(GOOD, maker(Wrapped, buffer=math.inf), "send must block", id="unbounded"),
        pytest.param(
            maker(QuietAfterClose),
            None,
            "receive on a closed stream must raise ClosedResourceError, not EndOfChannel",
            id="receive-after-aclose",
        ),
        pytest.param(
            maker(NeverEnding), None, "'close semantics' did not finish", id="never-reports-the-end"
        ),
    ],
)
async def test_a_broken_transport_is_rejected(
    good: PairMaker,
    clogged: PairMaker | None,
    complaint: str,
    autojump_clock: trio.testing.MockClock,
) -> None:
    with pytest.raises(AssertionError, match=complaint):
        await check_transport(good, clogged)
