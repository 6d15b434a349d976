"""The legacy eras of the HTTP client stream: Streamable HTTP as in 2025-03-26 ...
2025-11-25 (a session id, the standalone GET stream, resuming a broken event stream with
``Last-Event-ID``, a new session when the server forgets ours), and the 2024-11-05
HTTP+SSE transport (one event stream from the server, messages POSTed to the endpoint it
names)."""

from __future__ import annotations

import re
from contextlib import aclosing
from typing import Any
from urllib.parse import SplitResult, urljoin, urlsplit

import httpx
import trio

from ... import _jsonrpc as rpc
from ..._errors import ErrorCode, ProtocolError
from ..._types._base import Error
from .._headers import MCP_PROTOCOL_VERSION, MCP_SESSION_ID
from ._bodies import (
    BodyTooLarge,
    Cursor,
    UnexpectedBody,
    aiter_events,
    read_body,
    read_messages,
)
from ._exchange import (
    EVENT_STREAM,
    JSON,
    POST_ACCEPT,
    UNREACHABLE,
    Exchange,
    ExchangeStream,
    HttpClientStreamOptions,
    http_failure,
    log,
)

__all__ = ["LegacyStream"]

#: JSON-RPC errors by which a modern (2026-07-28) server refuses a request, unknown methods
#: included: with one of these in the body, a 400/404/405 is not an HTTP+SSE server's.
_MODERN_ERRORS = frozenset(
    {
        ErrorCode.METHOD_NOT_FOUND,
        ErrorCode.HEADER_MISMATCH,
        ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY,
        ErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
    }
)


#: A 400 whose body speaks of the session refuses the session, not the request.
_SESSION = re.compile(rb"session", re.IGNORECASE)


class _NoEventStream(Exception):
    """The 2024-11-05 fallback failed: the GET did not open an event stream with an
    ``endpoint`` event."""


class LegacyStream(ExchangeStream):
    """The legacy part of :class:`~trio_mcp.http.HttpClientStream`."""

    def __init__(
        self, url: str, http: httpx.AsyncClient, owns_http: bool, options: HttpClientStreamOptions
    ) -> None:
        super().__init__(url, http, owns_http=owns_http, **options)
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.endpoint: str | None = None
        self._initialize: rpc.Request | None = None
        self._reinitializations = 0
        self._reinitialize_lock = trio.Lock()
        self._get_stream_wanted = False

    def _take_result(self, exchange: Exchange, result: dict[str, Any]) -> dict[str, Any]:
        if exchange.request.method == "initialize" and not exchange.modern:
            version = result.get("protocolVersion")
            self.protocol_version = version if isinstance(version, str) else None
        return super()._take_result(exchange, result)

    # -- Streamable HTTP, 2025-03-26 ... 2025-11-25 -----------------------------------------

    async def _say_goodbye(self) -> None:
        """End the legacy session with DELETE (failures are logged: the server forgets
        the session by itself in the end)."""
        if self.mode != "streamable" or self.session_id is None:
            await trio.lowlevel.checkpoint()
            return
        try:
            response = await self._http.delete(self.url, headers=self._legacy_headers())
            log.debug("DELETE of the session: HTTP %d", response.status_code)
        except httpx.HTTPError as exc:
            log.debug("DELETE of the session failed: %r", exc)

    def _legacy_headers(self) -> dict[str, str]:
        headers = {}
        if self.session_id is not None:
            headers[MCP_SESSION_ID] = self.session_id
        if self.protocol_version is not None:
            headers[MCP_PROTOCOL_VERSION] = self.protocol_version
        return headers

    async def _legacy_exchange(self, exchange: Exchange) -> None:
        """POST a legacy request and read its answer, re-initializing once if the session
        is gone (404, or 400 "no valid session") and resuming a broken event stream with
        ``Last-Event-ID``."""
        handshake = exchange.request.method == "initialize"
        retried = False
        while True:
            session = self.session_id
            headers = {"accept": POST_ACCEPT, "content-type": JSON}
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
                    if status == 400 and session is not None and not handshake:
                        # Some servers answer an unknown session with 400 ("Bad Request: No
                        # valid session ID provided") rather than the spec's 404.
                        body = await self._small_body(response)
                        if not retried and _SESSION.search(body):
                            retried = True
                            if await self._reinitialize(session):
                                continue
                        await self._answer_refusal(exchange, response, _error_in(body))
                        return
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
            except UNREACHABLE as exc:
                await self._answer_unreachable(exchange, exc)
                return
            except httpx.RequestError as exc:
                log.debug("%s (id %r): %r", exchange.request.method, exchange.wire_id, exc)
            break
        await self._resume(exchange)

    async def _small_body(self, response: httpx.Response) -> bytes:
        """The body of an error response, or ``b""`` if it is larger than 64 KiB or broke."""
        try:
            return await read_body(response, min(self.max_message_size, 1 << 16))
        except (BodyTooLarge, httpx.RequestError):
            return b""

    async def _resume(self, exchange: Exchange) -> None:
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
                "accept": EVENT_STREAM,
                "last-event-id": cursor.last_event_id,
                **self._legacy_headers(),
            }
            try:
                async with self._http.stream("GET", self.url, headers=headers) as response:
                    if response.status_code == 404 and self.session_id is not None:
                        await self._answer_error(exchange, "the session ended before the answer")
                        return
                    if response.status_code in (400, 410):
                        # The server cannot resume that stream (its events were evicted,
                        # say): asking again will not change that; the session goes on.
                        await self._answer_http_error(exchange, response)
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
        """POST a message whose answer, if any, does not come in the HTTP response: a legacy
        notification or response, or anything on HTTP+SSE. Blocks until the server took it.

        Failures are logged (and a request's is its answer). A legacy notification or
        response the server refuses with 404 belonged to a session it forgot: it is moot,
        and the next request starts a new session.
        """
        url = self.endpoint if self.mode == "sse" else self.url
        assert url is not None
        headers = {"accept": POST_ACCEPT, "content-type": JSON}
        if self.mode == "streamable":
            headers.update(self._legacy_headers())
        try:
            response = await self._http.post(url, content=rpc.dumps(message), headers=headers)
        except httpx.HTTPError as exc:
            if self._ended:
                raise trio.BrokenResourceError("the server ended the event stream") from exc
            log.warning("could not send %s: %r", _describe(message), exc)
            if type(message) is rpc.Request:
                await self._deliver(http_failure(message.id, f"could not send it: {exc!r}"))
            return
        if not response.is_success:
            log.warning("%s: HTTP %d from the server", _describe(message), response.status_code)
            if type(message) is rpc.Request:
                await self._deliver(
                    http_failure(message.id, f"HTTP {response.status_code} from {url}")
                )

    async def _reinitialize(self, stale: str) -> bool:
        """The server forgot session ``stale`` (HTTP 404, or a 400 whose body speaks of the
        session): start a new one by repeating our
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
                        headers={"accept": POST_ACCEPT, "content-type": JSON},
                    ) as response:
                        session = response.headers.get(MCP_SESSION_ID)
                        if not response.is_success or session is None:
                            log.warning("re-initializing failed: HTTP %d", response.status_code)
                            return False
                        answer: Any = None
                        async with aclosing(
                            read_messages(response, self.max_message_size, Cursor())
                        ) as messages:
                            async for message in messages:
                                if getattr(message, "id", None) == request.id:
                                    answer = message
                                    break
                        if not isinstance(answer, rpc.ResultResponse):
                            log.warning("re-initializing failed: %r", answer)
                            return False
                    self.session_id = session
                    await self._http.post(
                        self.url,
                        content=rpc.dumps(rpc.Notification("notifications/initialized")),
                        headers={
                            "accept": POST_ACCEPT,
                            "content-type": JSON,
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
                headers = {"accept": EVENT_STREAM, **self._legacy_headers()}
                if cursor.last_event_id is not None:
                    headers["last-event-id"] = cursor.last_event_id
                try:
                    async with self._http.stream("GET", self.url, headers=headers) as response:
                        answered.set()
                        resumed = cursor.last_event_id is not None
                        if resumed and response.status_code in (400, 410):
                            log.warning(
                                "the standalone GET stream could not be resumed (HTTP %d): "
                                "what the server sent meanwhile is lost; opening a new one",
                                response.status_code,
                            )
                            cursor = Cursor()
                            continue
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

    # -- HTTP+SSE, 2024-11-05 ---------------------------------------------------------------

    async def open_event_stream(self) -> None:
        """Use the 2024-11-05 HTTP+SSE transport from the start (no detection): GET the URL
        and wait for its ``endpoint`` event, at most ``get_stream_timeout`` seconds.

        Raises:
            trio.BrokenResourceError: the server did not open such a stream.
            ProtocolError: its ``endpoint`` event names another origin.
        """
        if self.mode != "new":
            raise RuntimeError(f"the stream is already in {self.mode!r} mode")
        try:
            with trio.fail_after(self.get_stream_timeout):
                self.endpoint = await self._tasks.start(self._sse_events)  # type: ignore[union-attr]
        except (_NoEventStream, trio.TooSlowError) as exc:
            raise trio.BrokenResourceError(f"no HTTP+SSE event stream at {self.url}") from exc
        self.mode = "sse"

    async def _fall_back_to_sse(self, exchange: Exchange, status: int, error: Error | None) -> None:
        """``initialize`` was refused as HTTP+SSE servers refuse it: try that transport (GET,
        wait for the ``endpoint`` event, POST ``initialize`` there). If that fails too,
        answer ``initialize`` with the original refusal (or, if the event stream named an
        endpoint on another origin, with that)."""
        try:
            with trio.fail_after(self.get_stream_timeout):
                self.endpoint = await self._tasks.start(self._sse_events)  # type: ignore[union-attr]
        except ProtocolError as exc:
            await self._deliver(rpc.ErrorResponse(exchange.wire_id, exc.error), exchange)
            return
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
        until the server ends the stream (which ends the conversation).

        Raises:
            ProtocolError: (before reporting) the endpoint is not on the event stream's
                origin: following it would send our messages, and the ``headers`` and
                ``auth`` of every request, to a server the caller never named.
        """
        broken: str | None = None
        started = False
        try:
            async with self._http.stream(
                "GET", self.url, headers={"accept": EVENT_STREAM}
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
                            task_status.started(self._same_origin(event.data.strip()))
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

    def _same_origin(self, endpoint: str) -> str:
        """The absolute URL of an ``endpoint`` event's reference (resolved against the event
        stream's URL), if it has the same scheme, host and port.

        Raises:
            ProtocolError: it has not (or is no HTTP URL).
        """
        url = urljoin(self.url, endpoint)
        origin = _origin(urlsplit(url))
        if origin is None or origin != _origin(urlsplit(self.url)):
            raise ProtocolError(
                f"the HTTP+SSE endpoint event names {url!r}, which is not on the origin of "
                f"{self.url!r} (the scheme, host and port must be the same)"
            )
        return url


def _error_in(body: bytes) -> Error | None:
    """The JSON-RPC error an error response's body holds, if it holds one."""
    message = rpc.parse(body) if body.strip() else None
    return message.error if isinstance(message, rpc.ErrorResponse) else None


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin(parts: SplitResult) -> tuple[str, str, int | None] | None:
    try:
        port = parts.port or _DEFAULT_PORTS.get(parts.scheme)
    except ValueError:
        return None  # a malformed port
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    return (parts.scheme, parts.hostname, port)


def _describe(message: rpc.Message) -> str:
    method = getattr(message, "method", None)
    return method if method is not None else f"the answer to {getattr(message, 'id', None)!r}"
