"""One HTTP/1.1 connection of the httptools front end: requests parsed by llhttp (through
``httptools``) and handed, one at a time and in order, to an ASGI app called directly in
the connection's own task.

Theory of operation
-------------------

The connection's task reads the socket only when it needs to: for the head of the next
request, for the body of the current one when the app asks for it (``receive``), and,
once the body is in, to notice the client leaving while the app streams its answer.
Everything the parser produces goes into :class:`_Request` objects queued in order, so
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
import time
from collections.abc import Awaitable, Callable, MutableMapping
from email.utils import formatdate
from http import HTTPStatus
from typing import Any, Final, TypeAlias
from urllib.parse import unquote

import httptools
import trio

from ..._errors import ErrorCode
from ._exchange import Header, Receive, Scope, Send, error_body
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
_CONTINUE: Final = b"HTTP/1.1 100 Continue\r\n\r\n"
_LAST_CHUNK: Final = b"0\r\n\r\n"
_NO_BODY_STATUSES: Final = frozenset({204, 304})
_DISCONNECT: Final = {"type": "http.disconnect"}


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
        exchange = _Exchange(self, request)
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


class _Exchange:
    """One request and its response: the ``receive`` and ``send`` the app is given.

    Once the exchange is over (the response complete, the client gone, or the app
    returned) ``receive`` answers ``http.disconnect`` at once and never reads again, so a
    task of the app that outlives the exchange cannot read the next request's bytes.
    """

    __slots__ = (
        "_body_delivered",
        "_chunked",
        "_connection",
        "_continue_sent",
        "_finished",
        "_head_written",
        "_headers",
        "_over",
        "_reader",
        "_reader_gone",
        "ended",
        "keep_alive",
        "request",
        "status",
    )

    def __init__(self, connection: Http11Connection, request: ParsedRequest) -> None:
        self._connection = connection
        self.request = request
        #: The response's status once the app started it (0 before).
        self.status = 0
        self._headers: list[Header] = []
        #: The last piece of the response was sent.
        self.ended = False
        #: Whether the connection may carry another request after this one.
        self.keep_alive = request.keep_alive
        self._head_written = False
        self._chunked = False
        self._continue_sent = False
        self._body_delivered = False  # the last http.request message went to the app
        self._finished = False
        self._over = trio.Event()  # the response ended, or the client left
        self._reader: trio.CancelScope | None = None  # the task reading for a disconnect
        self._reader_gone = trio.Event()  # (set when that task stopped reading)

    def finish(self) -> None:
        """The app returned: later calls of ``receive`` and ``send`` do nothing."""
        self._finished = True
        self._end()

    async def wait_reader_gone(self) -> None:
        """Block until no task of the app reads the connection for this exchange any
        more (one waiting for a disconnect stops at once once the exchange is over, but
        only at its next checkpoint: what it read by then is kept for the next request)."""
        if self._reader is not None:
            await self._reader_gone.wait()
        else:
            await trio.lowlevel.checkpoint()

    def _end(self) -> None:
        self._over.set()
        if self._reader is not None:
            self._reader.cancel()

    # -- receive ------------------------------------------------------------------------

    async def receive(self) -> MutableMapping[str, Any]:
        """The app's ``receive``: the body, in the pieces it arrives in, then, once the
        response is complete or the client left, ``http.disconnect``.

        Blocks while the body is on its way (``Expect: 100-continue`` is answered first),
        then until the exchange is over."""
        if self._finished:
            await trio.lowlevel.checkpoint()
            return dict(_DISCONNECT)
        if not self._body_delivered:
            request = self.request
            connection = self._connection
            if not request.body and not request.complete:
                if not self._continue_sent and _expects_continue(request):
                    self._continue_sent = True
                    await connection.write(_CONTINUE)
                while not request.body and not request.complete and connection.can_read_body:
                    await connection.read_body(request)
            if request.body:
                body = b"".join(request.body) if len(request.body) > 1 else request.body[0]
                request.body.clear()
                self._body_delivered = request.complete
                return {"type": "http.request", "body": body, "more_body": not request.complete}
            if request.complete:
                self._body_delivered = True
                return {"type": "http.request", "body": b"", "more_body": False}
            self._end()  # the client left in the middle of the body, or it broke the rules
            return dict(_DISCONNECT)
        await self._wait_disconnect()
        return dict(_DISCONNECT)

    async def _wait_disconnect(self) -> None:
        """Block until the response is complete or the client leaves, reading what the
        client pipelines meanwhile (see :meth:`Http11Connection.read_ahead`)."""
        await self._flush_head()  # (the app waits: what it began must reach the client)
        over = self._over
        connection = self._connection
        if over.is_set() or connection.eof:
            await trio.lowlevel.checkpoint()
            return
        if self._reader is not None:
            await over.wait()  # another task reads; it tells
            return
        with trio.CancelScope() as reader:
            self._reader = reader
            self._reader_gone = trio.Event()
            try:
                while await connection.read_ahead():
                    pass
                if not connection.client_left():
                    await over.wait()  # read enough ahead: wait for the response's end
            finally:
                self._reader = None
                self._reader_gone.set()
        if connection.client_left():
            self._end()

    # -- send ---------------------------------------------------------------------------

    async def send(self, message: MutableMapping[str, Any]) -> None:
        """The app's ``send``. The head waits for the first piece of the body, so that
        both go out in one write, except for an event stream's (its first event may be
        long in coming). Blocks while the client does not read."""
        kind = message["type"]
        if kind == "http.response.start":
            if self.status:
                raise RuntimeError("the response has already started")
            self.status = int(message["status"])
            headers = self._headers = list(message.get("headers", ()))
            for name, value in headers:
                if name.lower() == b"content-type" and value.startswith(b"text/event-stream"):
                    await self._flush_head()
                    return
            return  # (no checkpoint: the body follows at once, and its write is one)
        if kind != "http.response.body":
            raise RuntimeError(f"unexpected ASGI message {kind!r}")
        if not self.status:
            raise RuntimeError("the response body came before its start")
        if self.ended:
            raise RuntimeError("the response is already complete")
        if self._finished:
            await trio.lowlevel.checkpoint()  # (a task that outlived the exchange)
            return
        body: bytes = message.get("body", b"")
        more: bool = message.get("more_body", False)
        if not more:
            self.ended = True
        if self._head_written:
            out = self._frame(body, more)
        else:
            out = self._head(len(body), more) + self._frame(body, more)
        if out:
            await self._connection.write(out)
        else:
            await trio.lowlevel.checkpoint()
        if not more or self._connection.broken:
            self._end()

    async def _flush_head(self) -> None:
        """Write the head of a started response now, as that of a stream."""
        if self.status and not self._head_written and not self._finished:
            await self._connection.write(self._head(0, True))

    def _head(self, first_length: int, more: bool) -> bytes:
        """The response's head, deciding its framing and whether the connection stays."""
        self._head_written = True
        request = self.request
        status = self.status
        lines = [status_line(status), date_header()]
        has_length = False
        has_encoding = False
        for name, value in self._headers:
            if b"\r" in value or b"\n" in value or b"\r" in name or b"\n" in name:
                raise ValueError(f"a line break in response header {name!r}")
            lowered = name.lower()
            if lowered == b"content-length":
                has_length = True
            elif lowered == b"transfer-encoding":
                has_encoding = True
            elif lowered == b"connection":
                if b"close" in value.lower():
                    self.keep_alive = False
                continue  # (written below)
            lines.append(b"%s: %s\r\n" % (name, value))
        no_body = status in _NO_BODY_STATUSES or status < 200 or request.method == "HEAD"
        if not has_length and not has_encoding and not no_body:
            if not more:
                lines.append(b"content-length: %d\r\n" % first_length)
            elif request.version == "1.1":
                self._chunked = True
                lines.append(b"transfer-encoding: chunked\r\n")
            else:
                self.keep_alive = False  # HTTP/1.0: the close ends the body
        if not request.complete or self._connection.shutting_down:
            self.keep_alive = False  # (an unread body cannot be skipped safely)
        if not self.keep_alive:
            lines.append(b"connection: close\r\n")
        lines.append(b"\r\n")
        return b"".join(lines)

    def _frame(self, body: bytes, more: bool) -> bytes:
        if self.request.method == "HEAD" or self.status in _NO_BODY_STATUSES:
            return b""
        if not self._chunked:
            return body
        if body:
            framed = b"%x\r\n%s\r\n" % (len(body), body)
            return framed if more else framed + _LAST_CHUNK
        return b"" if more else _LAST_CHUNK


_status_lines: dict[int, bytes] = {}


def status_line(status: int) -> bytes:
    """``HTTP/1.1 <status> <reason>`` and its line end."""
    line = _status_lines.get(status)
    if line is None:
        try:
            phrase = HTTPStatus(status).phrase
        except ValueError:
            phrase = ""
        line = _status_lines[status] = b"HTTP/1.1 %d %s\r\n" % (status, phrase.encode("ascii"))
    return line


class _Clock:
    """The ``Date`` header line, formatted at most once a second."""

    second = 0
    line = b""


def date_header() -> bytes:
    """The ``Date`` header line of a response sent now."""
    now = int(time.time())
    if _Clock.second != now:
        _Clock.second = now
        _Clock.line = b"date: " + formatdate(now, usegmt=True).encode("ascii") + b"\r\n"
    return _Clock.line


def _expects_continue(request: ParsedRequest) -> bool:
    for name, value in request.headers:
        if name == b"expect" and value.lower() == b"100-continue":
            return True
    return False


def _address(address: Any) -> tuple[str, int] | None:
    if isinstance(address, tuple) and len(address) >= 2:
        return (str(address[0]), int(address[1]))
    return None
