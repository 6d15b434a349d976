from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from trio_mcp.testing import check_transport
from trio_mcp.transports import MemoryMessageStream, MessageStream, memory_stream_pair


@asynccontextmanager
async def pair() -> AsyncIterator[tuple[MessageStream, MessageStream]]:
    a, b = memory_stream_pair()
    async with a, b:
        yield a, b


@asynccontextmanager
async def clogged() -> AsyncIterator[tuple[MessageStream, MessageStream]]:
    a, b = memory_stream_pair(buffer=0)
    async with a, b:
        yield a, b


async def send_raw(stream: MessageStream, data: bytes) -> None:
    assert isinstance(stream, MemoryMessageStream)
    await stream.send_raw(data)


async def test_memory_pair_passes_check_transport(autojump_clock: object) -> None:
    await check_transport(pair, clogged, send_raw=send_raw)
