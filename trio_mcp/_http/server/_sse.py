"""Server-Sent Events framing: the bytes of one event, a priming event, a keep-alive.

Every event carries one complete JSON-RPC message on a single ``data:`` line
(``orjson`` output never contains a raw newline), which is what line-by-line
readers such as the conformance harness expect.
"""

from __future__ import annotations

from typing import Final

__all__ = ["KEEPALIVE", "endpoint_event", "message_event", "priming_event"]

#: A comment line: keeps idle connections open through proxies; clients ignore it.
KEEPALIVE: Final = b": keep-alive\n\n"


def message_event(data: bytes, event_id: str | None = None) -> bytes:
    """One ``message`` event carrying ``data`` (a serialized JSON-RPC message)."""
    if b"\n" in data or b"\r" in data:
        # Not produced by our serializer; split rather than corrupt the stream.
        lines = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        body = b"".join(b"data: " + line + b"\n" for line in lines)
    else:
        body = b"data: " + data + b"\n"
    if event_id is None:
        return b"event: message\n" + body + b"\n"
    return b"event: message\nid: " + event_id.encode("ascii") + b"\n" + body + b"\n"


def priming_event(event_id: str, retry_ms: int | None) -> bytes:
    """The first event of a resumable stream: an id to resume from, and how long to wait
    before reconnecting (``retry:``), with empty data (SEP-1699)."""
    head = b"id: " + event_id.encode("ascii") + b"\n"
    if retry_ms is not None:
        head += b"retry: %d\n" % retry_ms
    return head + b"data: \n\n"


def endpoint_event(url: str) -> bytes:
    """The first event of a 2024-11-05 HTTP+SSE stream: where to POST messages."""
    return b"event: endpoint\ndata: " + url.encode("utf-8") + b"\n\n"
