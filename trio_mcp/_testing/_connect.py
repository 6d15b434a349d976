"""A client connected to a server in memory: the harness for testing servers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Unpack

from .._client._client import Client, connect_client
from .._client._options import ClientOptions
from .._server._server import ServeOptions, Server
from .._transports._memory import memory_stream_pair
from .._util import open_nursery_unwrapped


@asynccontextmanager
async def connect(
    server: Server,
    *,
    buffer: int = 64,
    server_options: ServeOptions | None = None,
    **client_options: Unpack[ClientOptions],
) -> AsyncIterator[Client]:
    """A :class:`~trio_mcp.Client` talking to ``server`` over in-memory streams.

    Client options are :func:`~trio_mcp.connect_client`'s
    (:class:`~trio_mcp.client.ClientOptions`); pass
    ``protocol_version="2026-07-28"`` (or a legacy one) to pick the era, or let
    the client detect it. ``server_options`` go to :meth:`Server.serve`
    (:class:`~trio_mcp.server.ServeOptions`: ``principal`` and the session's settings).
    """
    client_stream, server_stream = memory_stream_pair(buffer)
    async with open_nursery_unwrapped() as nursery:
        nursery.start_soon(lambda: server.serve(server_stream, **(server_options or {})))
        client = await connect_client(nursery, client_stream, **client_options)
        try:
            yield client
        finally:
            await client.aclose()
