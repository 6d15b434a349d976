"""Sending an HTTP request once more when it failed on a pooled connection that the server
had closed: the keep-alive race.

A server closes a connection it has kept idle long enough (Node's default is 5 s); if
httpx takes that connection from its pool just as the close is on its way, the request
goes out on a dead socket and fails with no answer (``Server disconnected without sending
a response``). The server never read it, so it is sent again, once, as browsers do
(Chromium's ``ShouldResendRequest``); httpcore has dropped the dead connection, so the
second attempt goes out on a new one, or on another pooled one if one is idle (which the
same race could meet again: that second failure is the caller's). A request that failed
on a new connection, or after any byte of the answer, is not sent again: the server may
have acted on it.

Whether the connection was a pooled one is learnt from httpcore's ``trace`` extension;
a transport that does not report it (httpx's ASGI transport, say) never resends.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx

__all__ = ["stream_resending"]

log = logging.getLogger("trio_mcp.http")

#: What a dead pooled connection raises; timeouts are not among them (the server may be
#: working on the request).
_DEAD_CONNECTION = (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)


class _ConnectionWatch:
    """A ``trace`` callback: whether the last attempt of a request (httpx repeats a
    request for authentication and redirects) went out on a pooled connection, and
    whether its answer's headers came."""

    __slots__ = ("_new_connection", "answered", "pooled")

    def __init__(self) -> None:
        self._new_connection = False
        self.pooled = False
        self.answered = False

    async def __call__(self, event: str, info: dict[str, Any]) -> None:
        if event.endswith(".connect_tcp.started"):
            self._new_connection = True
        elif event.endswith(".send_request_headers.started"):
            self.pooled = not self._new_connection
            self._new_connection = False
            self.answered = False
        elif event.endswith(".receive_response_headers.complete"):
            self.answered = True


@asynccontextmanager
async def stream_resending(
    http: httpx.AsyncClient,
    method: str,
    url: str,
    *,
    headers: dict[str, str] | None = None,
    content: bytes | None = None,
    data: dict[str, str] | None = None,
    json: Any = None,
) -> AsyncIterator[httpx.Response]:
    """``http.stream(method, url, ...)``, sent once more if it failed on a pooled
    connection before any byte of the answer (see the module). Blocks until the
    answer's headers came; the body is the caller's to read.

    Raises:
        httpx.HTTPError: as ``http.stream`` does, the second failure if it was sent again.
    """
    for attempt in (1, 2):
        watch = _ConnectionWatch()
        entered = False
        try:
            async with http.stream(
                method,
                url,
                headers=headers,
                content=content,
                data=data,
                json=json,
                extensions={"trace": watch},
            ) as response:
                entered = True
                yield response
                return
        except _DEAD_CONNECTION as exc:
            if entered or attempt == 2 or not watch.pooled or watch.answered:
                raise
            log.debug(
                "%s %s failed on a pooled connection (%r): sending it again", method, url, exc
            )
    raise AssertionError("unreachable")  # pragma: no cover
