"""Opening an MCP client over HTTP: :func:`open_http_client` and its explicit-nursery form
:func:`connect_http_client`, and the bare stream (:func:`open_http_stream`,
:func:`connect_http_stream`) for callers who build their own session."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any, Literal, Unpack
from urllib.parse import urlsplit

import httpx
import trio

from ..._client._client import HANDSHAKE_TIMEOUT, Client, connect_client
from ..._client._options import ClientOptions
from ..._errors import McpError
from ..._protocol._era import EraCache
from ..._util import open_nursery_unwrapped
from ..._versions import LEGACY_VERSIONS
from ._exchange import close_http_client
from ._stream import HttpClientStream, HttpClientStreamOptions

__all__ = [
    "DEFAULT_TIMEOUT",
    "HttpClientOptions",
    "HttpStreamOptions",
    "connect_http_client",
    "connect_http_stream",
    "era_key",
    "open_http_client",
    "open_http_stream",
]

log = logging.getLogger("trio_mcp.http.client")

#: Connecting, writing and waiting for a pooled connection are bounded; reading is not, because
#: an answer (a long tool call in JSON mode, a subscription) may take as long as it takes. Put
#: the calls that need a deadline in ``trio.fail_after``.
DEFAULT_TIMEOUT = httpx.Timeout(connect=10.0, read=None, write=30.0, pool=30.0)


def era_key(url: str) -> str:
    """What an :class:`~trio_mcp.client.EraCache` remembers a server under: its endpoint
    (scheme, host, port and path; one origin may host servers of both eras)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path or '/'}"


async def connect_http_stream(
    nursery: trio.Nursery,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    auth: httpx.Auth | None = None,
    timeout: httpx.Timeout | float | None = DEFAULT_TIMEOUT,  # noqa: ASYNC109 - per HTTP operation
    http_client: httpx.AsyncClient | None = None,
    transport: Literal["auto", "sse"] = "auto",
    **options: Unpack[HttpClientStreamOptions],
) -> HttpClientStream:
    """An :class:`~trio_mcp.http.HttpClientStream` to ``url`` whose tasks run in ``nursery``.

    Returns at once (nothing is sent until the session sends). Close it with
    ``aclose()``; until then the nursery will not exit.

    Args:
        headers: sent with every HTTP request (the ``Mcp-*`` headers are the stream's).
        auth: an ``httpx.Auth`` flow (bearer tokens, OAuth) applied to every HTTP request.
        timeout: the HTTP timeouts (see :data:`DEFAULT_TIMEOUT`).
        http_client: use this ``httpx.AsyncClient`` (yours to close) instead of making one;
            ``headers``, ``auth`` and ``timeout`` must then be set on it.
        transport: ``"auto"`` follows the session (Streamable HTTP, falling back to
            HTTP+SSE); ``"sse"`` opens the 2024-11-05 HTTP+SSE event stream at once (then
            this blocks until its ``endpoint`` event, at most ``get_stream_timeout``).
        options: the bounds and retry policy of :class:`HttpClientStream`
            (:class:`HttpClientStreamOptions`).

    Raises:
        trio.BrokenResourceError: ``transport="sse"`` and no such event stream.
        ProtocolError: ``transport="sse"`` and the stream's ``endpoint`` event names
            another origin (scheme, host or port).
    """
    if http_client is None:
        http = httpx.AsyncClient(headers=dict(headers or {}), auth=auth, timeout=timeout)
        owns = True
    else:
        if headers is not None or auth is not None:
            raise ValueError("set headers and auth on the http_client you pass")
        http, owns = http_client, False
    stream = HttpClientStream(url, http, owns_http=owns, **options)
    try:
        await nursery.start(stream.run)
    except BaseException:
        if owns:
            await close_http_client(http)  # shielded, bounded
        raise
    if transport == "sse":
        try:
            await stream.open_event_stream()
        except BaseException:
            await stream.aclose()
            raise
    return stream


class HttpStreamOptions(HttpClientStreamOptions, total=False):
    """The keyword options of :func:`open_http_stream` (see :func:`connect_http_stream`):
    the HTTP client's and :class:`HttpClientStreamOptions`."""

    headers: Mapping[str, str] | None
    auth: httpx.Auth | None
    timeout: httpx.Timeout | float | None
    http_client: httpx.AsyncClient | None
    transport: Literal["auto", "sse"]


class HttpClientOptions(HttpStreamOptions, ClientOptions, total=False):
    """The keyword options of :func:`open_http_client` and :func:`connect_http_client`:
    the HTTP stream's (:class:`HttpStreamOptions`) and the client's
    (:class:`~trio_mcp.client.ClientOptions`). ``max_concurrent_requests`` is the
    stream's (the most HTTP exchanges at once)."""


@asynccontextmanager
async def open_http_stream(
    url: str, **options: Unpack[HttpStreamOptions]
) -> AsyncIterator[HttpClientStream]:
    """An :class:`HttpClientStream` for the block (options as :func:`connect_http_stream`).
    Leaving the block closes it: the legacy session is DELETEd and every task ends."""
    async with open_nursery_unwrapped() as nursery:
        stream = await connect_http_stream(nursery, url, **options)
        try:
            yield stream
        finally:
            await stream.aclose()


#: The options :func:`connect_http_client` hands to the stream; the others go to the client.
_STREAM_OPTIONS = HttpStreamOptions.__optional_keys__


async def connect_http_client(
    nursery: trio.Nursery, url: str, **options: Unpack[HttpClientOptions]
) -> Client:
    """A connected :class:`~trio_mcp.Client` for the MCP server at ``url``, whose tasks run
    in ``nursery`` (yours).

    Blocks through the opening. Unless ``protocol_version`` pins a revision, the era is
    detected: a ``server/discover`` POST with the modern headers and envelope; a
    ``DiscoverResult`` (or a 400 carrying a modern error such as -32022, which is answered
    by retrying with a version the server lists) means 2026-07-28; anything else means a
    legacy server, opened with ``initialize``; if that POST is refused with 400, 404 or 405
    the 2024-11-05 HTTP+SSE transport is tried. ``era_cache`` remembers the verdict per
    endpoint (:func:`era_key`), so the next client skips the probe (if a remembered era
    fails, it is forgotten and the era detected again).

    Close it with ``await client.aclose()``.

    Args:
        options: :func:`connect_http_stream`'s (``headers``, ``auth``, ``timeout``,
            ``http_client``, ``transport``, and :class:`HttpClientStream`'s bounds such
            as ``max_message_size`` and ``reconnect_attempts``) and
            :func:`~trio_mcp.connect_client`'s (handlers, ``protocol_version``,
            ``name``, ``era_cache``: where to remember each server's era, ...); all named
            by :class:`HttpClientOptions`.

    Raises:
        McpError: the server refused the opening (an HTTP failure arrives as an
            ``McpError`` whose ``data`` holds ``httpStatus``), or an HTTP+SSE server's
            ``endpoint`` event named another origin (with ``transport="sse"``: a
            :exc:`~trio_mcp.ProtocolError`).
        UnsupportedProtocolVersion: no revision in common.
        trio.TooSlowError: the opening took longer than ``handshake_timeout``.
    """
    client_options: dict[str, Any] = dict(options)
    stream_options = {k: client_options.pop(k) for k in _STREAM_OPTIONS if k in client_options}
    era_cache: EraCache | None = client_options.get("era_cache")
    # An HTTP server answers every request, so its answer (not its silence, as over stdio)
    # tells the era: the probe may take the whole handshake deadline, authorization flow
    # included (a login or a DPoP nonce retry can outlast the stdio probe's few seconds).
    client_options.setdefault(
        "probe_timeout", client_options.get("handshake_timeout", HANDSHAKE_TIMEOUT)
    )
    if stream_options.get("transport") == "sse":
        # The 2024-11-05 transport carries the handshake era only: no modern probe on it.
        client_options.setdefault("versions", LEGACY_VERSIONS)

    async def connect() -> Client:
        stream = await connect_http_stream(nursery, url, **stream_options)
        try:
            return await connect_client(nursery, stream, **client_options)
        except BaseException:
            await stream.aclose()
            raise

    if era_cache is None:
        return await connect()
    key = client_options.setdefault("peer", era_key(url))
    remembered = era_cache.get(key)
    try:
        return await connect()
    except McpError as exc:
        if remembered is None or client_options.get("protocol_version") is not None:
            raise
        # The server changed since we met it: forget what we knew and detect again.
        log.info("%s: the remembered %s era failed (%s); detecting again", url, remembered[0], exc)
        era_cache.forget(key)
        return await connect()


@asynccontextmanager
async def open_http_client(url: str, **options: Unpack[HttpClientOptions]) -> AsyncIterator[Client]:
    """A connected :class:`~trio_mcp.Client` for the MCP server at ``url``, for the block.

    Entering blocks through the opening (see :func:`connect_http_client` for the era
    detection and every option); leaving closes the client: requests still in flight are
    cancelled, a legacy session is ended with DELETE, and no task outlives the block.

    Example::

        async with open_http_client("http://127.0.0.1:8000/mcp") as client:
            tools = await client.list_tools()
            with trio.fail_after(30):
                result = await client.call_tool("add", {"a": 1, "b": 2})
    """
    async with open_nursery_unwrapped() as nursery:
        client = await connect_http_client(nursery, url, **options)
        try:
            yield client
        finally:
            await client.aclose()
