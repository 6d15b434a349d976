"""The server's end of an HTTP+SSE (2024-11-05) session, handed to a test: a
:class:`~trio_mcp.Server` whose sessions the test serves itself, so that ``check_transport``
can drive the session's own message stream against an HTTP client stream."""

from __future__ import annotations

import math
from typing import Any

import trio

from trio_mcp import Server, jsonrpc as rpc
from trio_mcp.transports import MessageStream


class HandedOver(MessageStream):
    """The server's end of one HTTP+SSE session, handed to the test (in the worker holding
    it): closing it ends the session, as the server ending it would."""

    def __init__(self, inner: MessageStream) -> None:
        self.inner = inner
        self.closed = trio.Event()

    async def send(self, message: rpc.Message, *, related: Any = None) -> None:
        await self.inner.send(message, related=related)

    async def receive(self) -> Any:
        return await self.inner.receive()

    async def aclose(self) -> None:
        self.closed.set()
        await self.inner.aclose()


class ServedByTheTest(Server):
    """A server whose sessions are served by the test: each session's stream goes to
    ``streams``."""

    def __init__(self) -> None:
        super().__init__("spread")
        self.found, self.streams = trio.open_memory_channel[HandedOver](math.inf)

    async def serve(  # type: ignore[override]
        self, stream: MessageStream, *, task_status: Any = trio.TASK_STATUS_IGNORED, **_: Any
    ) -> None:
        handed = HandedOver(stream)
        self.found.send_nowait(handed)
        task_status.started(None)
        await handed.closed.wait()  # then the session ends: its SSE stream closes
