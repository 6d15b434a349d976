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

Limits
------

:func:`serve_websocket` takes at most ``max_connections`` connections at once
(past that, the handshake is refused with 503, ``Retry-After`` and a JSON-RPC
error body), closes a connection idle for ``idle_timeout`` seconds (no message
either way and no request running, either way: close code 1001), and closes one
whose peer sends a message over ``max_message_size`` (close code 1009). With ``auth``,
a connection also ends when its handshake's access token expires (close code 1008; see
:mod:`._websocket_auth`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from functools import partial
from typing import TYPE_CHECKING, Final, Unpack

import attrs
import trio
import trio_websocket

from . import _jsonrpc as rpc
from ._client._client import Client, connect_client
from ._client._options import ClientOptions
from ._errors import ErrorCode
from ._fleet._running import running_fleet, task_store_url
from ._fleet._state import RedisState
from ._http.server._exchange import error_body
from ._http.server._security import OriginPolicy, is_loopback
from ._session._options import SessionSettings
from ._transports._stream import MessageStream, Received
from ._types._base import RequestId
from ._util import open_nursery_unwrapped
from ._websocket_auth import AuthorizedStream, admit_handshake, authorized_handshake

if TYPE_CHECKING:
    import httpx

    from ._auth._resource_server import ProtectedResource
    from ._server._server import Server
    from ._server._tasks import TaskRunner
    from ._session._engine import Session

__all__ = [
    "SUBPROTOCOL",
    "WebSocketClientOptions",
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
#: The most connections :func:`serve_websocket` takes at once by default.
MAX_CONNECTIONS: Final = 1_000
#: Seconds of silence (and nothing running) after which :func:`serve_websocket` closes
#: a connection, by default.
IDLE_TIMEOUT: Final = 600.0
#: Seconds a client refused for want of a connection slot is told to wait.
CONNECTIONS_RETRY_AFTER: Final = 5
#: The close code of a connection closed for idleness ("going away").
IDLE_CLOSE_CODE: Final = 1001
_NORMAL_CLOSURES = (1000, 1001)


class WebSocketStream(MessageStream):
    """A :class:`~trio_mcp.transports.MessageStream` over a trio-websocket connection.

    Create it with :func:`websocket_stream`. ``send`` blocks until the writer task
    takes the message (backpressure: it writes one message at a time, and blocks while
    the peer does not read). The peer's normal close is the end of the stream; an
    abnormal one is :exc:`trio.BrokenResourceError`.

    With an ``idle_timeout``, ``receive`` ends the stream (as the peer's close would) once
    no message went either way for that many seconds while ``busy()`` says nothing is
    running; the connection is then closed with code 1001 ("going away").
    """

    def __init__(
        self,
        connection: trio_websocket.WebSocketConnection,
        *,
        idle_timeout: float = math.inf,
    ) -> None:
        self.connection = connection
        self._outgoing, self._to_write = trio.open_memory_channel[bytes](0)
        self._written = trio.Event()
        self._closed = False
        self.idle_timeout = idle_timeout
        #: Whether work is under way that keeps the connection from being idle.
        self.busy: Callable[[], bool] = _never
        #: Trio time of the last message either way.
        self.last_activity = trio.current_time()
        self._close_code = 1000
        self._close_reason: str | None = None

    def close_with(self, code: int, reason: str | None = None) -> None:
        """The close code (and reason) :meth:`aclose` sends (by default 1000)."""
        self._close_code, self._close_reason = code, reason

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
        self.last_activity = trio.current_time()

    async def receive(self) -> Received:
        if self._closed:
            await trio.lowlevel.checkpoint()
            raise trio.ClosedResourceError("the stream is closed")
        try:
            if self.idle_timeout == math.inf:
                data = await self.connection.get_message()
            else:
                data = await self._get_message_unless_idle()
        except trio_websocket.ConnectionClosed as exc:
            if self._closed:
                raise trio.ClosedResourceError("the stream is closed") from None
            reason = exc.reason
            if reason is None or reason.code in _NORMAL_CLOSURES:
                raise trio.EndOfChannel from None
            raise trio.BrokenResourceError(f"the WebSocket closed: {reason}") from None
        self.last_activity = trio.current_time()
        return rpc.parse(data)

    async def _get_message_unless_idle(self) -> str | bytes:
        """The next message; raises :exc:`trio.EndOfChannel` once idle (see the class)."""
        while True:
            with trio.move_on_at(self.last_activity + self.idle_timeout):
                return await self.connection.get_message()  # (cancellable without loss)
            if trio.current_time() < self.last_activity + self.idle_timeout:
                continue  # a message went out meanwhile
            if self.busy():
                self.last_activity = trio.current_time()
                continue
            log.debug("closing a WebSocket connection idle for %s s", self.idle_timeout)
            self._close_code, self._close_reason = IDLE_CLOSE_CODE, "idle timeout"
            raise trio.EndOfChannel

    async def aclose(self, *, flush_timeout: float = 2.0, close_timeout: float = 1.0) -> None:
        """Send what was handed over (for up to ``flush_timeout`` seconds), then close the
        connection, waiting up to ``close_timeout`` seconds for the peer to confirm (a
        peer that is not reading never does). Idempotent; closes even when cancelled."""
        if self._closed:
            await trio.lowlevel.checkpoint()
            return
        self._closed = True
        self._outgoing.close()
        # Shielded, and bounded from inside: each step has its deadline.
        with trio.CancelScope(shield=True):
            with trio.move_on_after(flush_timeout):
                await self._written.wait()
            with trio.move_on_after(close_timeout):
                await self.connection.aclose(self._close_code, self._close_reason)
            # (cancelled, trio-websocket closes the TCP stream without the handshake)


def _never() -> bool:
    return False


@asynccontextmanager
async def websocket_stream(
    connection: trio_websocket.WebSocketConnection, *, idle_timeout: float = math.inf
) -> AsyncIterator[WebSocketStream]:
    """A :class:`WebSocketStream` over ``connection`` for the block (which owns its writer
    task). Leaving closes the stream and the connection. ``idle_timeout``: see
    :class:`WebSocketStream` (by default, never)."""
    stream = WebSocketStream(connection, idle_timeout=idle_timeout)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(stream._write_loop)
        try:
            yield stream
        finally:
            await stream.aclose()


class _ConnectionHandler:
    """Serves each accepted WebSocket connection of :func:`serve_websocket` (which
    documents the arguments), and counts them."""

    def __init__(
        self,
        server: Server,
        *,
        origin_policy: OriginPolicy,
        max_connections: int,
        idle_timeout: float,
        session_options: SessionSettings,
        auth: ProtectedResource | None = None,
    ) -> None:
        if max_connections < 1:
            raise ValueError(f"max_connections must be at least 1, not {max_connections!r}")
        if not idle_timeout > 0:
            raise ValueError(f"idle_timeout must be positive, not {idle_timeout!r}")
        self.server = server
        # Browsers always send Origin on a WebSocket handshake, which is what rebinding
        # attacks need; trio-websocket does not show us the Host header, so Origin it is.
        self.origin_policy = attrs.evolve(origin_policy, allowed_hosts=None)
        self.max_connections = max_connections
        self.idle_timeout = idle_timeout
        self.session_options = session_options
        self.auth = auth
        #: Where calls that become tasks run (set while :func:`serve_websocket` serves).
        self.task_runner: TaskRunner | None = None
        #: Connections being served now.
        self.active = 0

    async def __call__(self, request: trio_websocket.WebSocketRequest) -> None:
        headers = {
            name.decode("latin-1").lower(): value.decode("latin-1")
            for name, value in request.headers
        }
        refusal = self.origin_policy.refusal(headers)
        if refusal is not None:
            log.warning("refused a WebSocket connection: %s", refusal)
            await request.reject(403, body=refusal.encode())
            return
        if SUBPROTOCOL not in request.proposed_subprotocols:
            await request.reject(400, body=b"the 'mcp' subprotocol is required")
            return
        if self.active >= self.max_connections:
            message = (
                f"Service Unavailable: at most {self.max_connections} connections; try again later"
            )
            await request.reject(
                503,
                extra_headers=[
                    (b"retry-after", b"%d" % CONNECTIONS_RETRY_AFTER),
                    (b"content-type", b"application/json"),
                ],
                body=error_body(None, ErrorCode.INTERNAL_ERROR, message),
            )
            return
        self.active += 1
        try:
            auth, token = self.auth, None
            if auth is not None:
                token = await admit_handshake(auth, request)
                if token is None:
                    return  # refused, with the HTTP transport's answer
            connection = await request.accept(subprotocol=SUBPROTOCOL)
            async with (
                websocket_stream(connection, idle_timeout=self.idle_timeout) as stream,
                trio.open_nursery() as nursery,
            ):
                served: MessageStream = stream
                if auth is not None and token is not None:
                    served = AuthorizedStream(
                        stream,
                        close_with=stream.close_with,
                        auth=auth,
                        token=token,
                        server=self.server,
                    )
                    nursery.cancel_scope.deadline = served.deadline  # the token's expiry
                session: Session = await nursery.start(
                    partial(
                        self.server.serve,
                        served,
                        principal=None if token is None else token.subject,
                        task_runner=self.task_runner,
                        **self.session_options,
                    )
                )
                protocol = session.connection
                stream.busy = lambda: protocol.in_flight > 0 or protocol.outstanding > 0
        except Exception:
            # Our bug, not the peer's: this connection ends (its nursery closed it), and the
            # error stops here. Raised on, it would end trio-websocket's server and with it
            # every other connection.
            log.exception("a WebSocket connection failed")
        finally:
            self.active -= 1


async def serve_websocket(
    server: Server,
    host: str = "127.0.0.1",
    port: int = 8765,
    *,
    origin_policy: OriginPolicy | None = None,
    max_message_size: int = MAX_MESSAGE_SIZE,
    max_connections: int = MAX_CONNECTIONS,
    idle_timeout: float = IDLE_TIMEOUT,
    auth: ProtectedResource | None = None,
    state: str | RedisState | None = None,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
    **session_options: Unpack[SessionSettings],
) -> None:
    """Serve ``server`` over WebSocket on ``host:port`` until cancelled.

    ``task_status.started()`` reports the bound port (``port=0`` picks one). Clients
    must offer the ``mcp`` subprotocol; connections whose ``Host``/``Origin`` the
    ``origin_policy`` refuses get 403 (by default, for a local bind, only the local
    machine's names). ``session_options`` (:class:`~trio_mcp.session.SessionSettings`) go
    to :meth:`Server.serve`.

    Args:
        max_message_size: the largest message taken, in bytes of UTF-8 text (4 MiB); a
            peer that sends a larger one has its connection closed with code 1009.
        max_connections: the most connections at once (1,000); past that the handshake
            gets 503 with ``Retry-After`` and a JSON-RPC error body.
        idle_timeout: seconds after which a connection with no message either way and
            no request running (either way) is closed with code 1001 (600;
            ``math.inf``: never).
        auth: accept only connections whose handshake carries an access token for this
            resource (:class:`~trio_mcp.auth.ProtectedResource`, whose ``resource`` is the
            ``http(s)`` equivalent of this server's ``ws(s)`` URL). A refused handshake
            gets the HTTP transport's answer (``401`` or ``403`` with
            ``WWW-Authenticate``, ``400`` for a token in the query string, ``503`` when
            the token cannot be checked); the token's subject is the connection's
            principal; a request needing scopes the token lacks gets JSON-RPC error
            -32600 ``"Forbidden: ..."``; at the token's expiry the connection is closed
            with code 1008. The metadata document is not served here (only handshakes
            are): serve it over HTTP (``ProtectedResource(metadata_url=...)``).
        state: the shared state of a fleet of workers (:class:`~trio_mcp.fleet.RedisState`
            or its URL), as for :func:`~trio_mcp.http.asgi_app`: the ``requestState``
            key, change notifications across workers, the task store.

    Resource handling: each connection's session runs in a task of this call; a
    connection ends with its session, and cancelling this call ends them all. Calls that
    became tasks run in one task nursery of this call, shared by every connection, so a
    task outlives the connection that created it (but not this call).
    """
    if origin_policy is None:
        origin_policy = OriginPolicy.loopback() if is_loopback(host) else OriginPolicy.off()
    handle = _ConnectionHandler(
        server,
        origin_policy=origin_policy,
        max_connections=max_connections,
        idle_timeout=idle_timeout,
        session_options=session_options,
        auth=auth,
    )
    # One task nursery (and store) for every connection: a task outlives its connection.
    async with running_fleet(server, state) as fleet:
        default_store = task_store_url(fleet.state) if fleet is not None else None
        async with server.running_tasks(default_store=default_store) as tasks:
            await _serve_connections(handle, tasks, host, port, max_message_size, task_status)


async def _serve_connections(
    handle: _ConnectionHandler,
    tasks: TaskRunner | None,
    host: str,
    port: int,
    max_message_size: int,
    task_status: trio.TaskStatus[int],
) -> None:
    async with trio.open_nursery() as nursery:
        handle.task_runner = tasks
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
    auth: httpx.Auth | None = None,
    **client_options: Unpack[ClientOptions],
) -> Client:
    """A connected :class:`~trio_mcp.Client` over a WebSocket to ``url``, whose tasks run in
    ``nursery`` (yours). Close it with :meth:`Client.aclose`.

    ``headers`` are sent with the opening handshake; ``max_message_size`` is the largest
    message taken from the server.

    ``auth``: an ``httpx.Auth`` flow (:class:`trio_mcp.auth.OAuth`, say) that authorizes
    the handshake, as a ``GET`` of the ``http(s)`` equivalent of ``url``: a handshake the
    server refuses with ``401``/``403`` is the flow's response, so it discovers the
    authorization server, gets a token (DPoP-bound ones with their proof) and tries again.
    The token is checked once, at the handshake: when it expires the server closes the
    connection (code 1008), and a scope the token lacks fails that call (-32600); connect
    again to use a fresh or broader token.

    ``client_options`` are :func:`~trio_mcp.connect_client`'s
    (:class:`~trio_mcp.client.ClientOptions`).

    Raises:
        trio_websocket.HandshakeError: the server refused the connection
            (:exc:`trio_websocket.ConnectionRejected` carries its status and headers).
        ConnectionError: the server did not accept the ``mcp`` subprotocol.
    """
    extra = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in (headers or {}).items()]

    async def connect(sent: list[tuple[bytes, bytes]]) -> trio_websocket.WebSocketConnection:
        connection: trio_websocket.WebSocketConnection = await nursery.start(
            partial(_connection, url, sent, max_message_size)
        )
        return connection

    if auth is None:
        connection = await connect(extra)
    else:
        connection = await authorized_handshake(connect, url, auth, extra)
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


class WebSocketClientOptions(ClientOptions, total=False):
    """The keyword options of :func:`open_websocket_client` and
    :func:`connect_websocket_client`: the connection's and the client's
    (:class:`~trio_mcp.client.ClientOptions`)."""

    headers: Mapping[str, str] | None
    max_message_size: int
    auth: httpx.Auth | None


async def _connection(
    url: str,
    headers: list[tuple[bytes, bytes]],
    max_message_size: int,
    *,
    task_status: trio.TaskStatus[trio_websocket.WebSocketConnection],
) -> None:
    """Open a connection to ``url`` and report it; then run its reader until it closes.

    A refused handshake raises :exc:`trio_websocket.ConnectionRejected` from the reader
    task: its own nursery turns that into this call's exception, raised by
    ``nursery.start`` (so a refusal can be retried), not a crash of the caller's nursery.
    """
    async with open_nursery_unwrapped() as nursery:
        connection = await trio_websocket.connect_websocket_url(
            nursery,
            url,
            subprotocols=[SUBPROTOCOL],
            extra_headers=headers,
            max_message_size=max_message_size,
        )
        task_status.started(connection)


@asynccontextmanager
async def open_websocket_client(
    url: str, **options: Unpack[WebSocketClientOptions]
) -> AsyncIterator[Client]:
    """A :class:`~trio_mcp.Client` connected over a WebSocket to ``url`` for the block.

    Entering blocks through the connection (and ``auth``'s flow: see
    :func:`connect_websocket_client`) and the MCP opening; leaving closes both.
    Options are :func:`connect_websocket_client`'s (:class:`WebSocketClientOptions`).
    """
    async with open_nursery_unwrapped() as nursery:
        client = await connect_websocket_client(nursery, url, **options)
        try:
            yield client
        finally:
            await client.aclose()
            nursery.cancel_scope.cancel()
