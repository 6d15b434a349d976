"""An in-memory bridge between trio_mcp and the official Python SDK (``mcp``), in one process.

The two libraries meet on the wire: JSON-RPC messages as bytes.

* trio_mcp's side of a connection is a :class:`~trio_mcp.transports.MemoryMessageStream`,
  which carries each message as bytes over a pair of trio memory channels.
* The SDK's side is a pair ``(read_stream, write_stream)`` of anyio memory streams of
  ``mcp.shared.message.SessionMessage``. ``read_stream`` may also carry ``Exception``
  items, which is how the SDK expects to hear of a frame it cannot parse. Any async
  context manager yielding such a pair is an SDK client ``Transport``, and the same pair
  is what an SDK server's ``run(read, write, options)`` takes.

:func:`sdk_streams` joins the two. Two tasks pump messages across: the SDK's
``SessionMessage`` goes out as ``model_dump_json(by_alias=True, exclude_unset=True)``
(what the SDK's own stdio transport writes), and bytes come in through
``jsonrpc_message_adapter.validate_json``. Each message is also recorded, parsed as
JSON, in a :class:`Wire`, so a test can assert on what really crossed, for instance
that a cancelled request was never answered. Closing one side is EOF to the other.

The SDK runs under Trio (anyio's Trio backend), so everything shares one event loop
and one nursery tree. Two entry points cover the two directions:

* :func:`serve_ours` runs our :class:`~trio_mcp.Server` and yields a :class:`Bridge`.
  Its :meth:`~Bridge.transport` is what you hand to ``mcp.Client``.
* :func:`serve_sdk` runs an SDK server and yields a :class:`Bridge` whose
  :attr:`~Bridge.stream` is what you hand to :func:`trio_mcp.open_client`.

Never hand the SDK a server object directly (``mcp.Client(server)``). In modern mode
that path calls the server without JSON-RPC at all, so it proves nothing about the wire.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import attrs
import trio
from anyio.abc import ObjectReceiveStream, ObjectSendStream
from mcp.shared.message import SessionMessage
from mcp_types import jsonrpc_message_adapter
from pydantic import ValidationError

from trio_mcp import Server
from trio_mcp.transports import MemoryMessageStream

__all__ = [
    "Bridge",
    "SdkReadStream",
    "SdkWriteStream",
    "Wire",
    "sdk_streams",
    "serve_ours",
    "serve_sdk",
]

#: How many messages wait in each direction (and in each of the SDK's anyio streams).
BUFFER = 64

#: The two halves of an SDK connection, as the SDK's sessions and servers take them.
SdkReadStream = ObjectReceiveStream[SessionMessage | Exception]
SdkWriteStream = ObjectSendStream[SessionMessage]
#: Runs an SDK server over ``(read, write)`` until its input ends.
SdkServe = Callable[[SdkReadStream, SdkWriteStream], Awaitable[None]]


@attrs.define
class Wire:
    """Every message that crossed the bridge, as parsed JSON, in order, by direction."""

    #: What the SDK side sent (its client's requests, or its server's answers).
    from_sdk: list[dict[str, Any]] = attrs.Factory(list)
    #: What trio_mcp's side sent.
    from_ours: list[dict[str, Any]] = attrs.Factory(list)

    @staticmethod
    def _pick(messages: list[dict[str, Any]], method: str | None) -> list[dict[str, Any]]:
        return [m for m in messages if "method" in m and (method is None or m["method"] == method)]

    def requests_from_sdk(self, method: str | None = None) -> list[dict[str, Any]]:
        """The SDK's requests and notifications (of ``method``, if given)."""
        return self._pick(self.from_sdk, method)

    def requests_from_ours(self, method: str | None = None) -> list[dict[str, Any]]:
        """Our requests and notifications (of ``method``, if given)."""
        return self._pick(self.from_ours, method)

    def answers_from_sdk(self, request_id: Any) -> list[dict[str, Any]]:
        """The SDK's responses (results or errors) to the request ``request_id``."""
        return [m for m in self.from_sdk if "method" not in m and m.get("id") == request_id]

    def answers_from_ours(self, request_id: Any) -> list[dict[str, Any]]:
        """Our responses (results or errors) to the request ``request_id``."""
        return [m for m in self.from_ours if "method" not in m and m.get("id") == request_id]


@asynccontextmanager
async def sdk_streams(
    to_peer: trio.MemorySendChannel[bytes],
    from_peer: trio.MemoryReceiveChannel[bytes],
    wire: Wire,
) -> AsyncIterator[tuple[SdkReadStream, SdkWriteStream]]:
    """The SDK's ``(read_stream, write_stream)`` for a peer that speaks bytes over trio
    channels. Messages are recorded in ``wire`` as they pass.

    Resource handling: the two pumping tasks run in a nursery of this block; leaving
    it stops them and closes ``to_peer`` (EOF for the peer)."""
    read_send, read_receive = anyio.create_memory_object_stream[SessionMessage | Exception](BUFFER)
    write_send, write_receive = anyio.create_memory_object_stream[SessionMessage](BUFFER)

    async def outbound() -> None:  # SDK -> peer
        async with write_receive, to_peer:
            async for item in write_receive:
                data = item.message.model_dump_json(by_alias=True, exclude_unset=True)
                wire.from_sdk.append(json.loads(data))
                try:
                    await to_peer.send(data.encode())
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    return

    async def inbound() -> None:  # peer -> SDK; the peer closing its channel is EOF
        async with read_send:
            async for data in from_peer:
                wire.from_ours.append(json.loads(data))
                item: SessionMessage | Exception
                try:
                    item = SessionMessage(
                        jsonrpc_message_adapter.validate_json(data, by_name=False)
                    )
                except ValidationError as exc:
                    item = exc
                try:
                    await read_send.send(item)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    return

    async with trio.open_nursery() as nursery:
        nursery.start_soon(outbound)
        nursery.start_soon(inbound)
        try:
            yield read_receive, write_send
        finally:
            nursery.cancel_scope.cancel()


@attrs.define
class Bridge:
    """One connection across the bridge.

    Attributes:
        wire: what crossed, in each direction.
        stream: trio_mcp's end (for :func:`serve_sdk`: give it to our client).
    """

    wire: Wire
    stream: MemoryMessageStream
    _sdk_send: trio.MemorySendChannel[bytes]
    _sdk_receive: trio.MemoryReceiveChannel[bytes]
    _used: bool = False

    def transport(self) -> Any:
        """An SDK client ``Transport`` over this connection (for ``mcp.Client``); usable once."""
        assert not self._used, "one SDK client per bridge"
        self._used = True
        return sdk_streams(self._sdk_send, self._sdk_receive, self.wire)


def _bridge() -> Bridge:
    sdk_send, ours_receive = trio.open_memory_channel[bytes](BUFFER)
    ours_send, sdk_receive = trio.open_memory_channel[bytes](BUFFER)
    return Bridge(Wire(), MemoryMessageStream(ours_send, ours_receive), sdk_send, sdk_receive)


@asynccontextmanager
async def serve_ours(server: Server, **serve_options: Any) -> AsyncIterator[Bridge]:
    """Serve ``server`` (trio_mcp's) for the block; connect an SDK client with
    ``mcp.Client(bridge.transport(), ...)``.

    Resource handling: the server runs in a nursery of this block and is cancelled
    when the block ends."""
    bridge = _bridge()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(lambda: server.serve(bridge.stream, **serve_options))
        try:
            yield bridge
        finally:
            nursery.cancel_scope.cancel()


@asynccontextmanager
async def serve_sdk(serve: SdkServe) -> AsyncIterator[Bridge]:
    """Run an SDK server (``await serve(read, write)``, for instance
    ``lambda r, w: server.run(r, w, server.create_initialization_options())``) for the
    block; connect our client with ``open_client(bridge.stream, ...)``.

    Resource handling: the server runs in a nursery of this block and is cancelled
    when the block ends (so closing our client first is enough for a clean end, and
    nothing waits for the SDK's own shutdown grace)."""
    bridge = _bridge()

    async def run() -> None:
        async with sdk_streams(bridge._sdk_send, bridge._sdk_receive, bridge.wire) as (read, write):
            await serve(read, write)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(run)
        try:
            yield bridge
        finally:
            nursery.cancel_scope.cancel()
