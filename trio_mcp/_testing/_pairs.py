"""Two sessions joined in memory: the harness most tests start from."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import attrs
import trio
import trio.lowlevel

from .._protocol._connection import Connection
from .._protocol._lifecycle import Phase
from .._session._engine import Session, connect_session
from .._session._options import SessionOptions
from .._transports._memory import memory_stream_pair
from .._types._base import Implementation
from .._types._capabilities import ClientCapabilities, ServerCapabilities
from .._util import open_nursery_unwrapped


@attrs.frozen
class SessionPair:
    client: Session
    server: Session


@asynccontextmanager
async def memory_session_pair(
    *,
    client_capabilities: ClientCapabilities | None = None,
    server_capabilities: ServerCapabilities | None = None,
    client_options: SessionOptions | None = None,
    server_options: SessionOptions | None = None,
    buffer: int = 64,
    initialize: bool = True,
    modern: bool = False,
) -> AsyncIterator[SessionPair]:
    """A client session and a server session over in-memory streams.

    With ``initialize`` the legacy handshake is done before the block starts;
    with ``modern`` the client speaks the latest modern revision instead.
    ``buffer=0`` gives the lockstep variant, where every send waits for the
    peer to receive. ``client_options`` and ``server_options`` go to each
    side's :func:`~trio_mcp.session.connect_session`
    (:class:`~trio_mcp.session.SessionOptions`: its handlers and settings).
    """
    client_stream, server_stream = memory_stream_pair(buffer)
    client_conn = Connection(
        "client",
        info=Implementation(name="test-client", version="0"),
        capabilities=client_capabilities or ClientCapabilities(),
    )
    server_conn = Connection(
        "server",
        info=Implementation(name="test-server", version="0"),
        capabilities=server_capabilities or ServerCapabilities(),
    )
    async with open_nursery_unwrapped() as nursery:
        server = await connect_session(
            nursery, server_stream, server_conn, **(server_options or {})
        )
        client = await connect_session(
            nursery, client_stream, client_conn, **(client_options or {})
        )
        try:
            if modern:
                client_conn.use_modern(client_conn.modern_versions[0])
            elif initialize:
                pending, message = client_conn.initialize_request()
                async with client.track(pending, message) as call:
                    answer = await call.answer()
                _, note = client_conn.complete_initialize(answer)
                await client.send_message(note)
                while server_conn.phase is not Phase.OPERATING:
                    # let the server take notifications/initialized
                    await trio.lowlevel.checkpoint()
            yield SessionPair(client, server)
        finally:
            await client.aclose()
            await server.aclose()
