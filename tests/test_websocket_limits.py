"""The limits of the WebSocket server: connections at once, idle connections, message size.

The idle timeout runs over in-memory streams on the autojump clock; the others use real
sockets on 127.0.0.1 with bounded waits.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

import pytest
import trio
import trio.testing
import trio_websocket

from trio_mcp import Client, Server, connect_client
from trio_mcp._websocket import IDLE_CLOSE_CODE, _ConnectionHandler
from trio_mcp.http import OriginPolicy
from trio_mcp.websocket import (
    SUBPROTOCOL,
    open_websocket_client,
    serve_websocket,
    websocket_stream,
)

pytestmark = pytest.mark.timeout(30)


def make_server() -> Server:
    server = Server("ws-limits")

    @server.tool()
    async def echo(text: str) -> str:
        return text

    @server.tool()
    async def slow(seconds: float) -> str:
        await trio.sleep(seconds)
        return "done"

    return server


def test_the_limits_have_documented_defaults() -> None:
    import inspect

    defaults = inspect.signature(serve_websocket).parameters
    assert defaults["max_connections"].default == 1_000
    assert defaults["idle_timeout"].default == 600.0
    assert defaults["max_message_size"].default == 4 * 1024 * 1024


async def test_connections_past_the_cap_get_503_with_retry_after() -> None:
    server = make_server()
    url_of = "ws://127.0.0.1:{}/".format
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(partial(serve_websocket, server, port=0, max_connections=2))
            async with open_websocket_client(url_of(port)) as first:
                async with open_websocket_client(url_of(port)) as second:
                    with pytest.raises(trio_websocket.ConnectionRejected) as rejected:
                        async with trio_websocket.open_websocket(
                            "127.0.0.1", port, "/", use_ssl=False, subprotocols=[SUBPROTOCOL]
                        ):
                            pass
                    refusal = rejected.value
                    assert refusal.status_code == 503
                    assert dict(refusal.headers or [])[b"retry-after"] == b"5"
                    body = json.loads(refusal.body or b"")
                    assert body["jsonrpc"] == "2.0" and body["id"] is None
                    assert "at most 2 connections" in body["error"]["message"]
                    # The two accepted go on working.
                    assert (await second.call_tool("echo", {"text": "2"})).content[0].text == "2"  # type: ignore[union-attr]
                # A closed connection frees its place.
                async with open_websocket_client(url_of(port)) as third:
                    assert (await third.call_tool("echo", {"text": "3"})).content[0].text == "3"  # type: ignore[union-attr]
                assert (await first.call_tool("echo", {"text": "1"})).content[0].text == "1"  # type: ignore[union-attr]
            nursery.cancel_scope.cancel()


@asynccontextmanager
async def served_in_memory(
    handler: _ConnectionHandler,
) -> AsyncIterator[tuple[Client, trio_websocket.WebSocketConnection]]:
    """A client connected to ``handler`` over in-memory streams."""
    client_end, server_end = trio.testing.memory_stream_pair()
    async with trio.open_nursery() as nursery:

        async def accept() -> None:
            request = await trio_websocket.wrap_server_stream(nursery, server_end)
            await handler(request)

        nursery.start_soon(accept)
        connection = await trio_websocket.wrap_client_stream(
            nursery,
            client_end,  # type: ignore[arg-type]
            "127.0.0.1",
            "/",
            subprotocols=[SUBPROTOCOL],
        )
        async with websocket_stream(connection) as stream:
            client = await connect_client(nursery, stream, protocol_version="2025-11-25")
            yield client, connection
            await client.aclose()
        nursery.cancel_scope.cancel()


async def test_an_idle_connection_is_closed_but_not_while_a_request_runs(
    autojump_clock: trio.abc.Clock,
) -> None:
    handler = _ConnectionHandler(
        make_server(),
        origin_policy=OriginPolicy.off(),
        max_connections=10,
        idle_timeout=60.0,
        session_options={},
    )
    async with served_in_memory(handler) as (client, connection):
        assert handler.active == 1
        # A call that takes longer than the idle timeout keeps the connection.
        assert (await client.call_tool("slow", {"seconds": 150})).content[0].text == "done"  # type: ignore[union-attr]
        await trio.sleep(59)
        assert (await client.call_tool("echo", {"text": "x"})).content[0].text == "x"  # type: ignore[union-attr]
        assert connection.closed is None
        # Then 60 s of silence: closed with "going away".
        before = trio.current_time()
        with trio.fail_after(120):
            while connection.closed is None:
                await trio.sleep(1)
        assert 59 < trio.current_time() - before <= 62
        assert connection.closed.code == IDLE_CLOSE_CODE
        assert connection.closed.reason == "idle timeout"
    assert handler.active == 0


async def test_a_message_over_the_size_limit_closes_that_connection_only() -> None:
    server = make_server()
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(
                partial(serve_websocket, server, port=0, max_message_size=1000)
            )
            async with trio_websocket.open_websocket(
                "127.0.0.1", port, "/", use_ssl=False, subprotocols=[SUBPROTOCOL]
            ) as connection:
                request = {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "ping",
                    "params": {"padding": "x" * 2000},
                }
                await connection.send_message(json.dumps(request))
                with pytest.raises(trio_websocket.ConnectionClosed) as closed:
                    await connection.get_message()
                assert closed.value.reason.code == 1009  # Message Too Big
            # The server goes on serving messages under the limit.
            async with open_websocket_client(f"ws://127.0.0.1:{port}/") as client:
                result = await client.call_tool("echo", {"text": "y" * 500})
                assert result.content[0].text == "y" * 500  # type: ignore[union-attr]
            nursery.cancel_scope.cancel()
