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
from collections import deque
from collections.abc import Awaitable, Callable, MutableMapping
from email.utils import formatdate
from http import HTTPStatus
from typing import Any, Final, TypeAlias
from urllib.parse import unquote

import attrs
import httptools
import trio

from ..._errors import ErrorCode
from ._exchange import Header, Receive, Scope, Send, error_body

__all__ = ["AsgiApp", "Http11Connection", "Http11Limits", "ShutdownSignal"]

log = logging.getLogger("trio_mcp.http")

#: Bytes asked of the socket at once.
READ_SIZE: Final = 65536
#: Bytes of pipelined requests read (and held unparsed) while a response is being
#: streamed; past this the connection is not read until the response ends.
MAX_PIPELINED_BYTES: Final = 65536

#: An ASGI 3 application.
AsgiApp: TypeAlias = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Seconds a closing connection waits for the client to close its side (see
#: ``Http11Connection._linger``), reading at most ``MAX_LINGER_BYTES``.
LINGER_TIME: Final = 1.0
MAX_LINGER_BYTES: Final = 256 * 1024

_ASGI: Final = {"version": "3.0", "spec_version": "2.3"}
_CONTINUE: Final = b"HTTP/1.1 100 Continue\r\n\r\n"
_LAST_CHUNK: Final = b"0\r\n\r\n"
_NO_BODY_STATUSES: Final = frozenset({204, 304})
_DISCONNECT: Final = {"type": "http.disconnect"}


@attrs.frozen(kw_only=True)
class Http11Limits:
    """The limits of the httptools front end on each connection (see
    ``docs/reference/limits.md``).

    Attributes:
        max_header_bytes: the largest request head (request line and header fields),
            16 KiB; ``431`` and close beyond.
        max_headers: the most header fields in a request (100); ``431`` and close beyond.
        header_timeout: seconds from a request's first byte to the end of its head (10);
            ``408`` and close beyond.
        keep_alive_timeout: seconds an idle connection waits for its next request (5);
            it closes quietly then.
    """

    max_header_bytes: int = 16 * 1024
    max_headers: int = 100
    header_timeout: float = 10.0
    keep_alive_timeout: float = 5.0


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


class _Request:
    """One request as the parser saw it."""

    __slots__ = (
        "body",
        "complete",
        "head_bytes",
        "headers",
        "keep_alive",
        "method",
        "url",
        "version",
    )

    def __init__(self) -> None:
        self.url = b""
        self.headers: list[Header] = []
        self.head_bytes = 0
        self.method = ""
        self.version = "1.1"
        self.keep_alive = True
        self.body: deque[bytes] = deque()
        self.complete = False


class _BadRequest(Exception):
    """The client broke HTTP/1.1: answer ``status`` with ``reason`` and close."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class _Parsed:
    """The parser's callbacks: they fill :class:`_Request` objects and queue each one
    once its head is complete."""

    __slots__ = ("current", "limits", "parser", "ready")

    def __init__(self, limits: Http11Limits) -> None:
        self.limits = limits
        self.current: _Request | None = None
        self.ready: deque[_Request] = deque()
        self.parser = httptools.HttpRequestParser(self)

    def on_message_begin(self) -> None:
        self.current = _Request()

    def on_url(self, url: bytes) -> None:
        request = self.current
        assert request is not None
        request.url += url
        request.head_bytes += len(url)
        if request.head_bytes > self.limits.max_header_bytes:
            raise _BadRequest(414, "URI Too Long")

    def on_header(self, name: bytes, value: bytes) -> None:
        request = self.current
        assert request is not None
        request.headers.append((name.lower(), value))
        request.head_bytes += len(name) + len(value) + 4
        if len(request.headers) > self.limits.max_headers:
            raise _BadRequest(
                431, f"Request Header Fields Too Large: more than {self.limits.max_headers}"
            )
        if request.head_bytes > self.limits.max_header_bytes:
            raise _BadRequest(
                431,
                "Request Header Fields Too Large: the head is over "
                f"{self.limits.max_header_bytes} bytes",
            )

    def on_headers_complete(self) -> None:
        request = self.current
        assert request is not None
        parser = self.parser
        request.method = parser.get_method().decode("ascii")
        request.version = parser.get_http_version()
        request.keep_alive = request.version == "1.1" and parser.should_keep_alive()
        self.ready.append(request)

    def on_body(self, body: bytes) -> None:
        request = self.current
        assert request is not None
        request.body.append(body)

    def on_message_complete(self) -> None:
        request = self.current
        assert request is not None
        request.complete = True
        self.current = None


_reasons: dict[int, bytes] = {}


def _status_line(status: int) -> bytes:
    line = _reasons.get(status)
    if line is None:
        try:
            phrase = HTTPStatus(status).phrase
        except ValueError:
            phrase = ""
        line = _reasons[status] = b"HTTP/1.1 %d %s\r\n" % (status, phrase.encode("ascii"))
    return line


_date: list[Any] = [0, b""]


def _date_header() -> bytes:
    """The ``Date`` header line, formatted once a second."""
    now = int(time.time())
    if _date[0] != now:
        _date[0] = now
        _date[1] = b"date: " + formatdate(now, usegmt=True).encode("ascii") + b"\r\n"
    line: bytes = _date[1]
    return line


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
        "_body_delivered",
        "_body_refusal",
        "_broken",
        "_chunked",
        "_client",
        "_continue_sent",
        "_disconnect_reader",
        "_eof",
        "_exchange_over",
        "_head_written",
        "_keep_alive",
        "_limits",
        "_parsed",
        "_pipelined",
        "_request",
        "_response_ended",
        "_response_headers",
        "_response_status",
        "_server",
        "_shutdown",
        "_stream",
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
        self._parsed = _Parsed(limits)
        self._pipelined = bytearray()
        self._eof = False
        self._broken = False
        self._client = _address(stream.socket.getpeername())
        self._server = _address(stream.socket.getsockname())
        self._reset(None)

    def _reset(self, request: _Request | None) -> None:
        self._request = request
        self._response_status = 0
        self._response_headers: list[Header] = []
        self._response_ended = False
        self._head_written = False
        self._chunked = False
        self._body_refusal: _BadRequest | None = None
        self._body_delivered = False  # the last http.request message went to the app
        self._continue_sent = False
        self._keep_alive = request.keep_alive if request is not None else False
        self._exchange_over = trio.Event()
        self._disconnect_reader: trio.CancelScope | None = None

    async def serve(self) -> None:
        """Serve requests until the client closes, a request says ``Connection: close``,
        a limit is crossed or the server shuts down; then close the connection.

        Blocks for the connection's whole life. Cancelling it closes the connection at
        once, whatever is in flight."""
        try:
            while not self._shutdown.begun:
                try:
                    request = await self._next_request()
                except _BadRequest as refusal:
                    await self._refuse(refusal)
                    return
                if request is None:
                    return
                if not await self._exchange(request):
                    return
        finally:
            await self._linger()

    async def _linger(self) -> None:
        """Before the socket closes: say so (``FIN``), then read and drop what the client
        still sends, for up to ``LINGER_TIME`` seconds, so that the close does not reset
        the connection (a reset can destroy the last answer before the client reads it)."""
        if self._broken:
            return
        with trio.move_on_after(LINGER_TIME):
            try:
                await self._stream.send_eof()
                dropped = 0
                while not self._eof and dropped < MAX_LINGER_BYTES:
                    dropped += len(await self._read())
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass

    # -- reading ------------------------------------------------------------------------

    async def _read(self) -> bytes:
        """Bytes from the socket (``b""``: the client closed its side)."""
        try:
            data = await self._stream.receive_some(READ_SIZE)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            data = b""
        if not data:
            self._eof = True
        return data

    def _feed(self, data: bytes | bytearray) -> None:
        """Parse ``data``; raises :class:`_BadRequest` for what cannot be served."""
        parsed = self._parsed
        try:
            parsed.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            # llhttp took the head as having no body and stops at the upgrade: answer
            # it (no protocol switch is offered) and close.
            for request in parsed.ready:
                request.keep_alive = False
                request.complete = True
        except httptools.HttpParserCallbackError as exc:
            cause = exc.__context__
            if isinstance(cause, _BadRequest):
                raise cause from None
            raise
        except httptools.HttpParserError as exc:
            raise _BadRequest(400, f"Bad Request: {exc}") from None

    async def _next_request(self) -> _Request | None:
        """The next request whose head is complete, or ``None`` to close quietly (the
        client left or idled past ``keep_alive_timeout``, or the server shuts down).

        Raises:
            _BadRequest: the head broke the rules or a limit."""
        parsed = self._parsed
        limits = self._limits
        started_at: float | None = None
        fed = 0  # bytes of the head so far (llhttp holds a field cut in two itself)
        if self._pipelined:
            pipelined, self._pipelined = self._pipelined, bytearray()
            fed = len(pipelined)
            self._feed(pipelined)
        while not parsed.ready:
            if self._eof:
                return None
            if parsed.current is None:
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
                started_at = trio.current_time()
            else:
                if started_at is None:
                    started_at = trio.current_time()
                data = b""
                with trio.move_on_at(started_at + limits.header_timeout):
                    data = await self._read()
                if not data and not self._eof:
                    raise _BadRequest(
                        408, f"Request Timeout: the head took over {limits.header_timeout} s"
                    )
            if not data:
                return None
            fed += len(data)
            self._feed(data)
            if not parsed.ready and fed > limits.max_header_bytes:
                raise _BadRequest(
                    431,
                    f"Request Header Fields Too Large: the head is over {limits.max_header_bytes}"
                    " bytes",
                )
        return parsed.ready.popleft()

    async def _receive(self) -> MutableMapping[str, Any]:
        """The app's ``receive``: the next piece of the body, then, once the response is
        complete or the client left, ``http.disconnect``."""
        request = self._request
        assert request is not None
        if not self._body_delivered:
            if not request.body and not self._eof:
                if not self._continue_sent and _expects_continue(request):
                    self._continue_sent = True
                    await self._write(_CONTINUE)
                while not request.body and not request.complete and not self._eof:
                    data = await self._read()
                    if data:
                        self._feed_body(data)
            if request.body:
                body = b"".join(request.body) if len(request.body) > 1 else request.body[0]
                request.body.clear()
                self._body_delivered = request.complete
                return {"type": "http.request", "body": body, "more_body": not request.complete}
            if request.complete:
                self._body_delivered = True
                return {"type": "http.request", "body": b"", "more_body": False}
            self._exchange_over.set()  # the client left in the middle of the body
            return dict(_DISCONNECT)
        await self._wait_disconnect()
        return dict(_DISCONNECT)

    def _feed_body(self, data: bytes) -> None:
        try:
            self._feed(data)
        except _BadRequest as exc:
            # A broken body (a bad chunk size): this request cannot go on, and the
            # connection closes after whatever the app answers.
            log.debug("refused the rest of a request: %s", exc.reason)
            self._body_refusal = exc
            self._keep_alive = False
            self._eof = True

    async def _wait_disconnect(self) -> None:
        """Block until the response is complete or the client leaves, reading what the
        client pipelines meanwhile (unparsed, up to ``MAX_PIPELINED_BYTES``)."""
        await self._flush_head()  # (the app waits: what it began must reach the client)
        over = self._exchange_over
        if over.is_set() or self._eof:
            await trio.lowlevel.checkpoint()
            return
        if self._disconnect_reader is not None:
            await over.wait()  # another task reads; it tells
            return
        with trio.CancelScope() as reader:
            self._disconnect_reader = reader
            try:
                while len(self._pipelined) < MAX_PIPELINED_BYTES:
                    data = await self._read()
                    if not data:
                        break
                    self._pipelined += data
                else:
                    await over.wait()  # read enough ahead: wait for the response's end
            finally:
                self._disconnect_reader = None
        over.set()

    # -- writing ------------------------------------------------------------------------

    async def _write(self, data: bytes) -> None:
        if self._broken:
            await trio.lowlevel.checkpoint()
            return
        try:
            await self._stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self._broken = True
            self._keep_alive = False
            self._end_exchange()

    def _end_exchange(self) -> None:
        self._exchange_over.set()
        if self._disconnect_reader is not None:
            self._disconnect_reader.cancel()

    async def _send(self, message: MutableMapping[str, Any]) -> None:
        """The app's ``send``: the head waits for the first piece of the body so that
        both go out in one write."""
        kind = message["type"]
        if kind == "http.response.start":
            if self._response_status:
                raise RuntimeError("the response has already started")
            self._response_status = int(message["status"])
            headers = self._response_headers = list(message.get("headers", ()))
            for name, value in headers:
                if name.lower() == b"content-type" and value.startswith(b"text/event-stream"):
                    # A stream's head goes out at once: its first event may be long in
                    # coming, and the client waits for the head.
                    await self._flush_head()
                    return
            return  # (no checkpoint: the body follows at once, and its write is one)
        if kind != "http.response.body":
            raise RuntimeError(f"unexpected ASGI message {kind!r}")
        if not self._response_status:
            raise RuntimeError("the response body came before its start")
        if self._response_ended:
            raise RuntimeError("the response is already complete")
        body: bytes = message.get("body", b"")
        more: bool = message.get("more_body", False)
        if not more:
            self._response_ended = True
        if self._head_written:
            out = self._frame(body, more)
        else:
            out = self._head(len(body), more) + self._frame(body, more)
        if out:
            await self._write(out)
        else:
            await trio.lowlevel.checkpoint()
        if not more:
            self._end_exchange()

    async def _flush_head(self) -> None:
        """Write the head of a started response now, as that of a stream."""
        if self._response_status and not self._head_written:
            await self._write(self._head(0, True))

    def _head(self, first_length: int, more: bool) -> bytes:
        """The response's head, deciding its framing and whether the connection stays."""
        self._head_written = True
        request = self._request
        assert request is not None
        status = self._response_status
        lines = [_status_line(status), _date_header()]
        has_length = False
        has_encoding = False
        for name, value in self._response_headers:
            if b"\r" in value or b"\n" in value or b"\r" in name or b"\n" in name:
                raise ValueError(f"a line break in response header {name!r}")
            lowered = name.lower()
            if lowered == b"content-length":
                has_length = True
            elif lowered == b"transfer-encoding":
                has_encoding = True
            elif lowered == b"connection" and b"close" in value.lower():
                self._keep_alive = False
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
                self._keep_alive = False  # HTTP/1.0: the close ends the body
        if not request.complete or self._shutdown.begun:
            self._keep_alive = False  # (an unread body cannot be skipped safely)
        if not self._keep_alive:
            lines.append(b"connection: close\r\n")
        lines.append(b"\r\n")
        return b"".join(lines)

    def _frame(self, body: bytes, more: bool) -> bytes:
        request = self._request
        assert request is not None
        if request.method == "HEAD" or self._response_status in _NO_BODY_STATUSES:
            return b""
        if not self._chunked:
            return body
        if body:
            framed = b"%x\r\n%s\r\n" % (len(body), body)
            return framed if more else framed + _LAST_CHUNK
        return b"" if more else _LAST_CHUNK

    async def _refuse(self, refusal: _BadRequest) -> None:
        """Answer a request the front end refuses, and let the connection close."""
        log.debug("refused a request: %s", refusal.reason)
        body = error_body(None, ErrorCode.INVALID_REQUEST, refusal.reason)
        head = b"%scontent-type: application/json\r\ncontent-length: %d\r\n" % (
            _status_line(refusal.status),
            len(body),
        )
        await self._write(head + _date_header() + b"connection: close\r\n\r\n" + body)

    # -- one exchange -------------------------------------------------------------------

    async def _exchange(self, request: _Request) -> bool:
        """Hand ``request`` to the app and see its response out; returns whether the
        connection can carry another request."""
        self._reset(request)
        scope = self._scope(request)
        if scope is None:
            await self._refuse(_BadRequest(400, "Bad Request: the request target is invalid"))
            return False
        receive: Receive = self._receive
        send: Send = self._send
        try:
            await self._app(scope, receive, send)
        except Exception:
            log.exception("%s %s failed", request.method, scope["path"])
            if not self._response_status:
                self._keep_alive = False
                await self._refuse(_BadRequest(500, "Internal error"))
            return False
        if not self._response_ended:
            if self._response_status:
                pass  # a response cut short: only closing tells the client
            elif self._body_refusal is not None:
                await self._refuse(self._body_refusal)
            elif not self._eof and not self._broken:
                log.error("%s %s: the app sent no response", request.method, scope["path"])
                await self._refuse(_BadRequest(500, "Internal error"))
            return False
        return self._keep_alive and not self._broken and not self._eof

    def _scope(self, request: _Request) -> Scope | None:
        url = request.url
        if url[:1] == b"/":
            raw_path, _, query = url.partition(b"?")
            raw_path = raw_path.partition(b"#")[0]
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


def _expects_continue(request: _Request) -> bool:
    for name, value in request.headers:
        if name == b"expect" and value.lower() == b"100-continue":
            return True
    return False


def _address(address: Any) -> tuple[str, int] | None:
    if isinstance(address, tuple) and len(address) >= 2:
        return (str(address[0]), int(address[1]))
    return None
