"""The legacy mode of the HTTP client stream: Streamable HTTP as in 2025-03-26 ...
2025-11-25, the initialize-handshake era, with its sessions: the ``Mcp-Session-Id`` the
answer to ``initialize`` gives, sent with every later message; the standalone GET stream
for what the server sends of its own; resuming a broken event stream with
``Last-Event-ID``; a new session when the server forgets ours; DELETE at the end.

A server that refuses ``initialize`` may speak the older HTTP+SSE transport instead:
that is :mod:`._sse_2024`'s, and :mod:`._stream` decides (see
:meth:`LegacyStream._initialize_refused`)."""

from __future__ import annotations

import re
from contextlib import aclosing
from typing import Any

import httpx
import trio

from ... import _jsonrpc as rpc
from ..._resend import stream_resending
from ..._types._base import Error
from .._headers import MCP_PROTOCOL_VERSION, MCP_SESSION_ID
from ._bodies import (
    BodyTooLarge,
    Cursor,
    UnexpectedBody,
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
    log,
)

__all__ = ["LegacyStream"]

#: A 400 whose body speaks of the session refuses the session, not the request.
_SESSION = re.compile(rb"session", re.IGNORECASE)


class LegacyStream(ExchangeStream):
    """The legacy part of :class:`~trio_mcp.http.HttpClientStream` (which documents the
    arguments and the ``session_id`` and ``protocol_version`` attributes)."""

    def __init__(
        self, url: str, http: httpx.AsyncClient, owns_http: bool, options: HttpClientStreamOptions
    ) -> None:
        super().__init__(url, http, owns_http=owns_http, **options)
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self._initialize: rpc.JsonRpcRequest | None = None
        self._reinitializations = 0
        self._reinitialize_lock = trio.Lock()
        self._get_stream_wanted = False

    def _take_result(self, exchange: Exchange, result: dict[str, Any]) -> dict[str, Any]:
        if exchange.request.method == "initialize" and not exchange.modern:
            version = result.get("protocolVersion")
            self.protocol_version = version if isinstance(version, str) else None
        return super()._take_result(exchange, result)

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
                async with stream_resending(
                    self._http,
                    "POST",
                    self.url,
                    content=rpc.dumps(exchange.wire_message()),
                    headers=headers,
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
                        await self._initialize_refused(exchange, status, error)
                        return
                    if not response.is_success:
                        await self._answer_http_error(exchange, response)
                        return
                    if handshake:
                        self.session_id = response.headers.get(MCP_SESSION_ID)
                    if await self._read_answer(exchange, response):
                        return
                    problem = "the server ended the response stream without an answer"
            except UNREACHABLE as exc:
                await self._answer_unreachable(exchange, exc)
                return
            except httpx.RequestError as exc:
                log.debug("%s (id %r): %r", exchange.request.method, exchange.wire_id, exc)
                problem = f"the request failed: {exc!r}"
                if exchange.cursor.last_event_id is not None:
                    problem = f"the response stream broke: {exc!r}"
            break
        await self._resume(exchange, problem)

    async def _small_body(self, response: httpx.Response) -> bytes:
        """The body of an error response, or ``b""`` if it is larger than 64 KiB or broke."""
        try:
            return await read_body(response, min(self.max_message_size, 1 << 16))
        except (BodyTooLarge, httpx.RequestError):
            return b""

    async def _resume(self, exchange: Exchange, problem: str) -> None:
        """The answer's event stream ended early (``problem`` says how): wait the server's
        ``retry`` (measured from the end), then GET with ``Last-Event-ID`` until the answer
        comes, backing off on failures, at most ``reconnect_attempts`` times in a row. A
        stream with no event id cannot be resumed: ``problem`` is the answer."""
        failures = 0
        while not exchange.answered:
            cursor = exchange.cursor
            if cursor.last_event_id is None:
                await self._answer_error(exchange, problem)
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
                async with stream_resending(
                    self._http, "GET", self.url, headers=headers
                ) as response:
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

    async def _initialize_refused(
        self, exchange: Exchange, status: int, error: Error | None
    ) -> None:
        """A hook: the server refused ``initialize`` with HTTP 400, 404 or 405 (``error`` is
        the JSON-RPC error in the body, if any). Called while that response is open;
        :class:`~trio_mcp.http.HttpClientStream` answers a modern server's refusal and
        takes any other for an HTTP+SSE server's."""
        raise NotImplementedError

    async def _post_in_session(self, message: rpc.Message) -> None:
        """POST a notification, or a response to a request of the server's, with the
        session's headers. Blocks until the server took it.

        Failures are logged (and a request's is its answer). A notification or response
        the server refuses with 404 belonged to a session it forgot: it is moot, and the
        next request starts a new session.
        """
        await self._post(message, self.url, self._legacy_headers())

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
            request = rpc.JsonRpcRequest(
                f"trio-mcp-reinitialize-{self._reinitializations}",
                "initialize",
                self._initialize.params,
            )
            try:
                with trio.fail_after(self.get_stream_timeout + self.close_timeout):
                    async with stream_resending(
                        self._http,
                        "POST",
                        self.url,
                        content=rpc.dumps(request),
                        headers={"accept": POST_ACCEPT, "content-type": JSON},
                    ) as response:
                        session = response.headers.get(MCP_SESSION_ID)
                        if not response.is_success or session is None:
                            log.warning("re-initializing failed: HTTP %d", response.status_code)
                            return False
                        answer = await self._own_answer(response, request)
                        if not isinstance(answer, rpc.ResultResponse):
                            log.warning("re-initializing failed: %r", answer)
                            return False
                    self.session_id = session
                    async with stream_resending(
                        self._http,
                        "POST",
                        self.url,
                        content=rpc.dumps(rpc.JsonRpcNotification("notifications/initialized")),
                        headers={
                            "accept": POST_ACCEPT,
                            "content-type": JSON,
                            **self._legacy_headers(),
                        },
                    ) as response:
                        await self._small_body(response)
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
                    async with stream_resending(
                        self._http, "GET", self.url, headers=headers
                    ) as response:
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


def _error_in(body: bytes) -> Error | None:
    """The JSON-RPC error an error response's body holds, if it holds one."""
    message = rpc.parse(body) if body.strip() else None
    return message.error if isinstance(message, rpc.ErrorResponse) else None
