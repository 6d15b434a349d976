"""The client side of MCP over HTTP as one :class:`~trio_mcp.transports.MessageStream`:
Streamable HTTP in both eras, and the 2024-11-05 HTTP+SSE transport for old servers.

Theory of operation
-------------------

The stream does not guess the era: it follows the messages the session sends
(the :class:`~trio_mcp.Client` detects the era, see :mod:`trio_mcp._protocol._era`).

* A request carrying the modern ``_meta`` envelope is **modern** (2026-07-28):
  it gets its own POST with the request headers (``MCP-Protocol-Version``,
  ``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*``), and its answer (one JSON body,
  or an SSE stream of related notifications ending with the response) is
  passed to the session. A modern HTTP error whose body is a JSON-RPC error
  (a 400 with -32022, say) is passed on as the answer; any other HTTP error
  becomes a JSON-RPC error answer, so the client's era probe can judge it.
* ``initialize`` starts the **legacy** era (2025-03-26 ... 2025-11-25
  Streamable HTTP): its POST goes without session headers, the answer's
  ``Mcp-Session-Id`` is kept, and every later message carries it and
  ``MCP-Protocol-Version``. If that POST fails with 400, 404 or 405 and no
  modern error body, the server is taken for a **2024-11-05 HTTP+SSE** server:
  a GET on the URL must open an event stream whose first event names the
  endpoint to POST to, and everything from the server then arrives on that
  stream.

Each POST that expects an answer is an *exchange*: a task in the stream's
nursery that reads the answer and hands every message to the session through
one bounded channel. Messages are sent as they are, with two rewrites the
session never sees: a modern request whose response stream broke is re-issued
once under a fresh id (its answer is given back under the original id), and a
modern ``tools/list`` result loses the tools whose ``x-mcp-header``
annotations are invalid (logged as a warning), as the spec requires.

Cancellation
------------

The session cancels a request by sending ``notifications/cancelled``. In the
modern era that notification does not exist on the wire: the stream closes the
request's POST instead (which is the cancellation signal there). In the legacy
eras it is POSTed and then the request's response stream is closed.

Resource handling
-----------------

Every task (exchanges, the standalone GET stream, the HTTP+SSE event stream)
lives in a nursery the stream's runner owns; :meth:`HttpClientStream.aclose`
ends the legacy session with DELETE (shielded, at most ``close_timeout``
seconds), cancels them all, and closes the ``httpx.AsyncClient`` if the stream
created it. At most ``max_concurrent_requests`` exchanges run at once: beyond
that, :meth:`~HttpClientStream.send` blocks. At most ``buffer`` received
messages wait for :meth:`~HttpClientStream.receive`: beyond that, reading the
HTTP bodies stops.
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Mapping
from contextlib import aclosing
from typing import Any, Literal
from urllib.parse import urljoin

import httpx
import trio

from .. import _jsonrpc as rpc
from .._errors import ErrorCode
from .._protocol._envelope import PROTOCOL_VERSION, declares_modern_version
from .._transports._stream import MessageStream, Received
from .._types._base import Error, RequestId
from ._headers import (
    MCP_METHOD,
    MCP_NAME,
    MCP_PROTOCOL_VERSION,
    MCP_SESSION_ID,
    HeaderParam,
    encode_value,
    header_params,
    name_source,
    param_value_text,
)
from ._sse_client import (
    BodyTooLarge,
    Cursor,
    UnexpectedBody,
    aiter_events,
    read_body,
    read_messages,
)

__all__ = ["HttpClientStream", "Mode"]

log = logging.getLogger("trio_mcp.http.client")

#: ``new``: nothing sent yet; ``modern``: 2026-07-28 Streamable HTTP; ``streamable``:
#: legacy Streamable HTTP (after ``initialize``); ``sse``: the 2024-11-05 HTTP+SSE transport.
Mode = Literal["new", "modern", "streamable", "sse"]

_POST_ACCEPT = "application/json, text/event-stream"
_JSON = "application/json"
_EVENT_STREAM = "text/event-stream"
#: JSON-RPC codes only a modern (2026-07-28) server sends.
_MODERN_ERRORS = frozenset(
    {
        ErrorCode.HEADER_MISMATCH,
        ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY,
        ErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
    }
)
#: Errors meaning the request never reached the server (no point re-issuing it).
_UNREACHABLE = (httpx.ConnectError, httpx.ConnectTimeout, httpx.UnsupportedProtocol)


class _Exchange:
    """One request awaiting its answer over HTTP: what was sent, the id it has on the wire
    now, its cancel scope, and how far its event stream got."""

    __slots__ = ("answered", "cursor", "modern", "request", "scope", "wire_id")

    def __init__(self, request: rpc.Request, *, modern: bool) -> None:
        self.request = request
        self.wire_id: RequestId = request.id
        self.modern = modern
        self.scope = trio.CancelScope()
        self.cursor = Cursor()
        self.answered = False

    def wire_message(self) -> rpc.Request:
        if self.wire_id == self.request.id:
            return self.request
        return rpc.Request(self.wire_id, self.request.method, self.request.params)


class _NoEventStream(Exception):
    """The 2024-11-05 fallback failed: the GET did not open an event stream with an
    ``endpoint`` event."""


class HttpClientStream(MessageStream):
    """The client end of an MCP conversation over HTTP (see the module docstring).

    Create it with :func:`~trio_mcp.http.connect_http_stream` or
    :func:`~trio_mcp.http.open_http_stream`, which start its runner.

    Attributes:
        url: the MCP endpoint.
        mode: which transport is in use (``new`` until the first request).
        session_id: the legacy ``Mcp-Session-Id``, if the server gave one.
        protocol_version: the legacy revision ``initialize`` settled on.
        endpoint: (HTTP+SSE) where messages are POSTed.
    """

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
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.endpoint: str | None = None
        self._incoming_send, self._incoming = trio.open_memory_channel[Received](buffer)
        self._slots = trio.Semaphore(max_concurrent_requests)
        self._exchanges: dict[RequestId, _Exchange] = {}  # by wire id
        self._by_request: dict[RequestId, _Exchange] = {}  # by the session's id
        self._tool_headers: dict[str, list[HeaderParam]] = {}
        self._fresh_ids = itertools.count(1)
        self._initialize: rpc.Request | None = None
        self._reinitializations = 0
        self._reinitialize_lock = trio.Lock()
        self._get_stream_wanted = False
        self._tasks: trio.Nursery | None = None
        self._run_scope = trio.CancelScope()
        self._closed = False
        self._ended = False
        self._broken: str | None = None

    # -- running ----------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Own the stream's tasks until :meth:`aclose`; then close the HTTP client if the
        stream made it. Start it with ``await nursery.start(stream.run)``."""
        try:
            with self._run_scope:
                async with trio.open_nursery() as tasks:
                    self._tasks = tasks
                    task_status.started()
                    await trio.sleep_forever()
        finally:
            self._tasks = None
            if self._owns_http:
                with trio.CancelScope(shield=True):
                    await self._http.aclose()

    def _start(self, fn: Any, *args: Any) -> None:
        if self._tasks is None:
            raise trio.ClosedResourceError("the HTTP stream is not running")
        self._tasks.start_soon(fn, *args)

    # -- the MessageStream interface --------------------------------------------------------

    async def send(self, message: rpc.Message, *, related: RequestId | None = None) -> None:
        """Send one message (``related`` is not needed: HTTP answers come back on the
        request's own exchange).

        Blocks while the message is POSTed, except for a request, whose answer is read by
        its own task: then it blocks only while ``max_concurrent_requests`` exchanges are
        running. Raises :exc:`trio.ClosedResourceError` after :meth:`aclose`, and
        :exc:`trio.BrokenResourceError` once the HTTP+SSE event stream is gone.
        """
        if self._closed:
            raise trio.ClosedResourceError("the HTTP stream is closed")
        if self._ended:
            raise trio.BrokenResourceError(self._broken or "the server ended the event stream")
        kind = type(message)
        if kind is rpc.Request:
            await self._send_request(message)  # type: ignore[arg-type]
            return
        if kind is rpc.Notification and message.method == "notifications/cancelled":  # type: ignore[union-attr]
            await self._cancel(message)  # type: ignore[arg-type]
            return
        if self.mode in ("new", "modern"):
            # The modern wire has no client notifications and no server requests to answer.
            log.debug("not sent on modern HTTP: %r", message)
            await trio.lowlevel.checkpoint()
            return
        await self._post_message(message)
        if (
            self.mode == "streamable"
            and kind is rpc.Notification
            and message.method == "notifications/initialized"  # type: ignore[union-attr]
        ):
            await self._open_get_stream()

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

    async def aclose(self) -> None:
        """End the legacy session (DELETE, shielded, at most ``close_timeout`` seconds) and
        stop every task. Idempotent; closes even when cancelled."""
        if self._closed:
            await trio.lowlevel.checkpoint()
            return
        self._closed = True
        self._incoming.close()
        self._incoming_send.close()
        try:
            if self.mode == "streamable" and self.session_id is not None:
                with trio.CancelScope(shield=True), trio.move_on_after(self.close_timeout):
                    try:
                        response = await self._http.delete(self.url, headers=self._legacy_headers())
                        log.debug("DELETE of the session: HTTP %d", response.status_code)
                    except httpx.HTTPError as exc:
                        log.debug("DELETE of the session failed: %r", exc)
        finally:
            self._run_scope.cancel()
            await trio.lowlevel.cancel_shielded_checkpoint()

    async def open_event_stream(self) -> None:
        """Use the 2024-11-05 HTTP+SSE transport from the start (no detection): GET the URL
        and wait for its ``endpoint`` event, at most ``get_stream_timeout`` seconds.

        Raises:
            trio.BrokenResourceError: the server did not open such a stream.
        """
        if self.mode != "new":
            raise RuntimeError(f"the stream is already in {self.mode!r} mode")
        try:
            with trio.fail_after(self.get_stream_timeout):
                self.endpoint = await self._tasks.start(self._sse_events)  # type: ignore[union-attr]
        except (_NoEventStream, trio.TooSlowError) as exc:
            raise trio.BrokenResourceError(f"no HTTP+SSE event stream at {self.url}") from exc
        self.mode = "sse"

    def close_details(self) -> tuple[int | None, str | None]:
        """What the session reports when the stream ends: why it broke, if it did."""
        return None, self._broken

    # -- delivering to the session ----------------------------------------------------------

    async def _deliver(self, message: Received, source: _Exchange | None = None) -> bool:
        """Hand ``message`` to the session (with the rewrites described in the module
        docstring). Returns whether it answered ``source``."""
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
        self, message: rpc.Message | rpc.InvalidMessage, source: _Exchange | None
    ) -> tuple[rpc.Message | rpc.InvalidMessage, bool]:
        kind = type(message)
        if kind is rpc.ResultResponse or kind is rpc.ErrorResponse:
            wire_id = message.id  # type: ignore[union-attr]
        elif kind is rpc.InvalidMessage:
            wire_id = message.response_id  # type: ignore[union-attr]
        else:
            return message, False
        exchange = self._exchanges.get(wire_id) if wire_id is not None else None
        if exchange is None:
            return message, False
        exchange.answered = True
        if exchange is not source:
            exchange.scope.cancel()  # answered elsewhere (say, on a resumed stream)
        original = exchange.request
        if kind is rpc.ResultResponse:
            result = message.result  # type: ignore[union-attr]
            if original.method == "initialize" and not exchange.modern:
                version = result.get("protocolVersion")
                self.protocol_version = version if isinstance(version, str) else None
            elif original.method == "tools/list" and exchange.modern:
                result = self._learn_tools(result)
            return rpc.ResultResponse(original.id, result), True
        if kind is rpc.ErrorResponse:
            return rpc.ErrorResponse(original.id, message.error), True  # type: ignore[union-attr]
        return rpc.InvalidMessage(message.reason, message.reply, original.id), True  # type: ignore[union-attr]

    async def _answer_error(
        self,
        exchange: _Exchange,
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

    # -- requests ---------------------------------------------------------------------------

    async def _send_request(self, request: rpc.Request) -> None:
        if request.method == "initialize" and self.mode in ("new", "modern"):
            self._begin_legacy(request)
        elif self.mode in ("new", "modern") and declares_modern_version(request.params):
            self.mode = "modern"
        elif self.mode == "sse":
            await self._post_message(request)
            return
        exchange = _Exchange(request, modern=self.mode == "modern")
        await self._slots.acquire()
        try:
            self._register(exchange)
            self._start(self._run_exchange, exchange)
        except BaseException:
            self._unregister(exchange)
            self._slots.release()
            raise

    def _register(self, exchange: _Exchange) -> None:
        self._exchanges[exchange.wire_id] = exchange
        self._by_request[exchange.request.id] = exchange

    def _unregister(self, exchange: _Exchange) -> None:
        if self._exchanges.get(exchange.wire_id) is exchange:
            del self._exchanges[exchange.wire_id]
        if self._by_request.get(exchange.request.id) is exchange:
            del self._by_request[exchange.request.id]

    def _begin_legacy(self, request: rpc.Request) -> None:
        """``initialize`` goes out: the legacy era starts (a modern probe still open is
        abandoned: the client has judged it)."""
        for exchange in list(self._exchanges.values()):
            if exchange.modern:
                exchange.scope.cancel()
        self.mode = "streamable"
        self._initialize = request

    async def _run_exchange(self, exchange: _Exchange) -> None:
        try:
            with exchange.scope:
                if exchange.modern:
                    await self._modern_exchange(exchange)
                else:
                    await self._legacy_exchange(exchange)
        except BodyTooLarge as exc:
            await self._answer_error(exchange, f"the server's answer is too large: {exc}")
        except UnexpectedBody as exc:
            await self._answer_error(exchange, f"unusable answer from the server: {exc}")
        except Exception as exc:  # an auth hook, say: the request fails, not the stream
            log.exception("%s (id %r) failed", exchange.request.method, exchange.request.id)
            await self._answer_error(exchange, f"the HTTP exchange failed: {exc!r}")
        finally:
            self._unregister(exchange)
            self._slots.release()

    async def _cancel(self, notification: rpc.Notification) -> None:
        params = notification.params or {}
        target: Any = params.get("requestId")
        exchange = self._by_request.get(target) if target is not None else None
        if self.mode in ("streamable", "sse"):
            await self._post_message(notification)
        else:
            await trio.lowlevel.checkpoint()
        if exchange is not None:
            exchange.answered = True  # nobody waits for it any more
            exchange.scope.cancel()

    # -- modern -----------------------------------------------------------------------------

    def _modern_headers(self, request: rpc.Request) -> dict[str, str]:
        params = request.params or {}
        meta = params.get("_meta")
        version = meta.get(PROTOCOL_VERSION) if isinstance(meta, Mapping) else None
        headers = {
            "accept": _POST_ACCEPT,
            "content-type": _JSON,
            MCP_METHOD: request.method,
        }
        if isinstance(version, str):
            headers[MCP_PROTOCOL_VERSION] = version
        name = name_source(request.method, params)
        if name is not None:
            headers[MCP_NAME] = encode_value(name)
        if request.method == "tools/call" and name is not None:
            arguments = params.get("arguments")
            for param in self._tool_headers.get(name, ()):
                try:
                    text = param_value_text(param.value_in(arguments))
                except ValueError as exc:
                    log.warning("tool %r: not mirroring %s: %s", name, param.name, exc)
                    continue
                if text is not None:
                    headers[param.header] = encode_value(text)
        return headers

    def _learn_tools(self, result: dict[str, Any]) -> dict[str, Any]:
        """Remember each listed tool's ``x-mcp-header`` parameters; drop the tools whose
        annotations break the rules."""
        tools = result.get("tools")
        if not isinstance(tools, list):
            return result
        kept = []
        for tool in tools:
            schema = tool.get("inputSchema") if isinstance(tool, dict) else None
            name = tool.get("name") if isinstance(tool, dict) else None
            if isinstance(schema, Mapping):
                try:
                    params = header_params(schema)
                except ValueError as exc:
                    log.warning("ignoring tool %r: invalid x-mcp-header: %s", name, exc)
                    continue
                if isinstance(name, str):
                    self._tool_headers[name] = params
            kept.append(tool)
        if len(kept) == len(tools):
            return result
        return {**result, "tools": kept}

    async def _modern_exchange(self, exchange: _Exchange) -> None:
        """POST the request and read its answer; a stream that breaks before the answer is
        re-issued under a fresh id, at most ``reissue_attempts`` times."""
        headers = self._modern_headers(exchange.request)
        for attempt in range(self.reissue_attempts + 1):
            if attempt:
                self._renumber(exchange)
                log.info("re-issuing %s as id %r", exchange.request.method, exchange.wire_id)
            try:
                async with self._http.stream(
                    "POST", self.url, content=rpc.dumps(exchange.wire_message()), headers=headers
                ) as response:
                    if not response.is_success:
                        await self._answer_http_error(exchange, response)
                        return
                    if await self._read_answer(exchange, response):
                        return
                    problem = "the response stream ended without an answer"
            except _UNREACHABLE as exc:
                await self._answer_error(exchange, f"cannot reach {self.url}: {exc!r}")
                return
            except httpx.RequestError as exc:
                problem = f"the response stream broke: {exc!r}"
            if exchange.answered:
                return
            log.debug("%s (id %r): %s", exchange.request.method, exchange.wire_id, problem)
        await self._answer_error(exchange, problem)

    def _renumber(self, exchange: _Exchange) -> None:
        if self._exchanges.get(exchange.wire_id) is exchange:
            del self._exchanges[exchange.wire_id]
        exchange.wire_id = f"trio-mcp-reissue-{next(self._fresh_ids)}"
        exchange.cursor = Cursor()
        self._exchanges[exchange.wire_id] = exchange

    async def _read_answer(self, exchange: _Exchange, response: httpx.Response) -> bool:
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

    async def _answer_http_error(self, exchange: _Exchange, response: httpx.Response) -> None:
        """Answer ``exchange`` from an HTTP error: with the JSON-RPC error in the body if
        there is one, else with an error naming the status."""
        error = await self._error_body(response)
        if error is None:
            await self._answer_error(
                exchange,
                f"HTTP {response.status_code} {response.reason_phrase} from {self.url}",
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

    # -- legacy Streamable HTTP -------------------------------------------------------------

    def _legacy_headers(self) -> dict[str, str]:
        headers = {}
        if self.session_id is not None:
            headers[MCP_SESSION_ID] = self.session_id
        if self.protocol_version is not None:
            headers[MCP_PROTOCOL_VERSION] = self.protocol_version
        return headers

    async def _legacy_exchange(self, exchange: _Exchange) -> None:
        """POST a legacy request and read its answer, re-initializing once if the session
        is gone and resuming a broken event stream with ``Last-Event-ID``."""
        handshake = exchange.request.method == "initialize"
        retried = False
        while True:
            session = self.session_id
            headers = {"accept": _POST_ACCEPT, "content-type": _JSON}
            if not handshake:
                headers.update(self._legacy_headers())
            try:
                async with self._http.stream(
                    "POST", self.url, content=rpc.dumps(exchange.wire_message()), headers=headers
                ) as response:
                    status = response.status_code
                    if status == 404 and session is not None and not retried and not handshake:
                        retried = True
                        if await self._reinitialize(session):
                            continue
                    if handshake and status in (400, 404, 405):
                        error = await self._error_body(response)
                        if error is None or error.code not in _MODERN_ERRORS:
                            await self._fall_back_to_sse(exchange, status, error)
                            return
                        await self._deliver(rpc.ErrorResponse(exchange.wire_id, error), exchange)
                        return
                    if not response.is_success:
                        await self._answer_http_error(exchange, response)
                        return
                    if handshake:
                        self.session_id = response.headers.get(MCP_SESSION_ID)
                    if await self._read_answer(exchange, response):
                        return
            except _UNREACHABLE as exc:
                await self._answer_error(exchange, f"cannot reach {self.url}: {exc!r}")
                return
            except httpx.RequestError as exc:
                log.debug("%s (id %r): %r", exchange.request.method, exchange.wire_id, exc)
            break
        await self._resume(exchange)

    def _retry_delay(self, cursor: Cursor, failures: int) -> float:
        base = cursor.retry if cursor.retry is not None else self.default_retry
        return float(min(base * 2 ** max(failures - 1, 0), max(self.max_retry, base)))

    async def _resume(self, exchange: _Exchange) -> None:
        """The answer's event stream ended early: wait the server's ``retry`` (measured from
        the end), then GET with ``Last-Event-ID`` until the answer comes, backing off on
        failures, at most ``reconnect_attempts`` times in a row."""
        failures = 0
        while not exchange.answered:
            cursor = exchange.cursor
            if cursor.last_event_id is None:
                await self._answer_error(
                    exchange, "the server ended the response stream without an answer"
                )
                return
            if failures >= self.reconnect_attempts:
                await self._answer_error(
                    exchange, f"could not resume the response stream ({failures} attempts)"
                )
                return
            failures += 1
            await trio.sleep(self._retry_delay(cursor, failures))
            headers = {
                "accept": _EVENT_STREAM,
                "last-event-id": cursor.last_event_id,
                **self._legacy_headers(),
            }
            try:
                async with self._http.stream("GET", self.url, headers=headers) as response:
                    if response.status_code == 404 and self.session_id is not None:
                        await self._answer_error(exchange, "the session ended before the answer")
                        return
                    if not response.is_success:
                        continue
                    before = cursor.last_event_id
                    if await self._read_answer(exchange, response):
                        return
                    if cursor.last_event_id != before:
                        failures = 0  # it made progress: only stalls count
            except httpx.RequestError as exc:
                log.debug("resuming %r: %r", exchange.request.id, exc)

    async def _post_message(self, message: rpc.Message) -> None:
        """POST a message that expects no answer body (a legacy notification or response, or
        anything on HTTP+SSE). Failures are logged: nobody waits for them."""
        retried = False
        while True:
            session = self.session_id
            url = self.endpoint if self.mode == "sse" else self.url
            assert url is not None
            headers = {"accept": _POST_ACCEPT, "content-type": _JSON}
            if self.mode == "streamable":
                headers.update(self._legacy_headers())
            try:
                response = await self._http.post(url, content=rpc.dumps(message), headers=headers)
            except httpx.HTTPError as exc:
                if self._ended:
                    raise trio.BrokenResourceError("the server ended the event stream") from exc
                log.warning("could not send %s: %r", _describe(message), exc)
                if type(message) is rpc.Request and self.mode == "sse":
                    await self._deliver(_http_failure(message.id, f"could not send it: {exc!r}"))
                return
            if (
                response.status_code == 404
                and self.mode == "streamable"
                and session is not None
                and not retried
                and type(message) is not rpc.Notification  # a stale session's notices are moot
            ):
                retried = True
                if await self._reinitialize(session):
                    continue
            if not response.is_success:
                log.warning("%s: HTTP %d from the server", _describe(message), response.status_code)
                if type(message) is rpc.Request:
                    await self._deliver(
                        _http_failure(message.id, f"HTTP {response.status_code} from {url}")
                    )
            return

    async def _reinitialize(self, stale: str) -> bool:
        """The server forgot session ``stale`` (HTTP 404): start a new one by repeating our
        ``initialize`` (its answer is not passed on) and ``notifications/initialized``.
        Returns whether there is a new session to retry with."""
        async with self._reinitialize_lock:
            if self.session_id != stale:
                return self.session_id is not None  # another task did it already
            if self._initialize is None or self._reinitializations >= self.reinitialize_attempts:
                return False
            self._reinitializations += 1
            log.warning("the server ended session %s; starting a new one", stale)
            request = rpc.Request(
                f"trio-mcp-reinitialize-{self._reinitializations}",
                "initialize",
                self._initialize.params,
            )
            try:
                with trio.fail_after(self.get_stream_timeout + self.close_timeout):
                    async with self._http.stream(
                        "POST",
                        self.url,
                        content=rpc.dumps(request),
                        headers={"accept": _POST_ACCEPT, "content-type": _JSON},
                    ) as response:
                        session = response.headers.get(MCP_SESSION_ID)
                        if not response.is_success or session is None:
                            log.warning("re-initializing failed: HTTP %d", response.status_code)
                            return False
                        cursor = Cursor()
                        async with aclosing(
                            read_messages(response, self.max_message_size, cursor)
                        ) as messages:
                            async for message in messages:
                                if getattr(message, "id", None) == request.id:
                                    break
                    self.session_id = session
                    await self._http.post(
                        self.url,
                        content=rpc.dumps(rpc.Notification("notifications/initialized")),
                        headers={
                            "accept": _POST_ACCEPT,
                            "content-type": _JSON,
                            **self._legacy_headers(),
                        },
                    )
            except (httpx.HTTPError, UnexpectedBody, BodyTooLarge, trio.TooSlowError) as exc:
                log.warning("re-initializing failed: %r", exc)
                return False
        if self._get_stream_wanted:
            await self._open_get_stream()
        return True

    async def _open_get_stream(self) -> None:
        """Open the standalone GET event stream, for the server's own requests and
        notifications; wait (at most ``get_stream_timeout`` seconds) until the server
        answered it, so that what it sends there is not lost."""
        self._get_stream_wanted = True
        answered = trio.Event()
        self._start(self._get_stream, answered)
        with trio.move_on_after(self.get_stream_timeout):
            await answered.wait()

    async def _get_stream(self, answered: trio.Event) -> None:
        """Read the standalone GET stream, reconnecting (``retry``, ``Last-Event-ID``, with
        backoff) until the server refuses it or ``reconnect_attempts`` tries in a row fail."""
        cursor = Cursor()
        failures = 0
        session = self.session_id
        try:
            while self.session_id == session:
                headers = {"accept": _EVENT_STREAM, **self._legacy_headers()}
                if cursor.last_event_id is not None:
                    headers["last-event-id"] = cursor.last_event_id
                try:
                    async with self._http.stream("GET", self.url, headers=headers) as response:
                        answered.set()
                        if not response.is_success:
                            log.debug("no standalone GET stream: HTTP %d", response.status_code)
                            return
                        before = cursor.last_event_id
                        async with aclosing(
                            read_messages(response, self.max_message_size, cursor)
                        ) as messages:
                            async for message in messages:
                                failures = 0
                                await self._deliver(message)
                        if cursor.last_event_id != before:
                            failures = 0
                except (httpx.RequestError, UnexpectedBody, BodyTooLarge) as exc:
                    log.debug("standalone GET stream: %r", exc)
                failures += 1
                if failures > self.reconnect_attempts:
                    log.warning("giving up the standalone GET stream after %d tries", failures)
                    return
                await trio.sleep(self._retry_delay(cursor, failures))
        finally:
            answered.set()

    # -- 2024-11-05 HTTP+SSE ----------------------------------------------------------------

    async def _fall_back_to_sse(
        self, exchange: _Exchange, status: int, error: Error | None
    ) -> None:
        """``initialize`` was refused as HTTP+SSE servers refuse it: try that transport (GET,
        wait for the ``endpoint`` event, POST ``initialize`` there). If that fails too,
        answer ``initialize`` with the original refusal."""
        try:
            with trio.fail_after(self.get_stream_timeout):
                self.endpoint = await self._tasks.start(self._sse_events)  # type: ignore[union-attr]
        except (_NoEventStream, trio.TooSlowError) as exc:
            log.debug("no HTTP+SSE transport either: %r", exc)
            if error is not None:
                await self._deliver(rpc.ErrorResponse(exchange.wire_id, error), exchange)
            else:
                await self._answer_error(
                    exchange,
                    f"HTTP {status} from {self.url}: not an MCP endpoint",
                    data={"httpStatus": status},
                )
            return
        log.info("%s speaks the 2024-11-05 HTTP+SSE transport", self.url)
        self.mode = "sse"
        # The answer comes on the event stream, not through this exchange.
        self._unregister(exchange)
        await self._post_message(exchange.request)

    async def _sse_events(self, *, task_status: trio.TaskStatus[str]) -> None:
        """The HTTP+SSE event stream: report the ``endpoint``, then pass on every message
        until the server ends the stream (which ends the conversation)."""
        broken: str | None = None
        started = False
        try:
            async with self._http.stream(
                "GET", self.url, headers={"accept": _EVENT_STREAM}
            ) as response:
                if not response.is_success or "event-stream" not in response.headers.get(
                    "content-type", ""
                ):
                    raise _NoEventStream(f"GET answered HTTP {response.status_code}")
                async with aclosing(aiter_events(response, self.max_message_size)) as events:
                    async for event in events:
                        if not started:
                            if event.event != "endpoint" or not event.data.strip():
                                raise _NoEventStream(f"first event was {event.event!r}")
                            task_status.started(urljoin(self.url, event.data.strip()))
                            started = True
                        elif event.event == "message" and event.data.strip():
                            await self._deliver(rpc.parse(event.data))
                if not started:
                    raise _NoEventStream("the event stream ended before the endpoint event")
        except (httpx.RequestError, BodyTooLarge) as exc:
            if not started:
                raise _NoEventStream(repr(exc)) from exc
            broken = f"the server's event stream broke: {exc!r}"
        if started:
            log.debug("the HTTP+SSE event stream ended")
            self._broken = broken
            self._ended = True
            self._incoming_send.close()


def _describe(message: rpc.Message) -> str:
    method = getattr(message, "method", None)
    return method if method is not None else f"the answer to {getattr(message, 'id', None)!r}"


def _http_failure(id: RequestId, text: str) -> rpc.ErrorResponse:
    return rpc.ErrorResponse(id, Error(code=ErrorCode.INTERNAL_ERROR, message=text))


_ = math
