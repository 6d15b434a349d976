"""The card and catalog endpoints of the ASGI app.

``GET <mcp path>/server-card`` answers the server's card (the location SEP-2127
reserves), and, when the app owns its origin, ``GET /.well-known/mcp/catalog.json`` a
catalog listing it, and the card again at ``/.well-known/mcp/server-card`` (where the
SEP's first text put it) and ``/.well-known/mcp/server-card.json`` (where discovery
scanners look). Both are public (no token, even on a protected server: a card only
says what a client needs to connect, and what authorization it will be asked for), read
only, and cacheable, with the CORS headers the SEP asks for, so a page in a browser can
read them.

A card given without ``remotes`` gets the app's own endpoints at the URL each request
reached (``Host``, checked by the app's host policy first, and the mount prefix), or at
the protected resource's canonical URL when the app has ``auth``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

import attrs

from ._generate import CARD_META_KEY, with_authorization
from ._model import (
    CARD_MIME_TYPE,
    CARD_SUFFIX,
    CATALOG_PATH,
    Catalog,
    CatalogEntry,
    Remote,
    ServerCard,
    card_bytes,
    catalog_bytes,
)

if TYPE_CHECKING:
    from .._auth._resource_server import ProtectedResource
    from .._http.server._exchange import HttpRequest

__all__ = ["CACHE_SECONDS", "WELL_KNOWN_CARD_PATHS", "CardEndpoints"]

#: How long clients and caches may keep a card or catalog (``Cache-Control: max-age``).
CACHE_SECONDS: Final = 3600
#: Where an app that owns its origin also serves its card.
WELL_KNOWN_CARD_PATHS: Final = ("/.well-known/mcp/server-card", "/.well-known/mcp/server-card.json")
_CORS: Final = [
    (b"access-control-allow-origin", b"*"),
    (b"access-control-allow-methods", b"GET"),
    (b"access-control-allow-headers", b"Content-Type"),
]
_CACHE: Final = [(b"cache-control", b"public, max-age=%d" % CACHE_SECONDS)]
_ALLOW: Final = [(b"allow", b"GET, HEAD, OPTIONS")]
#: A ``Host`` header fit to name the card's remotes: a name, IPv4 or [IPv6], and a port.
_HOST: Final = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:[0-9]{1,5})?")


class CardEndpoints:
    """Answers the card (and catalog) requests of one app.

    Args:
        card: the card to serve.
        mcp_path, sse_path: the app's Streamable HTTP and HTTP+SSE endpoints (for the
            remotes of a card that names none, and the card's location).
        versions: the revisions the Streamable HTTP endpoint speaks.
        auth: the app's protected resource: the card says what it needs.
        catalog: also serve ``/.well-known/mcp/catalog.json`` and the card at
            :data:`WELL_KNOWN_CARD_PATHS` (the app owns its origin).
    """

    def __init__(
        self,
        card: ServerCard,
        *,
        mcp_path: str,
        sse_path: str | None,
        versions: Sequence[str],
        auth: ProtectedResource | None,
        catalog: bool,
    ) -> None:
        ours = (card.meta or {}).get(CARD_META_KEY)
        if auth is not None and not (isinstance(ours, dict) and "authorization" in ours):
            card = with_authorization(card, auth)
        self.card = card
        self.auth = auth
        self.mcp_path = mcp_path
        self.sse_path = sse_path
        self.versions = list(versions)
        self.card_path = mcp_path.rstrip("/") + CARD_SUFFIX
        #: The paths inside the app these endpoints answer.
        self.paths = frozenset(
            (self.card_path, CATALOG_PATH, *WELL_KNOWN_CARD_PATHS) if catalog else (self.card_path,)
        )
        self._fixed = card_bytes(card) if card.remotes is not None else None

    async def serve(self, http: HttpRequest) -> None:
        """Answer ``http``, a request for one of :attr:`paths`."""
        if http.method == "OPTIONS":
            await http.respond(204, headers=[*_CORS, (b"access-control-max-age", b"86400")])
            return
        if http.method not in ("GET", "HEAD"):
            await http.respond(405, headers=_ALLOW)
            return
        base = self._base_url(http)
        if http.path == CATALOG_PATH:
            body, content_type = self._catalog_body(base), b"application/json"
        else:
            body, content_type = self._card_body(base), CARD_MIME_TYPE.encode()
        headers = [(b"content-type", content_type), *_CORS, *_CACHE]
        await http.respond(
            200, body if http.method == "GET" else b"", content_type=None, headers=headers
        )

    def _base_url(self, http: HttpRequest) -> str:
        """The origin and mount prefix clients reach the app at: the protected resource's
        origin, else the request's ``Host`` when it is a host name or address and a port
        (anything else, say ``evil.example/x?``, would put a path of the sender's choosing
        in the card: the address the connection reached is used instead)."""
        if self.auth is not None:
            parts = urlsplit(self.auth.resource)
            origin = f"{parts.scheme}://{parts.netloc}"
        else:
            scope = http.scope
            host = http.headers.get("host", "")
            if not _HOST.fullmatch(host):
                address, port = scope.get("server") or ("localhost", None)
                address = f"[{address}]" if ":" in address else address
                host = address if port is None else f"{address}:{port}"
            scheme = "https" if scope.get("scheme") == "https" else "http"
            origin = f"{scheme}://{host}"
        return origin + (http.scope.get("root_path") or "").rstrip("/")

    def _card_body(self, base: str) -> bytes:
        if self._fixed is not None:
            return self._fixed
        url = self.auth.resource if self.auth is not None else base + self.mcp_path
        remotes = [
            Remote(type="streamable-http", url=url, supported_protocol_versions=self.versions)
        ]
        if self.sse_path is not None:
            remotes.append(Remote(type="sse", url=base + self.sse_path))
        return card_bytes(attrs.evolve(self.card, remotes=remotes))

    def _catalog_body(self, base: str) -> bytes:
        host = urlsplit(base).hostname or "localhost"
        entry = CatalogEntry(
            identifier=f"urn:air:{host}:{self.card.name.split('/', 1)[1]}",
            display_name=self.card.title or self.card.name,
            type=CARD_MIME_TYPE,
            url=base + self.card_path,
        )
        return catalog_bytes(Catalog(entries=[entry]))
