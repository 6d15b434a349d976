"""One exchange of the httptools front end (:mod:`._http11`): the ``receive`` and
``send`` an ASGI app is given for one request, and the HTTP/1.1 framing of its response
(``Content-Length`` for a whole answer, chunked for a stream, close-delimited for an
HTTP/1.0 stream; the head written with the first piece of the body)."""

from __future__ import annotations

import time
from collections.abc import MutableMapping
from email.utils import formatdate
from http import HTTPStatus
from typing import Any, Final, Protocol

import trio

from ._exchange import Header
from ._http11_parse import ParsedRequest

__all__ = ["Connection", "Http11Exchange", "date_header", "status_line"]

_CONTINUE: Final = b"HTTP/1.1 100 Continue\r\n\r\n"
_LAST_CHUNK: Final = b"0\r\n\r\n"
_NO_BODY_STATUSES: Final = frozenset({204, 304})
_DISCONNECT: Final = {"type": "http.disconnect"}


class Connection(Protocol):
    """What an exchange needs of its connection (:class:`._http11.Http11Connection`)."""

    @property
    def broken(self) -> bool:
        """A write failed: the client is gone."""

    @property
    def can_read_body(self) -> bool:
        """More of the current request's body may still come."""

    @property
    def shutting_down(self) -> bool:
        """The server shuts down: the connection closes after this exchange."""

    def client_left(self) -> bool:
        """The client closed its side."""

    async def read_body(self, request: ParsedRequest) -> None:
        """Parse more of ``request``'s body."""

    async def read_ahead(self) -> bool:
        """Read what comes next, unparsed; ``False`` once there is no more to read."""

    async def write(self, data: bytes) -> None:
        """Send ``data`` in turn."""


class Http11Exchange:
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

    def __init__(self, connection: Connection, request: ParsedRequest) -> None:
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
        self._reader_gone: trio.Event | None = None  # set when that task stopped reading

    def finish(self) -> None:
        """The app returned: later calls of ``receive`` and ``send`` do nothing."""
        self._finished = True
        self._end()

    async def wait_reader_gone(self) -> None:
        """Block until no task of the app reads the connection for this exchange any
        more (one waiting for a disconnect stops at once once the exchange is over, but
        only at its next checkpoint: what it read by then is kept for the next request)."""
        if self._reader_gone is not None:
            await self._reader_gone.wait()
        # (else no checkpoint: the connection's next read is one, and a scheduler trip
        # here would cost every request)

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
        client pipelines meanwhile (see ``Connection.read_ahead``)."""
        await self._flush_head()  # (the app waits: what it began must reach the client)
        over = self._over
        connection = self._connection
        if over.is_set() or connection.client_left():
            await trio.lowlevel.checkpoint()
            return
        if self._reader is not None:
            await over.wait()  # another task reads; it tells
            return
        with trio.CancelScope() as reader:
            self._reader = reader
            gone = self._reader_gone = trio.Event()
            try:
                while await connection.read_ahead():
                    pass
                if not connection.client_left():
                    await over.wait()  # read enough ahead: wait for the response's end
            finally:
                self._reader = None
                gone.set()
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
