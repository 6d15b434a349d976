"""Opening a client to one configured server, whichever way it is reached."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from functools import partial
from typing import Any, Unpack

from .._client._client import Client, connect_client
from .._client._options import ClientOptions
from .._client._stdio import open_stdio_client
from .._transports._memory import memory_stream_pair
from .._util import open_nursery_unwrapped
from . import _lazy
from ._config import InProcessServerConfig, ServerConfig, StdioServerConfig

__all__ = ["open_server"]


def open_server(
    config: ServerConfig, client_options: Mapping[str, Any]
) -> AbstractAsyncContextManager[Client]:
    """A client to the server ``config`` describes, for the duration of the block.

    Entering starts the process, connects, or starts serving in memory, then opens
    the client (handshake included); leaving closes it (for a stdio server, the
    shielded shutdown ladder).
    """
    if isinstance(config, StdioServerConfig):
        return open_stdio_client(
            config.command,
            env=config.env,
            cwd=config.cwd,
            grace=config.grace,
            stderr_rate=config.stderr_rate,
            **client_options,
        )
    if isinstance(config, InProcessServerConfig):
        return _open_in_process(config, **client_options)

    return _lazy.open_http_client(config.url, headers=config.headers, **client_options)


@asynccontextmanager
async def _open_in_process(
    config: InProcessServerConfig, **client_options: Unpack[ClientOptions]
) -> AsyncIterator[Client]:
    """Serve ``config.server`` over a memory stream pair for the block. Leaving closes the
    client and cancels what the server is still doing for it."""
    client_stream, server_stream = memory_stream_pair(config.buffer)
    async with open_nursery_unwrapped() as nursery:
        nursery.start_soon(
            partial(config.server.serve, server_stream, **(config.server_options or {}))
        )
        try:
            client = await connect_client(nursery, client_stream, **client_options)
        except BaseException:
            nursery.cancel_scope.cancel()
            raise
        try:
            yield client
        finally:
            await client.aclose()
            nursery.cancel_scope.cancel()
