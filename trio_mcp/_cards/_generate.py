"""A server card built from a :class:`~trio_mcp.Server`, and offered by the server as an
MCP resource.

The card's own members are identity and connection details (the schema has nothing
else). What else a client may want before connecting, the server's capabilities (its
extensions among them) and, for a protected server, what authorization it needs, goes in
the card's ``_meta`` under :data:`CARD_META_KEY`, the extension point the schema leaves open.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import attrs

from .._server._resources import ResourceSpec
from .._types._converter import unstructure
from .._versions import LATEST_VERSION
from ._model import CardError, Remote, Repository, ServerCard, card_bytes, check_card

if TYPE_CHECKING:
    from .._auth._resource_server import ProtectedResource
    from .._server._server import Server

__all__ = [
    "CARD_RESOURCE_URI",
    "CARD_META_KEY",
    "add_card_resource",
    "server_card",
    "with_authorization",
]

#: The ``_meta`` key of what this library adds to a card: ``capabilities`` (as the server
#: declares them to a 2026-07-28 client, ``extensions`` included) and, for a protected
#: server, ``authorization`` (``required``, ``resourceMetadata``, ``authorizationServers``,
#: ``scopesSupported``).
CARD_META_KEY: Final = "dev.trio-mcp/server"
#: The URI of the card offered as a resource (SEP-2127: "Servers SHOULD provide their server
#: card as an MCP resource"), for clients that connected without HTTP.
CARD_RESOURCE_URI: Final = "mcp://server-card.json"


def server_card(
    server: Server,
    *,
    name: str | None = None,
    description: str | None = None,
    remotes: Sequence[Remote] | None = None,
    repository: Repository | None = None,
    auth: ProtectedResource | None = None,
    meta: Mapping[str, Any] | None = None,
) -> ServerCard:
    """The card of ``server`` as it is now: its name, version, title, description,
    website and icons, and under ``_meta[CARD_META_KEY]`` its capabilities (so build it once
    the tools, resources and prompts are registered) and, with ``auth``, what tokens it
    needs.

    Args:
        name: the card's name, reverse-DNS with one ``/`` (``"com.example/weather"``);
            by default the server's name, which must then have that form.
        description: 1 to 100 characters; by default the server's description, else its
            title.
        remotes: the HTTP endpoints clients connect to. Leave it out to let the app that
            serves the card (``asgi_app(server, card=...)``) fill in its own, at the URL
            each request reached.
        repository: where the source code is.
        auth: the server's :class:`~trio_mcp.auth.ProtectedResource`: the card then says
            that a token is required, where the protected resource metadata is and which
            scopes to ask for (``asgi_app`` adds this itself when it has ``auth``).
        meta: further ``_meta`` members.

    Raises:
        CardError: the name is not ``namespace/name``, there is no description (or it is
            longer than 100 characters), or another member breaks the schema; the
            message names it.
    """
    info = server.info
    card_name = name if name is not None else info.name
    text = description if description is not None else (info.description or info.title)
    if text is None:
        raise CardError(
            "$.description: the card needs a description and the server has none: "
            "pass description=..., or Server(description=...)"
        )
    ours: dict[str, Any] = {"capabilities": unstructure(server.capabilities(), LATEST_VERSION)}
    card = ServerCard(
        name=card_name,
        version=info.version,
        description=text,
        title=info.title,
        website_url=info.website_url,
        repository=repository,
        icons=list(info.icons) if info.icons else None,
        remotes=list(remotes) if remotes is not None else None,
        meta={**(meta or {}), CARD_META_KEY: ours},
    )
    if name is None and "/" not in card_name:
        raise CardError(
            f"$.name: a card's name is reverse-DNS with one '/' (as 'com.example/weather'), "
            f"and the server's name {card_name!r} is not: pass name=..."
        )
    check_card(card)
    return with_authorization(card, auth) if auth is not None else card


def with_authorization(card: ServerCard, auth: ProtectedResource) -> ServerCard:
    """``card``, saying under ``_meta[CARD_META_KEY]["authorization"]`` that the server is the
    protected resource ``auth``: a token is required, from one of its authorization
    servers, found through its metadata URL."""
    metadata = auth.metadata
    authorization: dict[str, Any] = {
        "required": True,
        "resourceMetadata": auth.metadata_url,
        "authorizationServers": list(metadata.authorization_servers),
    }
    if metadata.scopes_supported:
        authorization["scopesSupported"] = list(metadata.scopes_supported)
    meta = dict(card.meta or {})
    meta[CARD_META_KEY] = {**meta.get(CARD_META_KEY, {}), "authorization": authorization}
    return attrs.evolve(card, meta=meta)


def add_card_resource(server: Server, card: ServerCard) -> None:
    """Offer ``card`` as the resource :data:`CARD_RESOURCE_URI` of ``server``
    (``application/json``), so that a client connected over any transport (stdio
    included) can read it. The card is served as given: build it with the ``remotes``
    clients should use, since no HTTP request is there to fill them in.

    Raises:
        CardError: the card breaks its schema (naming the member).
    """
    check_card(card)
    body = card_bytes(card).decode()

    def server_card() -> str:
        return body

    server.add_resource(
        ResourceSpec.from_function(
            CARD_RESOURCE_URI,
            server_card,
            size=len(body.encode()),
            title="Server card",
            description="This server's card (SEP-2127): who it is and how to reach it.",
            mime_type="application/json",
        )
    )
