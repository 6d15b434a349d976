"""Reading server cards and catalogs over HTTP (httpx), and where to find them.

Resource handling
-----------------

Each call makes one ``GET`` (following redirects) on the client you pass, or on one of its
own that it closes before returning. It has no timeout of its own: bound it with the
caller's cancel scope (``with trio.fail_after(10): ...``), which cancels the request.
A body is read up to ``max_bytes`` and no further.

Error handling
--------------

Whatever makes a card or catalog unusable raises :exc:`~trio_mcp.cards.CardError`, with a
message that says what: the request failing, a status other than 200, a body that is not
JSON (by its ``Content-Type``, or its bytes), a body over ``max_bytes``, and every
schema violation, naming the member (see :func:`~trio_mcp.cards.parse_card`).
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Final
from urllib.parse import urlsplit, urlunsplit

import httpx
import trio

from ._model import (
    CARD_MIME_TYPE,
    CARD_SUFFIX,
    CATALOG_PATH,
    CardError,
    Catalog,
    ServerCard,
    parse_card,
    parse_catalog,
)

__all__ = [
    "MAX_CARD_BYTES",
    "card_url",
    "catalog_url",
    "fetch_catalog",
    "fetch_server_card",
]

#: The largest card or catalog body read (256 KiB: a card is a few hundred bytes, but its
#: icons may be ``data:`` URIs).
MAX_CARD_BYTES: Final = 256 * 1024


def card_url(url: str) -> str:
    """Where the card of the server at ``url`` is: the reserved location, its Streamable
    HTTP URL's path with ``/server-card`` appended (query and fragment dropped, one
    trailing slash collapsed). A URL that already ends in ``/server-card`` is kept."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    if not path.endswith(CARD_SUFFIX):
        path += CARD_SUFFIX
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def catalog_url(url: str) -> str:
    """Where the MCP Catalog of ``url``'s origin is (``/.well-known/mcp/catalog.json``)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, CATALOG_PATH, "", ""))


async def fetch_server_card(
    url: str, *, http_client: httpx.AsyncClient | None = None, max_bytes: int = MAX_CARD_BYTES
) -> ServerCard:
    """The server card at ``url`` (as a catalog entry gives it; :func:`card_url` makes
    the reserved location from a server's URL), read strictly (:func:`parse_card`).

    Blocks for one ``GET``; cancelling the caller's scope cancels it.

    Raises:
        CardError: the card cannot be had or used; the message says why (for a schema
            violation, which member).
    """
    body = await _get(url, CARD_MIME_TYPE, "server card", http_client, max_bytes)
    try:
        return parse_card(body)
    except CardError as error:
        raise CardError(f"{url}: {error}") from None


async def fetch_catalog(
    url: str, *, http_client: httpx.AsyncClient | None = None, max_bytes: int = MAX_CARD_BYTES
) -> Catalog:
    """The MCP Catalog of ``url``'s origin (any URL of the site: see :func:`catalog_url`),
    with the entries that point at server cards (:func:`parse_catalog`).

    Blocks for one ``GET``; cancelling the caller's scope cancels it.

    Raises:
        CardError: the catalog cannot be had or used; the message says why.
    """
    location = catalog_url(url)
    body = await _get(location, "application/json", "catalog", http_client, max_bytes)
    try:
        return parse_catalog(body)
    except CardError as error:
        raise CardError(f"{location}: {error}") from None


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "(unknown status)"


async def _get(
    url: str, accept: str, what: str, http_client: httpx.AsyncClient | None, max_bytes: int
) -> bytes:
    if urlsplit(url).scheme not in ("http", "https"):
        await trio.lowlevel.checkpoint()  # (an async function always checkpoints)
        raise CardError(f"a {what} is fetched over http(s), not from {url!r:.120}")
    if http_client is not None:
        return await _read(http_client, url, accept, what, max_bytes)
    async with httpx.AsyncClient(timeout=None, follow_redirects=True) as client:
        return await _read(client, url, accept, what, max_bytes)


async def _read(
    client: httpx.AsyncClient, url: str, accept: str, what: str, max_bytes: int
) -> bytes:
    try:
        async with client.stream("GET", url, headers={"accept": accept}) as response:
            if response.status_code != 200:
                reason = response.reason_phrase or _reason(response.status_code)
                raise CardError(f"GET {url}: {response.status_code} {reason} (no {what} there)")
            media_type = response.headers.get("content-type", "").split(";", 1)[0].strip()
            if media_type != "application/json" and not media_type.endswith("+json"):
                raise CardError(
                    f"GET {url}: expected a JSON {what}, got Content-Type {media_type!r:.80}"
                )
            declared = response.headers.get("content-length")
            if declared is not None and declared.isdigit() and int(declared) > max_bytes:
                raise CardError(
                    f"GET {url}: the {what} is {declared} bytes, "
                    f"over the limit of {max_bytes} bytes"
                )
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > max_bytes:
                    raise CardError(f"GET {url}: the {what} is over the limit of {max_bytes} bytes")
            return bytes(body)
    except httpx.HTTPError as exc:
        raise CardError(f"GET {url} failed: {type(exc).__name__}: {exc}") from None
