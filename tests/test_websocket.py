"""MCP over WebSocket: the transport passes check_transport, and a Client talks to a Server."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

import pytest
import trio
import trio_websocket
from http_support import make_server

from trio_mcp.testing import check_transport
from trio_mcp.transports import MessageStream
from trio_mcp.websocket import (
    SUBPROTOCOL,
    WebSocketStream,
    open_websocket_client,
    serve_websocket,
    websocket_stream,
)


def shrink_buffers(connection: trio_websocket.WebSocketConnection) -> None:
    """Small fixed socket buffers, so that a peer that does not read stalls the sender at
    once (kernel autotuning would otherwise let megabytes through, slowly)."""
    sock = connection._stream.socket  # type: ignore[attr-defined]
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 16384)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)


@asynccontextmanager
async def pair(clogged: bool = False) -> AsyncIterator[tuple[MessageStream, MessageStream]]:
    """Two WebSocketStreams joined over a real localhost connection."""
    accepted: trio.MemorySendChannel[WebSocketStream]
    accepted, incoming = trio.open_memory_channel[WebSocketStream](1)
    done = trio.Event()

    async def handler(request: trio_websocket.WebSocketRequest) -> None:
        connection = await request.accept(subprotocol=SUBPROTOCOL)
        if clogged:
            shrink_buffers(connection)
        async with websocket_stream(connection) as stream:
            await accepted.send(stream)
            await done.wait()

    async with trio.open_nursery() as nursery:
        server = await nursery.start(
            partial(trio_websocket.serve_websocket, handler, "127.0.0.1", 0, None)
        )
        async with (
            trio_websocket.open_websocket(
                "127.0.0.1", server.port, "/", use_ssl=False, subprotocols=[SUBPROTOCOL]
            ) as connection,
            websocket_stream(connection) as client,
        ):
            ours = await incoming.receive()
            try:
                yield client, ours
            finally:
                done.set()
        nursery.cancel_scope.cancel()


async def test_the_websocket_stream_passes_check_transport() -> None:
    await check_transport(pair, partial(pair, clogged=True))


async def test_a_client_and_server_over_websocket() -> None:
    server, _ = make_server()
    async with trio.open_nursery() as nursery:
        port = await nursery.start(partial(serve_websocket, server, port=0))
        for version in ("2026-07-28", "2025-11-25", None):
            async with open_websocket_client(
                f"ws://127.0.0.1:{port}/", protocol_version=version
            ) as client:
                result = await client.call_tool("echo", {"text": "over ws"})
                assert result.content[0].text == "over ws"
        nursery.cancel_scope.cancel()


async def test_the_subprotocol_and_origin_are_checked() -> None:
    server, _ = make_server()
    async with trio.open_nursery() as nursery:
        port = await nursery.start(partial(serve_websocket, server, port=0))
        with pytest.raises(trio_websocket.ConnectionRejected) as rejected:
            async with trio_websocket.open_websocket("127.0.0.1", port, "/", use_ssl=False):
                pass
        assert rejected.value.status_code == 400
        with pytest.raises(trio_websocket.ConnectionRejected) as rejected:
            async with trio_websocket.open_websocket(
                "127.0.0.1",
                port,
                "/",
                use_ssl=False,
                subprotocols=[SUBPROTOCOL],
                extra_headers=[(b"Origin", b"http://evil.example.com")],
            ):
                pass
        assert rejected.value.status_code == 403
        nursery.cancel_scope.cancel()
