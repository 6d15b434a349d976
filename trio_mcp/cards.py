"""Server Cards (SEP-2127): a static document that says who a remote MCP server is and
how to reach it, read before connecting; and the MCP Catalog, which lists an origin's
cards at ``/.well-known/mcp/catalog.json``.

Server side: :func:`server_card` builds a :class:`Server <trio_mcp.Server>`'s card,
``asgi_app(server, card=..., card_catalog=...)`` serves it, and :func:`add_card_resource`
offers it as the resource ``mcp://server-card.json`` too. Client side:
:func:`fetch_server_card` and :func:`fetch_catalog` read them strictly, and
:func:`config_from_card` turns a card into the config a host connects with, and
:func:`card_mismatches` checks the card against the live connection.
"""

from ._extras import require_extra

require_extra("http", "trio_mcp.cards")

from ._cards._connecting import (
    card_mismatches as card_mismatches,
    config_from_card as config_from_card,
)
from ._cards._fetching import (
    MAX_CARD_BYTES as MAX_CARD_BYTES,
    card_url as card_url,
    catalog_url as catalog_url,
    fetch_catalog as fetch_catalog,
    fetch_server_card as fetch_server_card,
)
from ._cards._generate import (
    CARD_META_KEY as CARD_META_KEY,
    CARD_RESOURCE_URI as CARD_RESOURCE_URI,
    add_card_resource as add_card_resource,
    server_card as server_card,
)
from ._cards._model import (
    CARD_MIME_TYPE as CARD_MIME_TYPE,
    CARD_SCHEMA as CARD_SCHEMA,
    CATALOG_PATH as CATALOG_PATH,
    CardError as CardError,
    CardHeader as CardHeader,
    CardInput as CardInput,
    Catalog as Catalog,
    CatalogEntry as CatalogEntry,
    Remote as Remote,
    Repository as Repository,
    ServerCard as ServerCard,
    parse_card as parse_card,
    parse_catalog as parse_catalog,
)
