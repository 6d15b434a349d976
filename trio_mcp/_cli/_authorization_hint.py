"""What to say when an HTTP server refuses the command for want of authorization: that it
wants it, which options give it, and which authorization server its protected resource
metadata (RFC 9728) names.

The look-up is a few bounded requests made only after a refusal: an unauthenticated
``POST`` (for the ``401`` and its ``WWW-Authenticate`` hint) and ``GET`` of the metadata,
within :data:`HINT_TIMEOUT` seconds in all and :data:`MAX_METADATA` bytes a document. Any
failure of the look-up drops only the part it would have added.
"""

from __future__ import annotations

from collections.abc import Mapping

import orjson
import trio

from .._auth._client._challenge import parse_challenges
from .._auth._client._errors import DiscoveryError
from .._auth._client._metadata import parse_resource_metadata, resource_metadata_urls
from . import _lazy

__all__ = ["HINT_TIMEOUT", "MAX_METADATA", "authorization_hint"]

#: Seconds the look-up may take in all.
HINT_TIMEOUT = 5.0
#: The largest metadata document read, in bytes.
MAX_METADATA = 64 * 1024
_PING = b'{"jsonrpc":"2.0","id":0,"method":"ping"}'
_ACCEPT = "application/json, text/event-stream"


async def authorization_hint(
    url: str, headers: Mapping[str, str], *, challenge: str | None = None
) -> str | None:
    """The sentence to add to a refusal from ``url``, or ``None`` when the server does not
    answer ``401`` (the refusal was about something else).

    ``challenge`` is the ``WWW-Authenticate`` already received (a refused WebSocket
    handshake's); without it the server is asked once more, with ``headers``. Blocks for at
    most :data:`HINT_TIMEOUT` seconds; cancelling it cancels the requests.
    """
    servers: tuple[str, ...] = ()
    with trio.move_on_after(HINT_TIMEOUT):
        async with _lazy.httpx.AsyncClient(timeout=HINT_TIMEOUT) as http:
            if challenge is None:
                try:
                    response = await http.post(
                        url,
                        content=_PING,
                        headers={"accept": _ACCEPT, "content-type": "application/json", **headers},
                    )
                except _lazy.httpx.HTTPError:
                    return None
                if response.status_code != 401:
                    return None
                challenge = response.headers.get("www-authenticate", "")
            servers = await _authorization_servers(http, url, challenge)
    text = (
        "the server wants authorization: run again with --auth (log in in a browser) or "
        "--client-credentials CLIENT_ID (the secret in $TRIO_MCP_CLIENT_SECRET)"
    )
    if servers:
        text += f"; its authorization server: {', '.join(servers)}"
    return text


async def _authorization_servers(
    http: _lazy.httpx.AsyncClient, url: str, challenge: str
) -> tuple[str, ...]:
    """The authorization servers the protected resource metadata of ``url`` names: from the
    ``resource_metadata`` the challenge points at, else the well-known URLs."""
    hinted = [
        value
        for found in parse_challenges(challenge)
        if (value := found.param("resource_metadata")) is not None
    ]
    for address in hinted[:1] or resource_metadata_urls(url):
        document = await _small_json(http, address)
        if document is None:
            continue
        try:
            return parse_resource_metadata(document, server_url=url).authorization_servers
        except DiscoveryError:
            continue
    return ()


async def _small_json(http: _lazy.httpx.AsyncClient, address: str) -> object | None:
    """The JSON document at ``address``, or ``None``: not there, not JSON, too large."""
    try:
        async with http.stream("GET", address, headers={"accept": "application/json"}) as got:
            if got.status_code != 200:
                return None
            body = bytearray()
            async for chunk in got.aiter_bytes():
                body += chunk
                if len(body) > MAX_METADATA:
                    return None
    except _lazy.httpx.HTTPError:
        return None
    try:
        document: object = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    return document
