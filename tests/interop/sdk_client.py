"""Opening the official SDK's client at a chosen protocol revision, and recording what its
callbacks receive.

The SDK client picks its era with ``mode=``: ``"auto"`` probes ``server/discover`` and
falls back to ``initialize``, ``"legacy"`` runs the ``initialize`` handshake and always
proposes ``2025-11-25``. The SDK has no option for proposing an older handshake
revision, so :func:`open_sdk_client` patches the one constant that ``initialize()``
reads (``mcp.client.session.LATEST_HANDSHAKE_VERSION``), for the handshake only.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, nullcontext
from typing import Any
from unittest import mock

import attrs
import mcp
import mcp.client.session
import mcp_types as types
import trio
from mcp.client.context import ClientRequestContext

__all__ = ["MODERN", "Inbox", "open_sdk_client"]

MODERN = "2026-07-28"
#: The revision the SDK proposes on its own.
SDK_HANDSHAKE = "2025-11-25"


@asynccontextmanager
async def open_sdk_client(target: Any, version: str, **options: Any) -> AsyncIterator[mcp.Client]:
    """An SDK ``Client`` on ``target`` (a transport, ``StdioServerParameters``, ...) that
    negotiated ``version``: ``mode="auto"`` for the modern revision (so the server must
    answer the SDK's discovery probe), the handshake for the others.

    Raises:
        AssertionError: the server settled on another revision.
    """
    modern = version == MODERN
    patch = (
        nullcontext()
        if modern or version == SDK_HANDSHAKE
        else mock.patch.object(mcp.client.session, "LATEST_HANDSHAKE_VERSION", version)
    )
    with patch:
        client = mcp.Client(target, mode="auto" if modern else "legacy", **options)
        await client.__aenter__()
    try:
        assert client.protocol_version == version
        yield client
    finally:
        await client.__aexit__(None, None, None)


KINDS = ("log", "progress", "notification")


@attrs.define
class Inbox:
    """Callbacks for the SDK client that queue what they receive, and answers for the
    server's questions. Wait for things with :meth:`next` (bounded, no sleeping)."""

    name: str = "Zed"
    roots: tuple[str, ...] = ("file:///work",)
    #: Every call the server's questions made, by kind ("sampling", "elicitation", "roots").
    asked: list[tuple[str, Any]] = attrs.Factory(list)
    #: One queue per kind of thing received: "log", "progress", "notification".
    _queues: dict[str, tuple[trio.MemorySendChannel[Any], trio.MemoryReceiveChannel[Any]]] = (
        attrs.field(init=False, factory=lambda: {k: trio.open_memory_channel(256) for k in KINDS})
    )

    async def next(self, kind: str, *, timeout: float = 5.0) -> Any:
        """The next item of ``kind`` received; fails after ``timeout`` seconds."""
        with trio.fail_after(timeout):
            return await self._queues[kind][1].receive()

    def pending(self, kind: str) -> list[Any]:
        """What of ``kind`` was received but not taken yet (without waiting)."""
        items = []
        while True:
            try:
                items.append(self._queues[kind][1].receive_nowait())
            except trio.WouldBlock:
                return items

    async def _put(self, kind: str, item: Any) -> None:
        await self._queues[kind][0].send(item)

    async def logging(self, params: types.LoggingMessageNotificationParams) -> None:
        await self._put("log", params)

    async def messages(self, message: Any) -> None:
        if not isinstance(message, Exception):
            await self._put("notification", message)

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        await self._put("progress", (progress, total, message))

    async def sampling(
        self, ctx: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        self.asked.append(("sampling", params))
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="a sampled line"),
            model="sdk-test-model",
        )

    async def elicitation(
        self, ctx: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        self.asked.append(("elicitation", params))
        return types.ElicitResult(action="accept", content={"name": self.name})

    async def list_roots(self, ctx: ClientRequestContext) -> types.ListRootsResult:
        self.asked.append(("roots", None))
        return types.ListRootsResult(roots=[types.Root(uri=uri) for uri in self.roots])  # type: ignore[arg-type]

    def callbacks(self) -> dict[str, Any]:
        """Every callback, as ``mcp.Client`` keyword arguments."""
        return {
            "sampling_callback": self.sampling,
            "elicitation_callback": self.elicitation,
            "list_roots_callback": self.list_roots,
            "logging_callback": self.logging,
            "message_handler": self.messages,
        }
