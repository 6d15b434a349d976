"""MCP over WebSocket (trio-websocket): one JSON-RPC message per text frame, subprotocol
``mcp``.

Resource handling
-----------------

A :class:`WebSocketStream` writes through a task of its own, so a send that
is cancelled either handed its message over whole or not at all (a frame cut
in half would break the connection); :func:`websocket_stream` owns that task
for its block. :func:`open_websocket_client` owns a connection and a client;
:func:`connect_websocket_client` puts both in your nursery.
:func:`serve_websocket` runs each connection's session in a task of the
server's, until the connection or the server ends.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from functools import partial
from typing import TYPE_CHECKING, Any, Final

import attrs
import trio
import trio_websocket

from . import _jsonrpc as rpc
from ._client._client import Client, connect_client
from ._http._security import HostPolicy, is_loopback
from ._transports._stream import MessageStream, Received
from ._types._base import RequestId
from ._util import open_nursery_unwrapped

if TYPE_CHECKING:
    from ._server._server import Server

__all__ = [
    "SUBPROTOCOL",
    "WebSocketStream",
    "connect_websocket_client",
    "open_websocket_client",
    "serve_websocket",
    "websocket_stream",
]

log = logging.getLogger("trio_mcp.websocket")

#: The WebSocket subprotocol of MCP.
SUBPROTOCOL: Final = "mcp"
#: The largest message taken by default (bytes of UTF-8 text).
MAX_MESSAGE_SIZE: Final = 4 * 1024 * 1024
_NORMAL_CLOSURES = (1000, 1001)


class WebSocketStream(MessageStream):
    """A :class:`~trio_mcp.transports.MessageStream` over a trio-websocket connection.

    Create it with :func:`websocket_stream`. ``send`` blocks until the writer task
    takes the message (backpressure: it writes one message at a time, and blocks while
    the peer does not read). The peer's normal close is the end of the stream; an
    abnormal one is :exc:`trio.BrokenResourceError`.
    """

    def __init__(self, connection: trio_websocket.WebSocketConnection) -> None:
        self.connection = connection
        self._outgoing, self._to_write = trio.open_memory_channel[bytes](0)
        self._written = trio.Event()
        self._closed = False

    async def _write_loop(self) -> None:
        try:
            async for data in self._to_write:
                await self.connection.send_message(data.decode("utf-8"))
        except trio_websocket.ConnectionClosed:
            pass
        finally:
            self._to_write.close()
            self._written.set()

    async def send(self, message: rpc.Message, *, related: RequestId | None = None) -> None:
        if self._closed:
            await trio.lowlevel.checkpoint()
            raise trio.ClosedResourceError("the stream is closed")
        try:
            await self._outgoing.send(rpc.dumps(message))
        except trio.BrokenResourceError:
            raise trio.BrokenResourceError("the WebSocket connection is closed") from None

    async def receive(self) -> Received:
        if self._closed:
            await trio.lowlevel.checkpoint()
            raise trio.ClosedResourceError("the stream is closed")
        try:
            data = await self.connection.get_message()
        except trio_websocket.ConnectionClosed as exc:
            if self._closed:
                raise trio.ClosedResourceError("the stream is closed") from None
            reason = exc.reason
            if reason is None or reason.code in _NORMAL_CLOSURES:
                raise trio.EndOfChannel from None
            raise trio.BrokenResourceError(f"the WebSocket closed: {reason}") from None
        return rpc.parse(data)

    async def aclose(self, *, flush_timeout: float = 2.0, close_timeout: float = 1.0) -> None:
        """Send what was handed over (for up to ``flush_timeout`` seconds), then close the
        connection, waiting up to ``close_timeout`` seconds for the peer to confirm (a
        peer that is not reading never does). Idempotent; closes even when cancelled."""
        if self._closed:
            await trio.lowlevel.checkpoint()
            return
        self._closed = True
        self._outgoing.close()
        with trio.CancelScope(shield=True):
            with trio.move_on_after(flush_timeout):
                await self._written.wait()
            with trio.move_on_after(close_timeout):
                await self.connection.aclose()
            # (cancelled, trio-websocket closes the TCP stream without the handshake)


@asynccontextmanager
async def websocket_stream(
    connection: trio_websocket.WebSocketConnection,
) -> AsyncIterator[WebSocketStream]:
    """A :class:`WebSocketStream` over ``connection`` for the block (which owns its writer
    task). Leaving closes the stream and the connection."""
    stream = WebSocketStream(connection)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(stream._write_loop)
        try:
            yield stream
        finally:
            await stream.aclose()


async def serve_websocket(
    server: Server,
    host: str = "127.0.0.1",
    port: int = 8765,
    *,
    host_policy: HostPolicy | None = None,
    max_message_size: int = MAX_MESSAGE_SIZE,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
    **session_options: Any,
) -> None:
    """Serve ``server`` over WebSocket on ``host:port`` until cancelled.

    ``task_status.started()`` reports the bound port (``port=0`` picks one). Clients
    must offer the ``mcp`` subprotocol; connections whose ``Host``/``Origin`` the
    ``host_policy`` refuses get 403 (by default, for a local bind, only the local
    machine's names). ``session_options`` go to :meth:`Server.serve`.

    Resource handling: each connection's session runs in a task of this call; a
    connection ends with its session, and cancelling this call ends them all. Calls that
    became tasks run in one task nursery of this call, shared by every connection, so a
    task outlives the connection that created it (but not this call).
    """
    if host_policy is None:
        host_policy = HostPolicy.loopback() if is_loopback(host) else HostPolicy.off()
    # Browsers always send Origin on a WebSocket handshake, which is what rebinding
    # attacks need; trio-websocket does not show us the Host header, so Origin it is.
    origin_policy = attrs.evolve(host_policy, allowed_hosts=None)

    async def handle(request: trio_websocket.WebSocketRequest) -> None:
        headers = {
            name.decode("latin-1").lower(): value.decode("latin-1")
            for name, value in request.headers
        }
        refusal = origin_policy.refusal(headers)
        if refusal is not None:
            log.warning("refused a WebSocket connection: %s", refusal)
            await request.reject(403, body=refusal.encode())
            return
        if SUBPROTOCOL not in request.proposed_subprotocols:
            await request.reject(400, body=b"the 'mcp' subprotocol is required")
            return
        connection = await request.accept(subprotocol=SUBPROTOCOL)
        async with websocket_stream(connection) as stream:
            await server.serve(stream, task_runner=tasks, **session_options)

    # One task nursery (and store) for every connection: a task outlives its connection.
    async with server.running_tasks() as tasks, trio.open_nursery() as nursery:
        listening: trio_websocket.WebSocketServer = await nursery.start(
            partial(
                trio_websocket.serve_websocket,
                handle,
                host,
                port,
                None,
                max_message_size=max_message_size,
            )
        )
        task_status.started(listening.port)


async def connect_websocket_client(
    nursery: trio.Nursery,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    max_message_size: int = MAX_MESSAGE_SIZE,
    **client_options: Any,
) -> Client:
    """A connected :class:`~trio_mcp.Client` over a WebSocket to ``url``, whose tasks run in
    ``nursery`` (yours). Close it with :meth:`Client.aclose`.

    ``client_options`` are :func:`~trio_mcp.client.connect_client`'s.

    Raises:
        trio_websocket.HandshakeError: the server refused the connection.
        ConnectionError: the server did not accept the ``mcp`` subprotocol.
    """
    extra = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in (headers or {}).items()]
    connection = await trio_websocket.connect_websocket_url(
        nursery,
        url,
        subprotocols=[SUBPROTOCOL],
        extra_headers=extra,
        max_message_size=max_message_size,
    )
    if connection.subprotocol != SUBPROTOCOL:
        await connection.aclose()
        raise ConnectionError(f"{url} did not accept the {SUBPROTOCOL!r} subprotocol")
    stream = WebSocketStream(connection)
    nursery.start_soon(stream._write_loop)
    try:
        return await connect_client(nursery, stream, **client_options)
    except BaseException:
        await stream.aclose()
        raise


@asynccontextmanager
async def open_websocket_client(url: str, **options: Any) -> AsyncIterator[Client]:
    """A :class:`~trio_mcp.Client` connected over a WebSocket to ``url`` for the block.

    Entering blocks through the connection and the MCP opening; leaving closes both.
    Options are :func:`connect_websocket_client`'s.
    """
    async with open_nursery_unwrapped() as nursery:
        client = await connect_websocket_client(nursery, url, **options)
        try:
            yield client
        finally:
            await client.aclose()
            nursery.cancel_scope.cancel()
