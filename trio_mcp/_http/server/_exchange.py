"""One HTTP exchange as the MCP transports see it: the request's headers and body, and a
response that carries JSON-RPC messages as a single JSON body or as an SSE stream.

Everything here speaks plain ASGI 3 (``scope``, ``receive``, ``send``).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any, Final, TypeAlias

import orjson
import trio

from ... import _jsonrpc as rpc
from ..._errors import ErrorCode, retry_hint
from ..._types._base import Error, RequestId
from ._sse import KEEPALIVE, message_event

__all__ = [
    "Disconnected",
    "Header",
    "cancel_on_disconnect",
    "keep_alive",
    "HttpRequest",
    "Receive",
    "ResponseWriter",
    "Scope",
    "Send",
    "TooLarge",
    "app_path",
    "error_body",
    "retry_status",
    "status_for_error",
]

log = logging.getLogger("trio_mcp.http")

Scope: TypeAlias = MutableMapping[str, Any]
Receive: TypeAlias = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send: TypeAlias = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Header: TypeAlias = tuple[bytes, bytes]

JSON_HEADERS: Final[list[Header]] = [(b"content-type", b"application/json")]
SSE_HEADERS: Final[list[Header]] = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]

_CLIENT_FAULTS = frozenset(
    {
        ErrorCode.PARSE_ERROR,
        ErrorCode.INVALID_REQUEST,
        ErrorCode.INVALID_PARAMS,
        ErrorCode.HEADER_MISMATCH,
        ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY,
        ErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
    }
)


def status_for_error(code: int) -> int:
    """The HTTP status of a stateless (2026-07-28) JSON error answer: 404 for an unknown
    method, 400 for what the client got wrong, 500 for an internal error, else 200."""
    if code == ErrorCode.METHOD_NOT_FOUND:
        return 404
    if code in _CLIENT_FAULTS:
        return 400
    if code == ErrorCode.INTERNAL_ERROR:
        return 500
    return 200


def retry_status(error: Error) -> tuple[int, tuple[Header, ...]] | None:
    """The HTTP status and headers of an error that says to retry later
    (:class:`~trio_mcp.RetryLater`): 429 for the caller's own quota, else 503, each with
    ``Retry-After``; ``None`` for any other error."""
    hint = retry_hint(error.data) if error.code == ErrorCode.INTERNAL_ERROR else None
    if hint is None:
        return None
    seconds, reason = hint
    return (429 if reason == "quota" else 503), ((b"retry-after", b"%d" % seconds),)


def error_body(id: RequestId | None, code: int, message: str, data: Any = None) -> bytes:
    """A serialized JSON-RPC error response."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return orjson.dumps({"jsonrpc": "2.0", "id": id, "error": error})


class TooLarge(Exception):
    """The request body is larger than the limit."""


class Disconnected(Exception):
    """The client went away before the request body arrived."""


def app_path(scope: Scope) -> str:
    """The request's path inside the app: ``path`` without the ``root_path`` the app is
    mounted at.

    The ASGI spec has ``path`` include ``root_path`` ("``PATH_INFO`` can be derived by
    stripping ``root_path`` from ``path``"), which is what Starlette's ``Mount`` (0.33 and
    later) and Hypercorn's ``DispatcherMiddleware`` (0.18) send: ``/prefix/mcp`` with
    ``root_path`` ``/prefix``. Older routers strip the prefix themselves and send ``/mcp``
    with the same ``root_path``. Both work: the prefix is stripped when ``path`` starts with
    it (as a whole segment), and ``path`` is taken as is otherwise. The one ambiguous case,
    an old-style router passing a ``path`` equal to its ``root_path``, is read the modern
    way (the mount point itself, ``/``).
    """
    path: str = scope["path"]
    root: str = scope.get("root_path") or ""
    root = root.rstrip("/")
    if root and path.startswith(root):
        rest = path[len(root) :]
        if not rest:
            return "/"
        if rest[0] == "/":
            return rest
    return path


class HttpRequest:
    """An HTTP request: its method, path inside the app (see :func:`app_path`) and
    (lower-case) headers, its body, and the ASGI callables to answer it."""

    __slots__ = ("_accept", "headers", "method", "path", "receive", "scope", "send")

    def __init__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.scope = scope
        self.receive = receive
        self.send = send
        self.method: str = scope["method"]
        self.path = app_path(scope)
        headers: dict[str, str] = {}
        for name, value in scope["headers"]:
            key = name.decode("latin-1").lower()
            if key not in headers:
                headers[key] = value.decode("latin-1")
        self.headers = headers
        self._accept: tuple[bool, bool] | None = None

    def _accepts(self) -> tuple[bool, bool]:
        if self._accept is None:
            accept = self.headers.get("accept")
            if accept is None:
                self._accept = (True, True)
            else:
                types = {part.split(";", 1)[0].strip().lower() for part in accept.split(",")}
                anything = "*/*" in types
                self._accept = (
                    anything or "application/json" in types or "application/*" in types,
                    anything or "text/event-stream" in types or "text/*" in types,
                )
        return self._accept

    @property
    def accepts_json(self) -> bool:
        """Whether the client takes ``application/json`` (no ``Accept`` header: yes)."""
        return self._accepts()[0]

    @property
    def accepts_sse(self) -> bool:
        """Whether the client takes ``text/event-stream`` (no ``Accept`` header: yes)."""
        return self._accepts()[1]

    async def read_body(self, limit: int) -> bytes:
        """The whole request body.

        Raises:
            TooLarge: it is longer than ``limit`` bytes (checked against
                ``Content-Length`` first, so nothing more is read).
            Disconnected: the client went away first.
        """
        length = self.headers.get("content-length")
        # (ASCII digits only: "²".isdigit() is true, and int() refuses it, as it refuses
        # more than 4300 digits)
        if (
            length is not None
            and length.isascii()
            and length.isdigit()
            and (len(length) > 18 or int(length) > limit)
        ):
            raise TooLarge
        message = await self.receive()
        if message["type"] != "http.request":
            raise Disconnected
        body: bytes = message.get("body", b"")
        if not message.get("more_body", False):
            if len(body) > limit:
                raise TooLarge
            return body
        chunks = [body]
        size = len(body)
        while True:
            message = await self.receive()
            if message["type"] != "http.request":
                raise Disconnected
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise TooLarge
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    async def wait_disconnect(self) -> None:
        """Block until the client disconnects (call after the body was read)."""
        while True:
            message = await self.receive()
            if message["type"] == "http.disconnect":
                return

    # -- whole responses --------------------------------------------------------------------

    async def respond(
        self,
        status: int,
        body: bytes = b"",
        *,
        content_type: bytes | None = b"application/json",
        headers: Sequence[Header] = (),
    ) -> None:
        """Send a whole response."""
        head = [(b"content-type", content_type)] if content_type is not None and body else []
        head.extend(headers)
        await self.send({"type": "http.response.start", "status": status, "headers": head})
        await self.send({"type": "http.response.body", "body": body})

    async def respond_error(
        self,
        status: int,
        code: int,
        message: str,
        *,
        id: RequestId | None = None,
        data: Any = None,
        headers: Sequence[Header] = (),
    ) -> None:
        """Send a JSON-RPC error response with ``status``."""
        await self.respond(status, error_body(id, code, message, data), headers=headers)

    async def respond_message(
        self, message: rpc.Message, status: int = 200, *, headers: Sequence[Header] = ()
    ) -> None:
        """Send one JSON-RPC message as the JSON body."""
        await self.respond(status, rpc.dumps(message), headers=headers)


class ResponseWriter:
    """The response of one exchange that carries JSON-RPC messages.

    It stays undecided until the first message: a final answer that comes
    first (and ends the exchange) is sent as plain JSON; anything else starts
    an SSE stream that carries every message after it. Several tasks may
    write at once; each write blocks while the client is not reading
    (backpressure through the socket, no buffer of our own).

    A writer made with ``owned=True`` is written only by the task that made it (the
    exchange's own task): a write from any other task (a session's engine) is handed
    over to it, and it does the write in :meth:`carry`. Cancelling the other task (a
    session that ends cancels its engine) then stops at most its hand-over, never a
    write under way: an ASGI server cut in the middle of a ``send`` (Hypercorn: between
    the end of a response and the recycling of its keep-alive connection) leaves the
    connection neither answered nor reusable, and the exchange's task waiting for ever.
    One hand-over waits at most (a second blocks until it is taken), and the exchange's
    task needs no helper: it waits for the client's disconnect, and a hand-over
    interrupts that wait (memory-channel receives are cancelled atomically).

    Args:
        send: the ASGI ``send``.
        json_ok, sse_ok: what the client accepts.
        headers: extra response headers (a session id).
        owned: hand other tasks' writes over to the task making the writer.
        preamble: written first on an SSE stream (a priming event).
    """

    __slots__ = (
        "_asgi_send",
        "_closed",
        "_ended",
        "_headers",
        "_lock",
        "_owner",
        "_pending",
        "_space",
        "_started",
        "_stopped",
        "_wake",
        "gone",
        "json_ok",
        "preamble",
        "sse_ok",
        "state",
    )

    def __init__(
        self,
        send: Send,
        *,
        json_ok: bool = True,
        sse_ok: bool = True,
        headers: Sequence[Header] = (),
        owned: bool = False,
    ) -> None:
        self._asgi_send = send
        self.json_ok = json_ok
        self.sse_ok = sse_ok
        self._headers = list(headers)
        self._lock: trio.Lock | None = None
        #: "new", "sse" (streaming) or "done" (as the writers decided; what was sent is
        #: in _started and _ended).
        self.state = "new"
        #: The server failed a write, or the client left: later writes do nothing.
        self.gone = False
        self.preamble: Callable[[], Awaitable[bytes]] | None = None
        self._started = False  # the response's start was sent
        self._ended = False  # its last body message was sent
        #: The task that does every write (owned writers), else None.
        self._owner = trio.lowlevel.current_task() if owned else None
        self._pending: _Parcel | None = None  # handed over, not yet taken
        self._space: trio.Event | None = None  # set when _pending is taken
        self._wake: trio.CancelScope | None = None  # the owner's wait in carry()
        self._stopped = False  # stop() was called
        self._closed = False  # carry() returned: later writes do nothing

    @property
    def started(self) -> bool:
        return self.state != "new"

    @property
    def ended(self) -> bool:
        """Whether the last message of the response was sent (or the client is gone)."""
        return self._ended or self.gone

    async def carry(
        self,
        wait_disconnect: Callable[[], Awaitable[None]],
        *,
        unanswered: tuple[int, bytes] | None = None,
    ) -> None:
        """Do the writes other tasks hand over (an owned writer, in the task that made it)
        until the response is complete, the client leaves (``wait_disconnect`` returns;
        then later writes do nothing), or :meth:`stop` is called: then the response is
        completed here (a started one ends; one that never started is answered
        ``unanswered``, a status and a JSON body, if given).

        Blocks while a write waits for the client to read. Cancelling it leaves the
        response as it is (later writes do nothing)."""
        try:
            while True:
                await self._take()
                if self.ended:
                    return
                if self._stopped:
                    await self._complete(unanswered)
                    return
                with trio.CancelScope() as wake:
                    self._wake = wake
                    if self._pending is not None:
                        wake.cancel()  # (handed over during the write above)
                    await wait_disconnect()
                self._wake = None
                if not wake.cancelled_caught:
                    self.gone = not self._ended  # the client left first
                    return
        finally:
            self._closed = True
            self._wake = None
            self._pending = None
            if self._space is not None:
                self._space.set()

    def stop(self) -> None:
        """Take no more writes: :meth:`carry` does the one handed over, if any, then
        completes the response. Idempotent; does nothing to a writer that is not owned."""
        if self._owner is None:
            return
        self._stopped = True
        if self._wake is not None:
            self._wake.cancel()

    async def _complete(self, unanswered: tuple[int, bytes] | None) -> None:
        self.state = "done"
        if self._started:
            await self._send_now({"type": "http.response.body", "body": b"", "more_body": False})
        elif unanswered is not None:
            status, body = unanswered
            head = [*JSON_HEADERS, (b"content-length", b"%d" % len(body)), *self._headers]
            await self._send_now(self._start(status, head))
            await self._send_now({"type": "http.response.body", "body": body})
        else:
            await trio.lowlevel.checkpoint()

    async def _take(self) -> None:
        """Do the write handed over, if any (the owner's task)."""
        messages = self._pending
        if messages is None:
            return
        self._pending = None
        if self._space is not None:
            self._space.set()
            self._space = None
        for message in messages:
            await self._send_now(message)

    async def _send(self, *messages: MutableMapping[str, Any]) -> None:
        """Send ``messages`` (all or none of them: see the class notes)."""
        owner = self._owner
        if owner is None or trio.lowlevel.current_task() is owner:
            await self._take()  # (first what was handed over before)
            for message in messages:
                await self._send_now(message)
            return
        while self._pending is not None and not self._closed:
            if self._space is None:
                self._space = trio.Event()
            await self._space.wait()
        if self._closed or self._stopped or self.gone:
            await trio.lowlevel.checkpoint()
            return
        await trio.lowlevel.checkpoint_if_cancelled()  # (a cancelled hand-over hands nothing)
        self._pending = messages
        if self._wake is not None:
            self._wake.cancel()

    async def _send_now(self, message: MutableMapping[str, Any]) -> None:
        # A failed write must not raise into the writer (a session's handler, say): it
        # means the client is gone (ASGI servers raise OSError for that, and Hypercorn
        # sometimes a RuntimeError).
        if self.gone:
            await trio.lowlevel.checkpoint()
            return
        if message["type"] == "http.response.start":
            self._started = True
        elif not message.get("more_body", False):
            self._ended = True
        try:
            await self._asgi_send(message)
        except Exception as exc:  # noqa: BLE001 - any failed write: the client is gone
            self.gone = True
            self.state = "done"
            log.debug("a write failed (the client is gone): %r", exc)

    def _start(self, status: int, headers: list[Header]) -> MutableMapping[str, Any]:
        return {"type": "http.response.start", "status": status, "headers": headers}

    async def json(self, data: bytes, status: int = 200, *, headers: Sequence[Header] = ()) -> None:
        """Send the whole answer as JSON (only before anything else was sent), with
        ``headers`` besides the writer's own."""
        if self.state != "new":
            raise RuntimeError("the response has already started")
        self.state = "done"
        # With a length the server sends no chunked framing (one write fewer).
        head = [*JSON_HEADERS, (b"content-length", b"%d" % len(data)), *self._headers, *headers]
        await self._send(self._start(status, head), {"type": "http.response.body", "body": data})

    async def nothing(self, status: int = 202) -> None:
        """End the exchange with an empty answer (only before anything else was sent)."""
        if self.state != "new":
            raise RuntimeError("the response has already started")
        self.state = "done"
        head = [(b"content-length", b"0"), *self._headers]
        await self._send(self._start(status, head), {"type": "http.response.body", "body": b""})

    def _get_lock(self) -> trio.Lock:
        if self._lock is None:
            self._lock = trio.Lock()
        return self._lock

    async def open_sse(self) -> None:
        """Start the SSE stream if nothing was sent yet: status 200, then the preamble."""
        async with self._get_lock():
            await self._open()

    async def _open(self) -> None:
        if self.state != "new":
            return
        self.state = "sse"
        start = self._start(200, SSE_HEADERS + self._headers)
        if self.preamble is None:
            await self._send(start)
        else:
            chunk = await self.preamble()
            await self._send(
                start, {"type": "http.response.body", "body": chunk, "more_body": True}
            )

    async def event(self, data: bytes, event_id: str | None = None) -> None:
        """Write one message as an SSE event (starting the stream if needed)."""
        if self.state == "done":
            await trio.lowlevel.checkpoint()
            return
        lock = self._get_lock()
        try:
            lock.acquire_nowait()  # usually free: no trip to the scheduler
        except trio.WouldBlock:
            await lock.acquire()
        try:
            if self.state == "new":
                await self._open()
            if self.state == "sse":
                await self._write(message_event(data, event_id))
        finally:
            lock.release()

    async def raw(self, chunk: bytes) -> None:
        """Write raw SSE bytes (a comment, a replayed event) on a started stream."""
        if self.state != "sse":
            return
        async with self._get_lock():
            if self.state == "sse":
                await self._write(chunk)

    async def keepalive(self) -> None:
        """Write a keep-alive comment on a started stream."""
        await self.raw(KEEPALIVE)

    async def close(self) -> None:
        """End the SSE stream (idempotent; nothing for a JSON answer)."""
        if self.state != "sse":
            return
        async with self._get_lock():
            if self.state == "sse":
                self.state = "done"
                await self._send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _write(self, chunk: bytes) -> None:
        await self._send({"type": "http.response.body", "body": chunk, "more_body": True})


#: ASGI messages handed over to be sent together.
_Parcel: TypeAlias = tuple[MutableMapping[str, Any], ...]


async def cancel_on_disconnect(
    http: HttpRequest, scope: trio.CancelScope, writer: ResponseWriter
) -> None:
    """Cancel ``scope`` if the client disconnects before ``writer``'s response is complete
    (run it as a task beside the work). Returns when the exchange is over: ASGI servers
    report ``http.disconnect`` once the response is complete, too."""
    await http.wait_disconnect()
    if writer.state != "done":
        scope.cancel()


async def keep_alive(writer: ResponseWriter, interval: float) -> None:
    """Write a keep-alive comment every ``interval`` seconds while the stream is open (run
    it as a task; cancel it when the stream ends)."""
    while writer.state != "done":
        await trio.sleep(interval)
        await writer.keepalive()
