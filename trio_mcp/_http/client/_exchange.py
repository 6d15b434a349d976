"""What every mode of the HTTP client stream shares: *exchanges* (a request whose answer
is read from its own HTTP response by a task of the stream), and the one bounded channel
through which everything the server sends reaches the session.

The modes build on this, side by side: :mod:`._legacy` (the sessions of legacy Streamable
HTTP) and :mod:`._sse_2024` (the 2024-11-05 HTTP+SSE transport); :mod:`._stream` joins them
(the modern era, and the choice of mode).
"""

from __future__ import annotations

import logging
from contextlib import aclosing
from typing import Any, Final, Literal, TypedDict

import httpx
import trio

from ... import _jsonrpc as rpc
from ..._errors import ErrorCode
from ..._resend import stream_resending
from ..._transports._stream import MessageStream, Received
from ..._types._base import Error, RequestId
from ._bodies import BodyTooLarge, Cursor, UnexpectedBody, read_body, read_messages

__all__ = [
    "HTTP_CLIENT_CLOSE_TIMEOUT",
    "ExchangeStream",
    "HttpClientStreamOptions",
    "Mode",
    "close_http_client",
]

log = logging.getLogger("trio_mcp.http.client")

#: ``new``: nothing sent yet; ``modern``: 2026-07-28 Streamable HTTP; ``streamable``:
#: legacy Streamable HTTP (after ``initialize``); ``sse``: the 2024-11-05 HTTP+SSE transport.
Mode = Literal["new", "modern", "streamable", "sse"]

POST_ACCEPT = "application/json, text/event-stream"
JSON = "application/json"
EVENT_STREAM = "text/event-stream"
#: Errors meaning the request never reached the server (no point re-issuing it).
UNREACHABLE = (httpx.ConnectError, httpx.ConnectTimeout, httpx.UnsupportedProtocol)
#: The ``data`` of the error that answers a request which never reached the server: a host
#: counts these to notice a server that went away (see :class:`~trio_mcp.host.Host`).
UNREACHABLE_DATA = {"unreachable": True}
#: Seconds that closing an HTTP client the stream made may take, shielded from
#: cancellation: httpx closes its pooled connections, and a server that stopped reading
#: could hold a close (a TLS ``close_notify`` that cannot be written) for ever.
HTTP_CLIENT_CLOSE_TIMEOUT: Final = 2.0


async def close_http_client(http: httpx.AsyncClient) -> None:
    """Close ``http``, shielded from cancellation, for at most
    :data:`HTTP_CLIENT_CLOSE_TIMEOUT` seconds; past that its connections are abandoned (the
    garbage collector closes them) and a warning is logged."""
    with trio.move_on_after(HTTP_CLIENT_CLOSE_TIMEOUT, shield=True) as bounded:
        await http.aclose()
    if bounded.cancelled_caught:
        log.warning(
            "closing the HTTP client took more than %s s; its connections were abandoned",
            HTTP_CLIENT_CLOSE_TIMEOUT,
        )


class Exchange:
    """One request awaiting its answer over HTTP: what was sent, the id it has on the wire
    now, its cancel scope, and how far its event stream got."""

    __slots__ = ("answered", "cursor", "modern", "request", "scope", "wire_id")

    def __init__(self, request: rpc.JsonRpcRequest, *, modern: bool) -> None:
        self.request = request
        self.wire_id: RequestId = request.id
        self.modern = modern
        self.scope = trio.CancelScope()
        self.cursor = Cursor()
        self.answered = False

    def wire_message(self) -> rpc.JsonRpcRequest:
        if self.wire_id == self.request.id:
            return self.request
        return rpc.JsonRpcRequest(self.wire_id, self.request.method, self.request.params)


class HttpClientStreamOptions(TypedDict, total=False):
    """The bounds and retry policy of an :class:`~trio_mcp.http.HttpClientStream` (which
    documents what each means and its default), as keyword options of
    :func:`~trio_mcp.http.connect_http_stream` and the HTTP clients."""

    max_message_size: int
    buffer: int
    max_concurrent_requests: int
    reissue_attempts: int
    reconnect_attempts: int
    default_retry: float
    max_retry: float
    reinitialize_attempts: int
    get_stream_timeout: float
    close_timeout: float


class ExchangeStream(MessageStream):
    """The shared part of :class:`~trio_mcp.http.HttpClientStream` (which documents the
    arguments)."""

    def __init__(
        self,
        url: str,
        http: httpx.AsyncClient,
        *,
        owns_http: bool = False,
        max_message_size: int = 16 * 1024 * 1024,
        buffer: int = 64,
        max_concurrent_requests: int = 64,
        reissue_attempts: int = 1,
        reconnect_attempts: int = 5,
        default_retry: float = 1.0,
        max_retry: float = 30.0,
        reinitialize_attempts: int = 3,
        get_stream_timeout: float = 5.0,
        close_timeout: float = 2.0,
    ) -> None:
        self.url = url
        self._http = http
        self._owns_http = owns_http
        self.max_message_size = max_message_size
        self.reissue_attempts = reissue_attempts
        self.reconnect_attempts = reconnect_attempts
        self.default_retry = default_retry
        self.max_retry = max_retry
        self.reinitialize_attempts = reinitialize_attempts
        self.get_stream_timeout = get_stream_timeout
        self.close_timeout = close_timeout
        self.mode: Mode = "new"
        self._incoming_send, self._incoming = trio.open_memory_channel[Received](buffer)
        self._slots = trio.Semaphore(max_concurrent_requests)
        self._exchanges: dict[RequestId, Exchange] = {}  # by wire id
        self._by_request: dict[RequestId, Exchange] = {}  # by the session's id
        self._tasks: trio.Nursery | None = None
        self._run_scope = trio.CancelScope()
        self._closed = False
        self._ended = False
        self._broken: str | None = None
        self._goodbye: trio.Event | None = None  # set once _say_goodbye has run

    # -- running ----------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Own the stream's tasks until :meth:`aclose` (or until the runner is cancelled);
        then end the legacy session and close the HTTP client if the stream made it. Start
        it with ``await nursery.start(stream.run)``.

        When the runner is cancelled from outside (the nursery it runs in, as when a host
        is left), the stream is closed as by :meth:`aclose`, in the same order: the DELETE
        that ends the session goes out first (shielded, at most ``close_timeout`` seconds),
        then the HTTP client closes (shielded, at most :data:`HTTP_CLIENT_CLOSE_TIMEOUT`
        seconds). Later sends raise :exc:`trio.ClosedResourceError`."""
        try:
            with self._run_scope:
                async with trio.open_nursery() as tasks:
                    self._tasks = tasks
                    task_status.started()
                    await trio.sleep_forever()
        finally:
            self._tasks = None
            self._closed = True
            self._incoming_send.close()  # a receiver sees the end, not silence
            await self._goodbye_once()  # shielded, bounded
            if self._owns_http:
                await close_http_client(self._http)

    async def _goodbye_once(self) -> None:
        """Run :meth:`_say_goodbye` once, whichever of :meth:`aclose` and the runner's end
        comes first; the other waits for it. Shielded from cancellation, for at most
        ``close_timeout`` seconds."""
        with trio.move_on_after(self.close_timeout, shield=True):
            if self._goodbye is not None:
                await self._goodbye.wait()
                return
            self._goodbye = trio.Event()
            try:
                if not self._http.is_closed:  # a client of the caller's, closed already
                    await self._say_goodbye()
            finally:
                self._goodbye.set()

    async def _say_goodbye(self) -> None:
        """A hook: what the stream tells the server before the HTTP client closes (the
        legacy eras end their session with DELETE). Runs once, shielded, at most
        ``close_timeout`` seconds."""
        await trio.lowlevel.checkpoint()

    def _start(self, fn: Any, *args: Any) -> None:
        if self._tasks is None:
            raise trio.ClosedResourceError("the HTTP stream is not running")
        self._tasks.start_soon(fn, *args)

    # -- receiving --------------------------------------------------------------------------

    async def receive(self) -> Received:
        """Wait for the next message from the server (answers, their notifications, and in
        the legacy eras the server's own requests).

        Raises :exc:`trio.ClosedResourceError` after :meth:`aclose`; when an HTTP+SSE
        server ends its event stream, :exc:`trio.EndOfChannel` (or
        :exc:`trio.BrokenResourceError` if it broke)."""
        try:
            return await self._incoming.receive()
        except trio.EndOfChannel:
            if self._broken is not None:
                raise trio.BrokenResourceError(self._broken) from None
            raise

    # -- delivering to the session ----------------------------------------------------------

    async def _deliver(self, message: Received, source: Exchange | None = None) -> bool:
        """Hand ``message`` to the session; an answer goes under the id the session gave its
        request, through :meth:`_take_result`. Returns whether it answered ``source``.

        Blocks while the session's channel is full (so reading the HTTP body stops)."""
        answers_source = False
        if type(message) is rpc.Batch:
            items = []
            for item in message.items:
                item, answered = self._rewrite(item, source)
                items.append(item)
                answers_source = answers_source or answered
            message = rpc.Batch(tuple(items))
        else:
            message, answers_source = self._rewrite(message, source)  # type: ignore[arg-type]
        try:
            await self._incoming_send.send(message)
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            pass
        return answers_source

    def _rewrite(
        self, message: rpc.Message | rpc.InvalidMessage, source: Exchange | None
    ) -> tuple[rpc.Message | rpc.InvalidMessage, bool]:
        if isinstance(message, (rpc.ResultResponse, rpc.ErrorResponse)):
            wire_id = message.id
        elif isinstance(message, rpc.InvalidMessage):
            wire_id = message.response_id
        else:
            return message, False
        exchange = self._exchanges.get(wire_id) if wire_id is not None else None
        if exchange is None:
            return message, False
        exchange.answered = True
        if exchange is not source:
            exchange.scope.cancel()  # answered elsewhere (say, on a resumed stream)
        original = exchange.request
        if isinstance(message, rpc.ResultResponse):
            result = self._take_result(exchange, message.result)
            return rpc.ResultResponse(original.id, result), True
        if isinstance(message, rpc.ErrorResponse):
            return rpc.ErrorResponse(original.id, message.error), True
        return rpc.InvalidMessage(message.reason, message.reply, original.id), True

    def _take_result(self, exchange: Exchange, result: dict[str, Any]) -> dict[str, Any]:
        """A hook: what the stream learns from (or changes in) a result on its way to the
        session."""
        return result

    async def _answer_error(
        self,
        exchange: Exchange,
        message: str,
        *,
        code: int = ErrorCode.INTERNAL_ERROR,
        data: Any = None,
    ) -> None:
        """Answer ``exchange`` ourselves, with an error the session will raise."""
        if exchange.answered:
            return
        error = Error(code=code, message=message, data=data)
        await self._deliver(rpc.ErrorResponse(exchange.wire_id, error), exchange)

    async def _answer_unreachable(self, exchange: Exchange, exc: Exception) -> None:
        """Answer ``exchange``, which never reached the server (``exc`` says why)."""
        await self._answer_error(
            exchange, f"cannot reach {self.url}: {exc!r}", data=dict(UNREACHABLE_DATA)
        )

    # -- exchanges --------------------------------------------------------------------------

    def _register(self, exchange: Exchange) -> None:
        self._exchanges[exchange.wire_id] = exchange
        self._by_request[exchange.request.id] = exchange

    def _unregister(self, exchange: Exchange) -> None:
        if self._exchanges.get(exchange.wire_id) is exchange:
            del self._exchanges[exchange.wire_id]
        if self._by_request.get(exchange.request.id) is exchange:
            del self._by_request[exchange.request.id]

    async def _read_answer(self, exchange: Exchange, response: httpx.Response) -> bool:
        """Pass on every message of a successful response; return whether it held the
        answer to ``exchange``.

        Raises:
            httpx.RequestError: the stream broke.
            UnexpectedBody: the body was neither JSON nor an event stream.
        """
        if response.status_code == 202:
            raise UnexpectedBody("HTTP 202 (accepted, with no answer) to a request")
        async with aclosing(
            read_messages(response, self.max_message_size, exchange.cursor)
        ) as messages:
            async for message in messages:
                if await self._deliver(message, exchange):
                    return True
        return exchange.answered

    async def _own_answer(
        self, response: httpx.Response, request: rpc.JsonRpcRequest
    ) -> Received | None:
        """The answer to ``request``, a request the stream made for itself (the session
        sees nothing of it), read from a successful ``response``; ``None`` if the body
        ended without it. Blocks until it comes.

        Raises:
            httpx.RequestError: the stream broke.
            UnexpectedBody: the body was neither JSON nor an event stream.
            BodyTooLarge: a message was larger than ``max_message_size``.
        """
        async with aclosing(read_messages(response, self.max_message_size, Cursor())) as messages:
            async for message in messages:
                if getattr(message, "id", None) == request.id:
                    return message
        return None

    async def _answer_http_error(self, exchange: Exchange, response: httpx.Response) -> None:
        """Answer ``exchange`` from an HTTP error: with the JSON-RPC error in the body if
        there is one, else with an error naming the status."""
        await self._answer_refusal(exchange, response, await self._error_body(response))

    async def _answer_refusal(
        self, exchange: Exchange, response: httpx.Response, error: Error | None
    ) -> None:
        """Answer ``exchange`` with ``error`` (read from the body of ``response``), or, if
        there was none, with an error naming the HTTP status."""
        if error is None:
            await self._answer_error(
                exchange,
                " ".join(filter(None, ["HTTP", str(response.status_code), response.reason_phrase]))
                + f" from {self.url}",
                data={"httpStatus": response.status_code},
            )
            return
        await self._deliver(rpc.ErrorResponse(exchange.wire_id, error), exchange)

    async def _error_body(self, response: httpx.Response) -> Error | None:
        try:
            body = await read_body(response, min(self.max_message_size, 1 << 20))
        except (BodyTooLarge, httpx.RequestError):
            return None
        message = rpc.parse(body) if body.strip() else None
        return message.error if isinstance(message, rpc.ErrorResponse) else None

    def _retry_delay(self, cursor: Cursor, failures: int) -> float:
        base = cursor.retry if cursor.retry is not None else self.default_retry
        return float(min(base * 2 ** max(failures - 1, 0), max(self.max_retry, base)))

    # -- messages whose answer does not come in the HTTP response ---------------------------

    async def _post(self, message: rpc.Message, url: str, headers: dict[str, str]) -> None:
        """POST ``message`` to ``url`` (with ``headers`` besides the content type), when its
        answer, if any, does not come in the HTTP response. Blocks until the server took it.

        Failures are logged (and a request's is its answer).

        Raises:
            trio.BrokenResourceError: the POST failed after the server ended the
                conversation (the HTTP+SSE event stream).
        """
        headers = {"accept": POST_ACCEPT, "content-type": JSON, **headers}
        try:
            async with stream_resending(
                self._http, "POST", url, content=rpc.dumps(message), headers=headers
            ) as response:
                try:
                    await read_body(response, min(self.max_message_size, 1 << 16))
                except BodyTooLarge:
                    pass  # what the server said beyond the status is not ours to read
        except httpx.HTTPError as exc:
            if self._ended:
                raise trio.BrokenResourceError("the server ended the event stream") from exc
            log.warning("could not send %s: %r", _describe(message), exc)
            if type(message) is rpc.JsonRpcRequest:
                await self._deliver(http_failure(message.id, f"could not send it: {exc!r}"))
            return
        if not response.is_success:
            log.warning("%s: HTTP %d from the server", _describe(message), response.status_code)
            if type(message) is rpc.JsonRpcRequest:
                await self._deliver(
                    http_failure(message.id, f"HTTP {response.status_code} from {url}")
                )


def http_failure(id: RequestId, text: str) -> rpc.ErrorResponse:
    return rpc.ErrorResponse(id, Error(code=ErrorCode.INTERNAL_ERROR, message=text))


def _describe(message: rpc.Message) -> str:
    method = getattr(message, "method", None)
    return method if method is not None else f"the answer to {getattr(message, 'id', None)!r}"
