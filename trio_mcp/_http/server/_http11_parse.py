"""The sans-IO half of the httptools front end: llhttp's callbacks gather each request's
head and body into a :class:`ParsedRequest`, queued in order, and refuse heads past the
limits (see :class:`Http11Limits`). No I/O here: :mod:`._http11` feeds it bytes."""

from __future__ import annotations

from collections import deque

import attrs
import httptools

from ._exchange import Header

__all__ = ["BadRequest", "Http11Limits", "ParsedRequest", "RequestParser"]


def _positive_int(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"Http11Limits.{attribute.name} must be a positive int, not {value!r}")


def _positive_seconds(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ValueError(
            f"Http11Limits.{attribute.name} must be a positive number of seconds, not {value!r}"
        )


@attrs.frozen(kw_only=True)
class Http11Limits:
    """The limits of the httptools front end on each connection (``serve(http11_limits=
    ...)``; see ``docs/reference/limits.md``). A value that is not positive is refused
    (``ValueError`` naming the field).

    Attributes:
        max_header_bytes: the largest request head (request line and header fields),
            16 KiB; ``431`` and close beyond. A chunked body's framing and trailer may
            take as much again beyond its data (``400`` beyond).
        max_headers: the most header fields in a request (100); ``431`` and close beyond.
        header_timeout: seconds from a request's first byte to the end of its head (10);
            ``408`` and close beyond.
        keep_alive_timeout: seconds an idle connection waits for its next request (5,
            ``math.inf``: for ever); it closes quietly then.
    """

    max_header_bytes: int = attrs.field(default=16 * 1024, validator=_positive_int)
    max_headers: int = attrs.field(default=100, validator=_positive_int)
    header_timeout: float = attrs.field(default=10.0, validator=_positive_seconds)
    keep_alive_timeout: float = attrs.field(default=5.0, validator=_positive_seconds)


class ParsedRequest:
    """One request as the parser saw it."""

    __slots__ = (
        "body",
        "body_size",
        "complete",
        "framing",
        "head_bytes",
        "head_done",
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
        #: Bytes of body parsed so far (taken or not).
        self.body_size = 0
        #: Bytes read for the body that were not its data (see ``read_body``).
        self.framing = 0
        #: The head is complete (header fields after it are a chunked body's trailer).
        self.head_done = False
        self.complete = False


class BadRequest(Exception):
    """The client broke HTTP/1.1: answer ``status`` with ``reason`` and close."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class RequestParser:
    """Parses the requests of one connection: :meth:`feed` it bytes; each request whose
    head is complete is queued in :attr:`ready` (its body keeps filling in as more is
    fed), and the first error stops the parsing for good (:attr:`error`), after the
    requests queued before it."""

    __slots__ = ("current", "error", "limits", "parser", "ready")

    def __init__(self, limits: Http11Limits) -> None:
        self.limits = limits
        #: The request being parsed (``None`` between requests).
        self.current: ParsedRequest | None = None
        #: Requests whose head is complete, in order, not yet taken.
        self.ready: deque[ParsedRequest] = deque()
        #: Why parsing stopped: what the client gets once the requests before it are
        #: answered.
        self.error: BadRequest | None = None
        self.parser = httptools.HttpRequestParser(self)

    def feed(self, data: bytes | bytearray) -> None:
        """Parse ``data`` (nothing after an error)."""
        if self.error is not None:
            return
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            # llhttp took the head as having no body and stops at the upgrade: it is
            # answered (no protocol switch is offered), and the connection closes.
            for request in self.ready:
                request.keep_alive = False
                request.complete = True
            self.error = BadRequest(400, "Bad Request: protocol upgrades are not served")
        except httptools.HttpParserCallbackError as exc:
            cause = exc.__context__
            if not isinstance(cause, BadRequest):
                raise
            self.error = cause
        except httptools.HttpParserError as exc:
            self.error = BadRequest(400, f"Bad Request: {exc}")

    # -- llhttp's callbacks -------------------------------------------------------------

    def on_message_begin(self) -> None:
        self.current = ParsedRequest()

    def on_url(self, url: bytes) -> None:
        request = self.current
        assert request is not None
        request.url += url
        request.head_bytes += len(url)
        if request.head_bytes > self.limits.max_header_bytes:
            raise BadRequest(414, "URI Too Long")

    def on_header(self, name: bytes, value: bytes) -> None:
        request = self.current
        assert request is not None
        request.head_bytes += len(name) + len(value) + 4
        if not request.head_done:  # (a trailer's fields are counted, and dropped)
            request.headers.append((name.lower(), value))
        if len(request.headers) > self.limits.max_headers:
            raise BadRequest(
                431, f"Request Header Fields Too Large: more than {self.limits.max_headers}"
            )
        if request.head_bytes > self.limits.max_header_bytes:
            raise BadRequest(
                431,
                "Request Header Fields Too Large: the head is over "
                f"{self.limits.max_header_bytes} bytes",
            )

    def on_headers_complete(self) -> None:
        request = self.current
        assert request is not None
        request.head_done = True
        parser = self.parser
        request.method = parser.get_method().decode("ascii")
        request.version = parser.get_http_version()
        request.keep_alive = request.version == "1.1" and parser.should_keep_alive()
        self.ready.append(request)

    def on_body(self, body: bytes) -> None:
        request = self.current
        assert request is not None
        request.body.append(body)
        request.body_size += len(body)

    def on_message_complete(self) -> None:
        request = self.current
        assert request is not None
        request.complete = True
        self.current = None
