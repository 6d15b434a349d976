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
  endpoint to POST to (on the stream's origin: same scheme, host and port, else
  :exc:`~trio_mcp.ProtocolError`), and everything from the server then arrives
  on that stream.

The legacy sessions are :class:`~._legacy.LegacyStream`'s and the HTTP+SSE transport
:class:`~._sse_2024.Sse2024Stream`'s: two sides of :class:`~._exchange.ExchangeStream`
that know nothing of each other. :class:`HttpClientStream` joins them and chooses the mode,
the fall-back from one to the other included.

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
created it. A runner cancelled from outside (its nursery, when a host is left)
does the same, in the same order: the DELETE always goes out before the client
that sends it is closed, whichever of the two ends first. At most
``max_concurrent_requests`` exchanges run at once: beyond that,
:meth:`~HttpClientStream.send` blocks. At most ``buffer`` received messages
wait for :meth:`~HttpClientStream.receive`: beyond that, reading the HTTP
bodies stops.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any, Unpack

import httpx
import trio

from ... import _jsonrpc as rpc
from ..._auth._client._errors import AuthorizationError
from ..._errors import ErrorCode
from ..._protocol._envelope import PROTOCOL_VERSION, declares_modern_version
from ..._resend import stream_resending
from ..._transports._stream import Received
from ..._types._base import Error, RequestId
from .._headers import (
    MCP_METHOD,
    MCP_NAME,
    MCP_PROTOCOL_VERSION,
    HeaderParam,
    encode_value,
    header_params,
    name_source,
    param_value_text,
)
from ._bodies import BodyTooLarge, Cursor, UnexpectedBody
from ._exchange import (
    JSON,
    POST_ACCEPT,
    UNREACHABLE,
    Exchange,
    HttpClientStreamOptions,
    Mode,
    log,
)
from ._legacy import LegacyStream
from ._sse_2024 import Sse2024Stream

__all__ = ["HttpClientStream", "HttpClientStreamOptions", "Mode"]

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


class HttpClientStream(LegacyStream, Sse2024Stream):
    """The client end of an MCP conversation over HTTP (see the module docstring).

    Create it with :func:`~trio_mcp.http.connect_http_stream` or
    :func:`~trio_mcp.http.open_http_stream`, which start its runner.

    Args:
        url: the MCP endpoint.
        http: the ``httpx.AsyncClient`` to send with.
        owns_http: close ``http`` when the stream's runner ends.
        max_message_size: the most bytes one JSON body or SSE event may hold.
        buffer: how many received messages may wait for :meth:`receive`.
        max_concurrent_requests: the most exchanges at once; :meth:`send` waits beyond.
        reissue_attempts: (modern) how many times a request whose response stream broke
            is sent again under a fresh id.
        reconnect_attempts: (legacy) how many reconnections of an event stream may fail
            in a row (``retry`` from the server, doubling on each failure).
        default_retry: seconds to wait before reconnecting when the server gave no
            ``retry``; ``max_retry`` caps the backoff.
        reinitialize_attempts: (legacy) how many times a session the server forgot is
            replaced by a new one.
        get_stream_timeout: (legacy) how long to wait for the server to answer the
            standalone GET, or the HTTP+SSE event stream to name its endpoint.
        close_timeout: how long the DELETE ending a legacy session may take.

    Attributes:
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
        **options: Unpack[HttpClientStreamOptions],
    ) -> None:
        super().__init__(url, http, owns_http, options)
        self._tool_headers: dict[str, list[HeaderParam]] = {}
        self._fresh_ids = itertools.count(1)

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
        if isinstance(message, rpc.JsonRpcRequest):
            await self._send_request(message)
            return
        if (
            isinstance(message, rpc.JsonRpcNotification)
            and message.method == "notifications/cancelled"
        ):
            await self._cancel(message)
            return
        if self.mode in ("new", "modern"):
            # The modern wire has no client notifications and no server requests to answer.
            log.debug("not sent on modern HTTP: %r", message)
            await trio.lowlevel.checkpoint()
            return
        await self._post_message(message)
        if (
            self.mode == "streamable"
            and isinstance(message, rpc.JsonRpcNotification)
            and message.method == "notifications/initialized"
        ):
            await self._open_get_stream()

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
            await self._goodbye_once()  # before the runner closes the HTTP client
        finally:
            self._run_scope.cancel()
            await trio.lowlevel.cancel_shielded_checkpoint()

    # -- requests ---------------------------------------------------------------------------

    async def _send_request(self, request: rpc.JsonRpcRequest) -> None:
        if request.method == "initialize" and self.mode in ("new", "modern"):
            self._begin_legacy(request)
        elif self.mode in ("new", "modern") and declares_modern_version(request.params):
            self.mode = "modern"
        elif self.mode == "sse":
            await self._post_message(request)
            return
        exchange = Exchange(request, modern=self.mode == "modern")
        await self._slots.acquire()
        try:
            self._register(exchange)
            self._start(self._run_exchange, exchange)
        except BaseException:
            self._unregister(exchange)
            self._slots.release()
            raise

    def _begin_legacy(self, request: rpc.JsonRpcRequest) -> None:
        """``initialize`` goes out: the legacy era starts (a modern probe still open is
        abandoned: the client has judged it)."""
        for exchange in list(self._exchanges.values()):
            if exchange.modern:
                exchange.scope.cancel()
        self.mode = "streamable"
        self._initialize = request

    async def _run_exchange(self, exchange: Exchange) -> None:
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
        except AuthorizationError as exc:  # the auth flow refused: say why, no traceback
            await self._answer_error(exchange, f"authorization failed: {exc}")
        except Exception as exc:  # noqa: BLE001 - an auth hook, say: fail the request, not the stream
            log.exception("%s (id %r) failed", exchange.request.method, exchange.request.id)
            await self._answer_error(exchange, f"the HTTP exchange failed: {exc!r}")
        finally:
            self._unregister(exchange)
            self._slots.release()

    async def _post_message(self, message: rpc.Message) -> None:
        """POST a message whose answer, if any, does not come in the HTTP response: a legacy
        notification or response, or anything on HTTP+SSE (to the endpoint its event
        stream named). Blocks until the server took it; failures are logged, and a
        request's is its answer."""
        if self.mode == "sse":
            await self._post_to_endpoint(message)
        else:
            await self._post_in_session(message)

    async def _initialize_refused(
        self, exchange: Exchange, status: int, error: Error | None
    ) -> None:
        """``initialize`` was refused with HTTP 400, 404 or 405: a modern error in the body
        is the answer; any other refusal is taken for an HTTP+SSE server's, and that
        transport is tried."""
        if error is None or error.code not in _MODERN_ERRORS:
            await self._fall_back_to_sse(exchange, status, error)
            return
        await self._deliver(rpc.ErrorResponse(exchange.wire_id, error), exchange)

    async def _cancel(self, notification: rpc.JsonRpcNotification) -> None:
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

    # -- the modern era (2026-07-28) --------------------------------------------------------

    def _take_result(self, exchange: Exchange, result: dict[str, Any]) -> dict[str, Any]:
        if exchange.request.method == "tools/list" and exchange.modern:
            result = self._learn_tools(result)
        return super()._take_result(exchange, result)

    def _modern_headers(self, request: rpc.JsonRpcRequest) -> dict[str, str]:
        params = request.params or {}
        meta = params.get("_meta")
        version = meta.get(PROTOCOL_VERSION) if isinstance(meta, Mapping) else None
        headers = {
            "accept": POST_ACCEPT,
            "content-type": JSON,
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

    async def _modern_exchange(self, exchange: Exchange) -> None:
        """POST the request and read its answer.

        A stream that breaks before the answer is re-issued under a fresh id, at most
        ``reissue_attempts`` times. A ``tools/call`` refused with ``HeaderMismatch``
        (-32020) makes the stream list the tools again, quietly, and retry once with the
        ``Mcp-Param-*`` headers their schemas now ask for, as the spec advises.
        """
        headers = self._modern_headers(exchange.request)
        breaks = 0
        refreshed = exchange.request.method != "tools/call"
        while True:
            try:
                async with stream_resending(
                    self._http,
                    "POST",
                    self.url,
                    content=rpc.dumps(exchange.wire_message()),
                    headers=headers,
                ) as response:
                    if not response.is_success:
                        error = await self._error_body(response)
                        mismatch = error is not None and error.code == ErrorCode.HEADER_MISMATCH
                        if mismatch and not refreshed:
                            refreshed = True
                            await self._refresh_tools(exchange.request)
                            headers = self._modern_headers(exchange.request)
                            self._renumber(exchange)
                            continue
                        await self._answer_refusal(exchange, response, error)
                        return
                    if await self._read_answer(exchange, response):
                        return
                    problem = "the response stream ended without an answer"
            except UNREACHABLE as exc:
                await self._answer_unreachable(exchange, exc)
                return
            except httpx.RequestError as exc:
                problem = f"the response stream broke: {exc!r}"
            if exchange.answered:
                return
            log.debug("%s (id %r): %s", exchange.request.method, exchange.wire_id, problem)
            breaks += 1
            if breaks > self.reissue_attempts:
                break
            self._renumber(exchange)
            log.info("re-issuing %s as id %r", exchange.request.method, exchange.wire_id)
        await self._answer_error(exchange, problem)

    async def _refresh_tools(self, call: rpc.JsonRpcRequest, *, max_pages: int = 10) -> None:
        """List the tools again, for the stream only (the session sees nothing), to learn
        their ``x-mcp-header`` parameters anew. Failures are logged."""
        meta = (call.params or {}).get("_meta")
        envelope = {
            key: value
            for key, value in (meta.items() if isinstance(meta, Mapping) else ())
            if key.startswith("io.modelcontextprotocol/")
        }
        cursor: Any = None
        for _ in range(max_pages):
            params: dict[str, Any] = {"_meta": envelope}
            if cursor is not None:
                params["cursor"] = cursor
            request = rpc.JsonRpcRequest(
                f"trio-mcp-tools-{next(self._fresh_ids)}", "tools/list", params
            )
            answer: Received | None = None
            try:
                async with stream_resending(
                    self._http,
                    "POST",
                    self.url,
                    content=rpc.dumps(request),
                    headers=self._modern_headers(request),
                ) as response:
                    if response.is_success:
                        answer = await self._own_answer(response, request)
            except (httpx.RequestError, BodyTooLarge, UnexpectedBody) as exc:
                log.warning("could not list the tools again: %r", exc)
                return
            if not isinstance(answer, rpc.ResultResponse):
                log.warning("could not list the tools again: %r", answer)
                return
            self._learn_tools(answer.result)
            cursor = answer.result.get("nextCursor")
            if cursor is None:
                return

    def _renumber(self, exchange: Exchange) -> None:
        if self._exchanges.get(exchange.wire_id) is exchange:
            del self._exchanges[exchange.wire_id]
        exchange.wire_id = f"trio-mcp-reissue-{next(self._fresh_ids)}"
        exchange.cursor = Cursor()
        self._exchanges[exchange.wire_id] = exchange
