"""Reading what an MCP server sends back over HTTP: JSON bodies and Server-Sent Events,
each bounded in size.

The SSE parsing is ``httpx-sse``'s (fields ``event``/``id``/``retry``/``data``, comments,
multi-line ``data``, any of the three line endings); this module feeds it bytes decoded
incrementally as UTF-8 and stops a peer that sends one endless event.
"""

from __future__ import annotations

import codecs
from collections.abc import AsyncGenerator
from typing import Literal

import attrs
import httpx
from httpx_sse import ServerSentEvent
from httpx_sse._decoders import SSEDecoder, SSELineDecoder

from ... import _jsonrpc as rpc
from ..._transports._stream import Received

__all__ = [
    "BodyTooLarge",
    "Cursor",
    "UnexpectedBody",
    "aiter_events",
    "body_kind",
    "read_body",
    "read_messages",
]


class BodyTooLarge(Exception):
    """The server sent more than the size limit in one JSON body or one SSE event."""


class UnexpectedBody(Exception):
    """The answer to a request is neither JSON nor an event stream."""


@attrs.define
class Cursor:
    """Where an SSE stream got to: the last event id (for ``Last-Event-ID``) and the last
    ``retry`` the server asked for, in seconds."""

    last_event_id: str | None = None
    retry: float | None = None

    def update(self, event: ServerSentEvent) -> None:
        if event.id:
            self.last_event_id = event.id
        if event.retry is not None and event.retry >= 0:
            self.retry = event.retry / 1000


def body_kind(response: httpx.Response) -> Literal["json", "sse", "other"]:
    """What a response body holds, by its ``Content-Type``."""
    content_type = response.headers.get("content-type", "").partition(";")[0].strip().lower()
    if content_type == "text/event-stream":
        return "sse"
    if content_type == "application/json" or content_type.endswith("+json"):
        return "json"
    return "other"


async def read_body(response: httpx.Response, limit: int) -> bytes:
    """The whole body, or :exc:`BodyTooLarge` as soon as it passes ``limit`` bytes.

    Blocks until the body has arrived."""
    declared = response.headers.get("content-length")
    if (
        declared is not None
        and declared.isascii()
        and declared.isdigit()
        and (len(declared) > 18 or int(declared) > limit)
    ):
        raise BodyTooLarge(f"the response body is {declared} bytes (limit {limit})")
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(f"the response body passed {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


async def aiter_events(
    response: httpx.Response, limit: int
) -> AsyncGenerator[ServerSentEvent, None]:
    """The events of an SSE response, as they arrive.

    Blocks while the server sends nothing. Ends at the end of the body (an
    unterminated last event is discarded, as the SSE standard says). Raises
    :exc:`BodyTooLarge` when one event passes ``limit`` characters.
    """
    text = codecs.getincrementaldecoder("utf-8")(errors="replace")
    lines = SSELineDecoder()
    events = SSEDecoder()
    pending = 0  # characters since the last dispatched event
    async for chunk in response.aiter_bytes():
        for line in lines.decode(text.decode(chunk)):
            pending += len(line)
            if pending > limit:
                raise BodyTooLarge(f"an SSE event passed {limit} characters")
            event = events.decode(line)
            if event is not None:
                pending = 0
                yield event
        if pending + sum(len(part) for part in lines.buffer) > limit:
            raise BodyTooLarge(f"an SSE event passed {limit} characters")
    for line in lines.decode(text.decode(b"", final=True)) + lines.flush():
        event = events.decode(line)
        if event is not None:
            yield event


async def read_messages(
    response: httpx.Response, limit: int, cursor: Cursor
) -> AsyncGenerator[Received, None]:
    """The JSON-RPC messages of a response body: one JSON value, or one per SSE ``message``
    event (events with empty data, such as a priming event, only move ``cursor``).

    Blocks while the server sends nothing; ends with the body.

    Raises:
        BodyTooLarge: a body or an event passed ``limit``.
        UnexpectedBody: the body is neither JSON nor an event stream.
        httpx.RequestError: the connection broke.
    """
    kind = body_kind(response)
    if kind == "json":
        yield rpc.parse(await read_body(response, limit))
        return
    if kind != "sse":
        content_type = response.headers.get("content-type", "(none)")
        raise UnexpectedBody(f"unexpected Content-Type {content_type!r}")
    async for event in aiter_events(response, limit):
        cursor.update(event)
        if event.event != "message" or not event.data.strip():
            continue
        yield rpc.parse(event.data)
