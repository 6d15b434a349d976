"""Getting the user's approval: the redirect handlers an :class:`AuthorizationCode`
grant calls with the authorization URL.

* :func:`open_loopback_redirect` opens the browser and receives the callback on a
  one-shot HTTP server on 127.0.0.1 (RFC 8252 §7.3), run in a nursery for the length
  of one authorization and bounded by a timeout;
* :func:`fetch_redirect` follows no browser at all: it fetches the authorization URL
  and takes the redirect the server answers with (for authorization servers that
  approve without a user, as test servers do).
"""

from __future__ import annotations

import contextlib
import socket
import webbrowser
from collections.abc import AsyncIterator, Callable
from urllib.parse import parse_qsl, urljoin, urlsplit

import httpx
import trio

from ._errors import CallbackError
from ._grants import RedirectHandler

__all__ = ["DEFAULT_LOGIN_TIMEOUT", "LoopbackRedirect", "fetch_redirect", "open_loopback_redirect"]

#: Seconds the loopback server waits for the browser's callback.
DEFAULT_LOGIN_TIMEOUT = 300.0
_MAX_REQUEST_HEAD = 8192
_PAGE = (
    b"<!doctype html><title>Authorized</title>"
    b"<p>Authorization complete. You can close this window.</p>"
)


def fetch_redirect(http_client: httpx.AsyncClient | None = None) -> RedirectHandler:
    """A redirect handler that GETs the authorization URL (redirects not followed) and
    returns the ``Location`` of the answer: for servers that approve without a user."""

    async def handle(authorization_url: str) -> str:
        async with contextlib.AsyncExitStack() as stack:
            http = http_client
            if http is None:
                http = await stack.enter_async_context(
                    httpx.AsyncClient(follow_redirects=False, timeout=30.0)
                )
            response = await http.get(authorization_url, follow_redirects=False)
            location: str | None = response.headers.get("Location")
            if not response.is_redirect or not location:
                raise CallbackError(
                    f"the authorization endpoint answered HTTP {response.status_code} "
                    "without a redirect"
                )
            return urljoin(authorization_url, location)
        raise AssertionError("unreachable")  # pragma: no cover

    return handle


class LoopbackRedirect:
    """The redirect handler :func:`open_loopback_redirect` yields. ``redirect_uri`` is
    ``http://127.0.0.1:<port>/callback``; each call opens the browser, serves that URL
    until one callback arrives (or ``timeout`` passes) and closes the server."""

    def __init__(
        self, port: int, *, timeout: float, open_browser: Callable[[str], object], path: str
    ) -> None:
        self.port = port
        self.path = path
        self.timeout = timeout
        self._open_browser = open_browser
        self.redirect_uri = f"http://127.0.0.1:{port}{path}"

    async def __call__(self, authorization_url: str) -> str:
        """Blocks until the browser comes back (or raises :class:`CallbackError` after
        ``timeout`` seconds). The server runs only during this call."""
        listeners = await trio.open_tcp_listeners(self.port, host="127.0.0.1")
        result: list[str] = []
        got = trio.Event()
        try:
            with trio.move_on_after(self.timeout) as waited:
                async with trio.open_nursery() as nursery:

                    async def handle(stream: trio.SocketStream) -> None:
                        callback = await self._serve_one(stream)
                        if callback is not None and not got.is_set():
                            result.append(callback)
                            got.set()
                            nursery.cancel_scope.cancel()

                    for listener in listeners:
                        nursery.start_soon(trio.serve_listeners, handle, [listener])
                    await trio.to_thread.run_sync(self._open_browser, authorization_url)
                    await got.wait()
        finally:
            for listener in listeners:
                await listener.aclose()
        if waited.cancelled_caught or not result:
            raise CallbackError(f"no authorization callback within {self.timeout:g} s")
        return result[0]

    async def _serve_one(self, stream: trio.SocketStream) -> str | None:
        """Answer one HTTP request; the callback URL if it was the callback."""
        async with stream:
            with trio.move_on_after(10):
                head = b""
                while b"\r\n\r\n" not in head and len(head) < _MAX_REQUEST_HEAD:
                    chunk = await stream.receive_some(4096)
                    if not chunk:
                        return None
                    head += chunk
                line = head.split(b"\r\n", 1)[0].decode("latin-1")
                method, _, rest = line.partition(" ")
                target = rest.rpartition(" ")[0] or rest
                parts = urlsplit(target)
                params = dict(parse_qsl(parts.query))
                if (
                    method == "GET"
                    and parts.path == self.path
                    and ("code" in params or "error" in params)
                ):
                    await _respond(stream, 200, _PAGE)
                    return self.redirect_uri + ("?" + parts.query if parts.query else "")
                await _respond(stream, 404, b"not found")
        return None


async def _respond(stream: trio.SocketStream, status: int, body: bytes) -> None:
    reason = b"OK" if status == 200 else b"Not Found"
    head = (
        b"HTTP/1.1 %d %s\r\nContent-Type: text/html; charset=utf-8\r\n"
        b"Content-Length: %d\r\nConnection: close\r\n\r\n" % (status, reason, len(body))
    )
    with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
        await stream.send_all(head + body)


@contextlib.asynccontextmanager
async def open_loopback_redirect(
    *,
    timeout: float = DEFAULT_LOGIN_TIMEOUT,  # noqa: ASYNC109 - the browser's wait, per login
    port: int = 0,
    open_browser: Callable[[str], object] = webbrowser.open,
    path: str = "/callback",
) -> AsyncIterator[LoopbackRedirect]:
    """A :class:`LoopbackRedirect` on a port of 127.0.0.1 (``0``: a free one, picked at
    entry so that ``redirect_uri`` stays the same for every authorization in the block).

    Nothing listens between authorizations; nothing runs after the block.
    """
    if port == 0:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
    await trio.lowlevel.checkpoint()
    yield LoopbackRedirect(port, timeout=timeout, open_browser=open_browser, path=path)
