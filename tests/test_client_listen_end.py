"""``Client.listen`` ends when the connection does, in both eras.

In the initialize era the iterator used to wait forever after the server died: nothing
there ends with the connection the way the modern era's ``subscriptions/listen``
request does. Both now stop iterating (after the changes that came first) and say why
in ``listener.error``.
"""

from __future__ import annotations

import pytest
import trio

from trio_mcp import ConnectionClosed, Server, connect_client
from trio_mcp.transports import memory_stream_pair

VERSIONS = ["2025-11-25", "2026-07-28"]


def make_server() -> Server:
    server = Server("dies", tools=True, resources=True)

    @server.resource("test://doc")
    async def doc() -> str:
        return "text"

    return server


@pytest.mark.parametrize("version", VERSIONS)
async def test_listen_ends_when_the_server_goes_away(
    version: str, autojump_clock: trio.abc.Clock
) -> None:
    server = make_server()
    client_stream, server_stream = memory_stream_pair()
    async with trio.open_nursery() as nursery:
        server_scope = trio.CancelScope()

        async def run_server() -> None:
            with server_scope:
                await server.serve(server_stream)

        nursery.start_soon(run_server)
        client = await connect_client(nursery, client_stream, protocol_version=version)
        async with client.listen(tools=True, resource_uris=["test://doc"]) as changes:

            async def second() -> str:
                return "2"

            server.add_tool(second)
            server.notify_resource_updated("test://doc")
            with trio.fail_after(5):
                first = await changes.__anext__()
            server_scope.cancel()  # the server goes away: its end of the stream closes
            with trio.fail_after(60):
                rest = [change async for change in changes]
            assert [first, *rest] == [
                type(first)("tools"),
                type(first)("updated", "test://doc"),
            ]
            assert changes.ended
            assert isinstance(changes.error, ConnectionClosed)
        await client.aclose()


@pytest.mark.parametrize("version", VERSIONS)
async def test_listen_ends_when_the_client_closes_its_session(
    version: str, autojump_clock: trio.abc.Clock
) -> None:
    server = make_server()
    # Trio's scheduler picks an order at random, and with some orders the modern era's
    # end marker was queued after the session stopped reading its queue: several rounds
    # catch that.
    for _ in range(8):
        client_stream, server_stream = memory_stream_pair()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(server.serve, server_stream)
            client = await connect_client(nursery, client_stream, protocol_version=version)
            async with client.listen(tools=True) as changes:
                await client.aclose()  # e.g. another task shutting things down
                with trio.fail_after(60):
                    assert [change async for change in changes] == []
                assert isinstance(changes.error, ConnectionClosed)


@pytest.mark.parametrize("version", VERSIONS)
async def test_listen_on_a_closed_connection_raises(
    version: str, autojump_clock: trio.abc.Clock
) -> None:
    server = make_server()
    client_stream, server_stream = memory_stream_pair()
    async with trio.open_nursery() as nursery:
        server_scope = trio.CancelScope()

        async def run_server() -> None:
            with server_scope:
                await server.serve(server_stream)

        nursery.start_soon(run_server)
        client = await connect_client(nursery, client_stream, protocol_version=version)
        server_scope.cancel()
        await client.session.wait_finished()
        with pytest.raises(ConnectionClosed):
            async with client.listen(tools=True):
                pass  # pragma: no cover
        await client.aclose()
