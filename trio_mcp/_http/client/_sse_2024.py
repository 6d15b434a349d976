"""The sse_2024 mode of the HTTP client stream (``mode == "sse"``): the HTTP+SSE
transport of 2024-11-05, deprecated since 2025-03-26. A GET on the URL opens one event
stream from the server, whose first event (``endpoint``) names where to POST every message;
everything the server sends, answers included, then arrives on that stream, and its end
ends the conversation.

The stream speaks it from the start (``transport="sse"``:
:meth:`Sse2024Stream.open_event_stream`), or falls back to it when a server refuses
``initialize`` as HTTP+SSE servers do (:meth:`Sse2024Stream._fall_back_to_sse`, called by
:mod:`._stream`, which chooses the mode).
"""

from __future__ import annotations

from contextlib import aclosing
from urllib.parse import SplitResult, urljoin, urlsplit

import httpx
import trio

from ... import _jsonrpc as rpc
from ..._errors import ProtocolError
from ..._resend import stream_resending
from ..._types._base import Error
from ._bodies import BodyTooLarge, aiter_events
from ._exchange import EVENT_STREAM, Exchange, ExchangeStream, log

__all__ = ["Sse2024Stream"]


class _NoEventStream(Exception):
    """The 2024-11-05 transport failed: the GET did not open an event stream with an
    ``endpoint`` event."""


class Sse2024Stream(ExchangeStream):
    """The sse_2024 part of :class:`~trio_mcp.http.HttpClientStream` (which documents the
    arguments and the ``endpoint`` attribute)."""

    #: Where messages are POSTed, once the event stream named it (the stream has no state
    #: of this transport's besides, so no ``__init__`` of its own).
    endpoint: str | None = None

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
        await self._post_to_endpoint(exchange.request)

    async def _post_to_endpoint(self, message: rpc.Message) -> None:
        """POST ``message`` to the endpoint the event stream named (its answer, if any,
        comes on the event stream). Blocks until the server took it; failures are logged,
        and a request's is its answer.

        Raises:
            trio.BrokenResourceError: the POST failed after the event stream ended.
        """
        assert self.endpoint is not None
        await self._post(message, self.endpoint, {})

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
            async with stream_resending(
                self._http, "GET", self.url, headers={"accept": EVENT_STREAM}
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


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin(parts: SplitResult) -> tuple[str, str, int | None] | None:
    try:
        port = parts.port or _DEFAULT_PORTS.get(parts.scheme)
    except ValueError:
        return None  # a malformed port
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    return (parts.scheme, parts.hostname, port)
