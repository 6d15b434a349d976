"""``trio_mcp.testing.check_transport`` on the HTTP client stream, where its contract applies.

It applies to the 2024-11-05 HTTP+SSE mode: that transport is a duplex pipe (every client
message is a POST, every server message an event on one stream), so both orientations are
checked against a small server-side peer written here.

It does not apply to Streamable HTTP, and these tests say why rather than pretend:

* modern (2026-07-28): the client sends only requests (no notifications, no responses:
  there are none on that wire), and the server sends only what answers a request, on that
  request's own response; there is no stream for unrelated messages and no end of the
  conversation to report;
* legacy: a server message travels on the response stream of the request it relates to,
  or on the standalone GET stream; messages on different streams have no order between
  them, so the contract's "in the order sent" cannot hold across them.

The Streamable HTTP behaviours are tested one by one in ``test_http_client.py``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
from scripted_http import Reply, ScriptedApp, Seen, serving

from trio_mcp import jsonrpc as rpc
from trio_mcp.http import HttpClientStream, open_http_stream
from trio_mcp.testing import check_transport
from trio_mcp.transports import MessageStream, Received

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


class PeerStream(MessageStream):
    """The server's end of one HTTP+SSE conversation."""

    def __init__(self, buffer: int) -> None:
        self._out_send, self.out_receive = trio.open_memory_channel[bytes](buffer)
        self.in_send, self._in_receive = trio.open_memory_channel[Received](buffer)

    async def send(self, message: rpc.Message, *, related: Any = None) -> None:
        await self._out_send.send(rpc.dumps(message))

    async def send_raw(self, data: bytes) -> None:
        await self._out_send.send(data)

    async def receive(self) -> Received:
        return await self._in_receive.receive()

    async def aclose(self) -> None:
        self._out_send.close()
        self._in_receive.close()
        await trio.lowlevel.checkpoint()


class EventStreamServer:
    """GET /sse opens a conversation (first event: the endpoint); POST /messages feeds it."""

    def __init__(self, buffer: int) -> None:
        self.buffer = buffer
        self.app = ScriptedApp(self.handle)
        self.new_peers, self.peers = trio.open_memory_channel[PeerStream](1)
        self.peer: PeerStream | None = None

    async def handle(self, seen: Seen, reply: Reply) -> None:
        if seen.method == "GET":
            peer = self.peer = PeerStream(self.buffer)
            await reply.sse()
            await reply.event("/messages", event="endpoint")
            await self.new_peers.send(peer)
            async with trio.open_nursery() as nursery:

                async def watch() -> None:
                    await reply.wait_disconnect()
                    peer.in_send.close()  # the client left: the peer's input ends
                    peer.out_receive.close()  # and its sends fail
                    nursery.cancel_scope.cancel()

                nursery.start_soon(watch)
                async for data in peer.out_receive:
                    await reply.raw(b"event: message\ndata: " + data + b"\n\n")
                nursery.cancel_scope.cancel()
            return
        assert self.peer is not None
        message = rpc.parse(seen.body)
        try:
            await self.peer.in_send.send(message)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            await reply.empty(404)
            return
        await reply.empty(202)


@asynccontextmanager
async def http_sse_pair(buffer: int) -> AsyncIterator[tuple[HttpClientStream, PeerStream]]:
    server = EventStreamServer(buffer)
    async with (
        serving(server.app) as base,
        open_http_stream(base + "/sse", transport="sse", buffer=buffer) as client,
    ):
        peer = await server.peers.receive()
        try:
            yield client, peer
        finally:
            await peer.aclose()


def client_first(buffer: int) -> Any:
    return lambda: http_sse_pair(buffer)


def server_first(buffer: int) -> Any:
    @asynccontextmanager
    async def maker() -> AsyncIterator[tuple[MessageStream, MessageStream]]:
        async with http_sse_pair(buffer) as (client, peer):
            yield peer, client

    return maker


async def test_the_http_sse_mode_passes_check_transport_client_first() -> None:
    await check_transport(client_first(16), client_first(0))


async def test_the_http_sse_mode_passes_check_transport_server_first() -> None:
    # (server first, its raw sends check that garbage from the server reaches the client
    # as an InvalidMessage and the stream goes on)
    await check_transport(
        server_first(16),
        server_first(0),
        send_raw=lambda stream, data: stream.send_raw(data),  # type: ignore[attr-defined]
    )
