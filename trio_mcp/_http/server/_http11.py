"""One HTTP/1.1 connection of the httptools front end: requests parsed by llhttp (through
``httptools``) and handed, one at a time and in order, to an ASGI app called directly in
the connection's own task.

Theory of operation
-------------------

The connection's task reads the socket only when it needs to: for the head of the next
request, for the body of the current one when the app asks for it (``receive``), and,
once the body is in, to notice the client leaving while the app streams its answer.
Everything the parser produces goes into :class:`ParsedRequest` objects queued in order, so
pipelined requests are answered in order; the queue holds at most what one read brought
in (``READ_SIZE``) beyond the request being served, and bytes read while an answer streams
wait unparsed, up to ``MAX_PIPELINED_BYTES``.

A request whose head and body arrived together costs one read, one call of the app (no
task spawned by the front end) and one write: the response's head and body go out in one
``send_all``.

The protocol rules of MCP over HTTP all live in the app (:class:`~._asgi.McpAsgiApp`);
this module only carries HTTP/1.1: framing (``Content-Length``, chunked, close-delimited
for HTTP/1.0 streams), keep-alive, ``Connection: close``, ``Expect: 100-continue``, and the
limits of a request's head.

Error handling
--------------

What llhttp refuses (in its strict default: conflicting or repeated ``Content-Length``,
``Content-Length`` with ``Transfer-Encoding``, a ``Transfer-Encoding`` not ending in
``chunked``, obsolete line folding, a bare LF, an invalid chunk size) gets ``400`` and the
connection closes. A head over ``max_header_bytes`` or with more than ``max_headers``
fields gets ``431``, a head slower than ``header_timeout`` gets ``408``; both close. An
idle keep-alive connection closes after ``keep_alive_timeout``. An app that fails before
answering gets ``500`` sent for it; one that fails in the middle of a response has the
connection closed.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeAlias
from urllib.parse import unquote

import httptools
import trio

from ..._errors import ErrorCode
from ._exchange import Receive, Scope, Send, error_body
from ._http11_exchange import Http11Exchange, date_header, status_line
from ._http11_parse import BadRequest, Http11Limits, ParsedRequest, RequestParser

__all__ = ["AsgiApp", "Http11Connection", "Http11Limits", "ShutdownSignal"]

log = logging.getLogger("trio_mcp.http")

#: An ASGI 3 application.
AsgiApp: TypeAlias = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Bytes asked of the socket at once.
READ_SIZE: Final = 65536
#: Bytes of pipelined requests read (and held unparsed) while a response is being
#: streamed; past this the connection is not read until the response ends.
MAX_PIPELINED_BYTES: Final = 65536
#: Seconds a closing connection waits for the client to close its side (see
#: ``Http11Connection._linger``), reading at most ``MAX_LINGER_BYTES``.
LINGER_TIME: Final = 1.0
MAX_LINGER_BYTES: Final = 256 * 1024

_ASGI: Final = {"version": "3.0", "spec_version": "2.3"}


class ShutdownSignal:
    """What the connections of one server share about its shutdown: once it began, idle
    connections close and busy ones close after the response in flight."""

    __slots__ = ("begun", "idle_waits")

    def __init__(self) -> None:
        self.begun = False
        #: The cancel scopes of connections waiting for their next request.
        self.idle_waits: set[trio.CancelScope] = set()

    def begin(self) -> None:
        """Close every idle connection now and the others after their response."""
        self.begun = True
        for scope in self.idle_waits:
            scope.cancel()


class Http11Connection:
    """Serves the requests of one connection to ``app``, one at a time, in order.

    Args:
        stream: the accepted connection (the caller closes it; :meth:`serve` sends its
            end first).
        app: the ASGI app each request is handed to, in this connection's task.
        limits: the limits of request heads and idle waits.
        shutdown: the server's shutdown signal.
    """

    __slots__ = (
        "_app",
        "_client",
        "_limits",
        "_parser",
        "_pipelined",
        "_server",
        "_shutdown",
        "_stream",
        "_writing",
        "broken",
        "eof",
    )

    def __init__(
        self,
        stream: trio.SocketStream,
        app: AsgiApp,
        limits: Http11Limits,
        shutdown: ShutdownSignal,
    ) -> None:
        self._stream = stream
        self._app = app
        self._limits = limits
        self._shutdown = shutdown
        self._parser = RequestParser(limits)
        self._pipelined = bytearray()
        self._writing = trio.Lock()
        #: The client closed its side (or the connection broke while reading).
        self.eof = False
        #: A write failed: the client is gone.
        self.broken = False
        self._client = _address(stream.socket.getpeername())
        self._server = _address(stream.socket.getsockname())

    def client_left(self) -> bool:
        """Whether the client closed its side (read so far)."""
        return self.eof

    @property
    def shutting_down(self) -> bool:
        return self._shutdown.begun

    async def serve(self) -> None:
        """Serve requests until the client closes, a request says ``Connection: close``,
        a limit is crossed or the server shuts down; then end the connection.

        Blocks for the connection's whole life. Cancelling it stops at once, whatever is
        in flight."""
        try:
            while not self._shutdown.begun:
                request = await self._next_request()
                if request is None:
                    return
                if isinstance(request, BadRequest):
                    await self._refuse(request)
                    return
                if not await self._exchange(request):
                    return
        finally:
            await self._linger()

    # -- reading ------------------------------------------------------------------------

    async def _read(self) -> bytes:
        """Bytes from the socket (``b""``: the client closed its side)."""
        try:
            data = await self._stream.receive_some(READ_SIZE)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            data = b""
        if not data:
            self.eof = True
        return data

    async def _next_request(self) -> ParsedRequest | BadRequest | None:
        """The next request whose head is complete; what to refuse instead; or ``None``
        to close quietly (the client left or idled past ``keep_alive_timeout``, or the
        server shuts down)."""
        parser = self._parser
        limits = self._limits
        started_at: float | None = None
        fed = 0  # bytes of the head so far (llhttp holds a field cut in two itself)
        if not parser.ready and self._pipelined:
            pipelined, self._pipelined = self._pipelined, bytearray()
            fed = len(pipelined)
            parser.feed(pipelined)
        while not parser.ready:
            if parser.error is not None:
                return parser.error
            if self.eof:
                return None
            if parser.current is None:
                # Idle: nothing of the next request yet.
                with trio.move_on_after(limits.keep_alive_timeout) as idle:
                    self._shutdown.idle_waits.add(idle)
                    try:
                        if self._shutdown.begun:
                            return None
                        data = await self._read()
                    finally:
                        self._shutdown.idle_waits.discard(idle)
                if idle.cancelled_caught:
                    return None
            else:
                if started_at is None:
                    started_at = trio.current_time()
                data = b""
                with trio.move_on_at(started_at + limits.header_timeout):
                    data = await self._read()
                if not data and not self.eof:
                    return BadRequest(
                        408, f"Request Timeout: the head took over {limits.header_timeout} s"
                    )
            if not data:
                return None
            if started_at is None:
                started_at = trio.current_time()
            fed += len(data)
            parser.feed(data)
            if not parser.ready and parser.error is None and fed > limits.max_header_bytes:
                return BadRequest(
                    431,
                    f"Request Header Fields Too Large: the head is over {limits.max_header_bytes}"
                    " bytes",
                )
        return parser.ready.popleft()

    @property
    def can_read_body(self) -> bool:
        """Whether more of the current request's body may still come."""
        return not self.eof and self._parser.error is None

    async def read_body(self, request: ParsedRequest) -> None:
        """Parse more of the connection (what was read ahead first): ``request``'s body
        grows, or it completes, or :attr:`can_read_body` turns false.

        What a chunked body carries besides its data (chunk sizes, a trailer, which
        llhttp gathers whole) may take ``max_header_bytes`` more than the data itself;
        beyond, the request is refused (``400``)."""
        data: bytes | bytearray
        if self._pipelined:
            data, self._pipelined = self._pipelined, bytearray()
            await trio.lowlevel.checkpoint()
        else:
            data = await self._read()
            if not data:
                return
        before = request.body_size
        self._parser.feed(data)
        request.framing += len(data) - (request.body_size - before)
        if (
            not request.complete
            and self._parser.error is None
            and request.framing > request.body_size + self._limits.max_header_bytes
        ):
            self._parser.error = BadRequest(
                400,
                "Bad Request: the chunked framing and trailer of the body are over "
                f"{self._limits.max_header_bytes} bytes more than its data",
            )

    async def read_ahead(self) -> bool:
        """Read what the client sends next, unparsed (a pipelined request, while an answer
        streams); ``False`` once the client closed or ``MAX_PIPELINED_BYTES`` are held."""
        if len(self._pipelined) >= MAX_PIPELINED_BYTES or self.eof:
            await trio.lowlevel.checkpoint()
            return False
        data = await self._read()
        self._pipelined += data
        return bool(data)

    # -- writing ------------------------------------------------------------------------

    async def write(self, data: bytes) -> None:
        """Send ``data`` (after the writes already asked for); a client gone only sets
        :attr:`broken`. Blocks while the client does not read."""
        if self.broken:
            await trio.lowlevel.checkpoint()
            return
        # Tasks of the app may write at once (a stream's head and its first event): in
        # the order they ask (trio's locks are fair), one at a time.
        lock = self._writing
        try:
            lock.acquire_nowait()  # usually free: no trip to the scheduler
        except trio.WouldBlock:
            await lock.acquire()
        try:
            await self._stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self.broken = True
        finally:
            lock.release()

    async def _refuse(self, refusal: BadRequest) -> None:
        """Answer what the front end refuses (the connection closes after)."""
        log.debug("refused a request: %s", refusal.reason)
        body = error_body(None, ErrorCode.INVALID_REQUEST, refusal.reason)
        head = b"%scontent-type: application/json\r\ncontent-length: %d\r\n" % (
            status_line(refusal.status),
            len(body),
        )
        await self.write(head + date_header() + b"connection: close\r\n\r\n" + body)

    async def _linger(self) -> None:
        """Before the socket closes: say so (``FIN``), then read and drop what the client
        still sends, for up to ``LINGER_TIME`` seconds, so that the close does not reset
        the connection (a reset can destroy the last answer before the client reads it)."""
        if self.broken:
            return
        with trio.move_on_after(LINGER_TIME):
            try:
                await self._stream.send_eof()
                dropped = 0
                while not self.eof and dropped < MAX_LINGER_BYTES:
                    dropped += len(await self._read())
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass

    # -- one exchange -------------------------------------------------------------------

    async def _exchange(self, request: ParsedRequest) -> bool:
        """Hand ``request`` to the app and see its response out; returns whether the
        connection can carry another request."""
        scope = self._scope(request)
        if scope is None:
            await self._refuse(BadRequest(400, "Bad Request: the request target is invalid"))
            return False
        exchange = Http11Exchange(self, request)
        try:
            await self._app(scope, exchange.receive, exchange.send)
        except Exception:
            log.exception("%s %s failed", request.method, scope["path"])
            if not exchange.status:
                await self._refuse(BadRequest(500, "Internal error"))
            return False
        finally:
            exchange.finish()
        await exchange.wait_reader_gone()
        if not exchange.ended:
            if exchange.status:
                return False  # a response cut short: only closing tells the client
            error = self._parser.error
            if not request.complete and error is not None:
                await self._refuse(error)  # its body broke the rules
            elif not self.eof and not self.broken:
                log.error("%s %s: the app sent no response", request.method, scope["path"])
                await self._refuse(BadRequest(500, "Internal error"))
            return False
        return exchange.keep_alive and not self.broken and not self.eof

    def _scope(self, request: ParsedRequest) -> Scope | None:
        url = request.url
        if url[:1] == b"/":
            raw_path, _, query = url.partition(b"?")
        else:
            try:
                parsed = httptools.parse_url(url)
            except httptools.HttpParserInvalidURLError:
                return None
            raw_path = parsed.path or b"/"
            query = parsed.query or b""
        return {
            "type": "http",
            "asgi": _ASGI,
            "http_version": request.version,
            "method": request.method,
            "scheme": "http",
            "path": unquote(raw_path.decode("latin-1")),
            "raw_path": raw_path,
            "query_string": query,
            "root_path": "",
            "headers": request.headers,
            "client": self._client,
            "server": self._server,
            "extensions": {},
        }


def _address(address: Any) -> tuple[str, int] | None:
    if isinstance(address, tuple) and len(address) >= 2:
        return (str(address[0]), int(address[1]))
    return None
