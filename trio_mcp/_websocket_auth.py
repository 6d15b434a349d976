"""OAuth 2.1 over a WebSocket: the server checks the access token of the opening handshake,
the client gets one before it.

Theory of operation
-------------------

The opening handshake is an HTTP ``GET`` (RFC 6455 section 4.1), so the server
authenticates it exactly as the HTTP transport authenticates a request to its MCP
endpoint (:meth:`ProtectedResource.authenticate`), for the URL the client named: the
``http(s)`` equivalent of the ``ws(s)`` URL, that is the resource's origin and the
handshake's path (DPoP proofs name it, with ``htm`` ``GET``). A refusal is the HTTP
answer the HTTP transport sends: the same status, ``WWW-Authenticate`` challenges,
``DPoP-Nonce`` and JSON-RPC error body (:func:`admit_handshake`).

A connection then carries many requests under that one token, so two checks move from
the HTTP request to the connection (:class:`AuthorizedStream`):

- each request of a tool, resource or prompt whose scopes the token lacks is answered,
  before the server sees it, with the JSON-RPC error of the HTTP transport's ``403``
  body: -32600 ``"Forbidden: the token lacks a scope this request needs"``, whose
  ``data`` carries what the HTTP response's status line and header would
  (``{"httpStatus": 403, "wwwAuthenticate": 'Bearer error="insufficient_scope",
  scope="..."...'}``);
- at the token's expiry (``exp``), the connection is closed with code 1008 (policy
  violation) and reason ``"the access token expired"``: whatever runs under it ends, as
  an HTTP request with that token would now be refused. A client connects again with a
  fresh token. A token without ``exp`` keeps its connection.

The client runs any ``httpx.Auth`` flow (:class:`trio_mcp.auth.OAuth` included) over the
handshake (:func:`authorized_handshake`): the flow's request is the handshake's ``GET``
of the ``http(s)`` equivalent URL, a refused handshake is the flow's ``401``/``403``
response (so discovery, the grant, refreshes, DPoP proofs and nonces work as over HTTP),
and an accepted one ends the flow.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit, urlunsplit

import httpx
import trio
import trio_websocket

from . import _jsonrpc as rpc
from ._auth._resource_server import AuthRefusal, ProtectedResource
from ._errors import ErrorCode
from ._http.server._exchange import error_body
from ._transports._stream import MessageStream, Received
from ._types._base import Error, RequestId

if TYPE_CHECKING:
    from ._auth._verifier import AccessToken
    from ._server._server import Server

__all__ = [
    "EXPIRED_CLOSE_CODE",
    "AuthorizedStream",
    "admit_handshake",
    "authorized_handshake",
    "http_equivalent",
]

log = logging.getLogger("trio_mcp.websocket")

#: The close code of a connection whose access token expired (policy violation).
EXPIRED_CLOSE_CODE: Final = 1008
EXPIRED_REASON: Final = "the access token expired"
#: Seconds that closing the client's auth flow may take once the handshake is done or
#: given up, shielded from cancellation (an ``httpx.Auth`` flow may await in its cleanup).
AUTH_FLOW_CLOSE_TIMEOUT: Final = 5.0


def http_equivalent(url: str) -> str:
    """The ``http(s)`` URL of a ``ws(s)`` URL (RFC 6455 section 3: the handshake is a
    request for it); an ``http(s)`` URL as it is.

    Raises:
        ValueError: another scheme.
    """
    parts = urlsplit(url)
    scheme = {"ws": "http", "wss": "https", "http": "http", "https": "https"}.get(
        parts.scheme.lower()
    )
    if scheme is None:
        raise ValueError(f"{url!r} is not a ws:// or wss:// URL")
    return urlunsplit((scheme, parts.netloc, parts.path or "/", parts.query, ""))


# -- the server ---------------------------------------------------------------------------


async def admit_handshake(
    auth: ProtectedResource, request: trio_websocket.WebSocketRequest
) -> AccessToken | None:
    """The verified token of a handshake, or ``None`` once it was rejected with the HTTP
    transport's answer. Blocks while the verifier does."""
    path, _, query = request.path.partition("?")
    try:
        return await auth.authenticate(
            method="GET",
            url=auth.url_for(path),
            headers=request.headers,
            query_string=query.encode("latin-1"),
        )
    except AuthRefusal as refusal:
        log.debug("refused a WebSocket handshake: %s %s", refusal.status, refusal.description)
        await request.reject(
            refusal.status,
            extra_headers=[*refusal.response_headers(), (b"content-type", b"application/json")],
            body=error_body(None, ErrorCode.INVALID_REQUEST, refusal.message()),
        )
        return None


class AuthorizedStream(MessageStream):
    """The messages of a connection authorized by ``token``: requests needing scopes the
    token lacks are answered with the refusal (see the module) instead of being received,
    and closing after the token's expiry closes with code 1008.

    Args:
        stream: the connection's stream.
        close_with: tells ``stream`` the close code and reason its ``aclose`` sends
            (:meth:`WebSocketStream.close_with <trio_mcp.websocket.WebSocketStream.close_with>`).
        auth, token: the resource and the handshake's verified token.
        server: says which scopes each request needs.

    Attributes:
        deadline: the Trio time the token expires (``math.inf`` without ``exp``): serve
            the connection in a cancel scope with this deadline.
    """

    def __init__(
        self,
        stream: MessageStream,
        *,
        close_with: Callable[[int, str], None],
        auth: ProtectedResource,
        token: AccessToken,
        server: Server,
    ) -> None:
        self.stream = stream
        self._close_with = close_with
        self.auth = auth
        self.token = token
        self.server = server
        self.deadline = math.inf
        if token.expires_at is not None:
            self.deadline = trio.current_time() + max(0.0, token.expires_at - time.time())

    async def send(self, message: rpc.Message, *, related: RequestId | None = None) -> None:
        await self.stream.send(message, related=related)

    def send_nowait(self, message: rpc.Message, *, related: RequestId | None = None) -> None:
        self.stream.send_nowait(message, related=related)

    async def receive(self) -> Received:
        while True:
            received = await self.stream.receive()
            if isinstance(received, rpc.Batch):
                kept = []
                for item in received.items:
                    if isinstance(item, rpc.JsonRpcRequest) and await self._refused(item):
                        continue
                    kept.append(item)
                if kept:
                    return rpc.Batch(tuple(kept), received.repeated_ids)
            elif not isinstance(received, rpc.JsonRpcRequest) or not await self._refused(received):
                return received

    async def _refused(self, request: rpc.JsonRpcRequest) -> bool:
        """Whether ``request`` needs scopes the token lacks (then the refusal was sent). A
        check that fails (our bug) answers that request -32603, and the connection goes on."""
        try:
            needed = self.server.scopes_needed(request.method, request.params)
            refusal = self.auth.refuse_scopes(self.token, needed)
        except Exception:
            log.exception("checking the scopes of a %s request failed", request.method)
            error = Error(code=ErrorCode.INTERNAL_ERROR, message="Internal error")
            await self.stream.send(rpc.ErrorResponse(request.id, error), related=request.id)
            return True
        if refusal is None:
            return False
        data = {"httpStatus": refusal.status, "wwwAuthenticate": ", ".join(refusal.challenges)}
        error = Error(code=ErrorCode.INVALID_REQUEST, message=refusal.message(), data=data)
        await self.stream.send(rpc.ErrorResponse(request.id, error), related=request.id)
        return True

    async def aclose(self) -> None:
        if trio.current_time() >= self.deadline:
            self._close_with(EXPIRED_CLOSE_CODE, EXPIRED_REASON)
        await self.stream.aclose()


# -- the client ---------------------------------------------------------------------------


async def authorized_handshake(
    connect: Callable[[list[tuple[bytes, bytes]]], Awaitable[trio_websocket.WebSocketConnection]],
    url: str,
    auth: httpx.Auth,
    headers: Sequence[tuple[bytes, bytes]] = (),
) -> trio_websocket.WebSocketConnection:
    """The connection ``connect(headers)`` opens to ``url`` once ``auth`` authorized its
    handshake: each attempt sends the headers of the flow's request; a handshake the
    server rejects (:exc:`trio_websocket.ConnectionRejected`) is the flow's response, and
    the flow's next request is the next attempt. Blocks while the flow does (discovery,
    token requests, a user's login); cancelling it closes the flow (shielded, for at most
    :data:`AUTH_FLOW_CLOSE_TIMEOUT` seconds).

    Raises:
        trio_websocket.ConnectionRejected: the flow gave up (its last refusal).
    """
    request = httpx.Request("GET", http_equivalent(url), headers=list(headers))
    if auth.requires_request_body:
        await request.aread()
    flow = auth.async_auth_flow(request)
    try:
        request = await flow.__anext__()
        while True:
            sent = [(k, v) for k, v in request.headers.raw if k.lower() != b"host"]
            try:
                connection = await connect(sent)
            except trio_websocket.ConnectionRejected as rejected:
                response = httpx.Response(
                    rejected.status_code,
                    headers=list(rejected.headers or ()),
                    content=rejected.body or b"",
                    request=request,
                )
                try:
                    request = await flow.asend(response)
                except StopAsyncIteration:
                    raise rejected from None
                continue
            try:
                request = await flow.asend(httpx.Response(101, request=request))
            except StopAsyncIteration:
                return connection
            except BaseException:
                await connection.aclose()
                raise
            await connection.aclose()  # the flow wants another attempt
    finally:
        with trio.move_on_after(AUTH_FLOW_CLOSE_TIMEOUT, shield=True) as bounded:
            await flow.aclose()
        if bounded.cancelled_caught:
            log.warning("the auth flow took more than %s s to close", AUTH_FLOW_CLOSE_TIMEOUT)
