"""``trio-mcp card URL``: a server's card (SEP-2127), or with ``--catalog`` the MCP
Catalog of an origin, read strictly and printed (``--json``: as JSON).

``URL`` is where the card is (a catalog entry's ``url``, ending in ``/server-card`` or
``.json``), or the server's MCP endpoint, whose card is at the reserved location
``URL/server-card``. A card or catalog that cannot be used is not printed: the command
says what is wrong with it (the member, for a schema violation) and exits 1.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

import orjson

from .._types._converter import unstructure
from . import _lazy
from ._errors import CliError

if TYPE_CHECKING:
    from .._cards._model import ServerCard

__all__ = ["add_card_command", "describe_card", "run_card"]


def add_card_command(commands: Any) -> None:
    """Add ``card`` to the ``trio-mcp`` subcommands."""
    card = commands.add_parser(
        "card",
        help="print a server's card (SEP-2127), or an origin's catalog with --catalog",
        description="Fetch a server card and print it: who the server is, its endpoints, "
        "capabilities and the authorization it needs. URL is the card's own URL, or the "
        "server's MCP URL (its card is then at URL/server-card).",
    )
    card.add_argument("url", metavar="URL", help="the card's URL, or the server's MCP URL")
    card.add_argument(
        "--catalog",
        action="store_true",
        help="print the MCP Catalog of URL's origin (/.well-known/mcp/catalog.json) instead",
    )
    card.add_argument("--json", action="store_true", help="print machine-readable JSON")
    card.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="give up after this long (default 60; 0 for never)",
    )


async def run_card(args: argparse.Namespace) -> int:
    try:
        if args.catalog:
            catalog = await _lazy.fetch_catalog(args.url)
            if args.json:
                _print_json(unstructure(catalog))
            for entry in [] if args.json else catalog.entries:
                print(f"{entry.display_name}  {entry.url}  ({entry.identifier})")
            return 0
        url = args.url
        if not url.split("?", 1)[0].rstrip("/").endswith(("/server-card", ".json")):
            url = _lazy.card_url(url)
        card = await _lazy.fetch_server_card(url)
    except _lazy.CardError as error:
        raise CliError(str(error)) from None
    if args.json:
        _print_json(unstructure(card))
    else:
        sys.stdout.write(describe_card(card))
    return 0


def describe_card(card: ServerCard) -> str:
    """The card for a person to read: identity, endpoints, what it declares."""
    head = f"{card.name} {card.version}"
    if card.title:
        head += f"  {card.title}"
    lines = [head, f"  {card.description}"]
    if card.website_url:
        lines.append(f"  website: {card.website_url}")
    if card.repository is not None:
        lines.append(f"  source: {card.repository.url}")
    for remote in card.remotes or ():
        line = f"  {remote.type}: {remote.url}"
        if remote.supported_protocol_versions:
            line += f"  ({', '.join(remote.supported_protocol_versions)})"
        lines.append(line)
        for header in remote.headers or ():
            needed = "required" if header.is_required else "optional"
            lines.append(f"    header {header.name} ({needed})")
    ours = (card.meta or {}).get(_lazy.CARD_META_KEY)
    if isinstance(ours, dict):
        capabilities = ours.get("capabilities")
        if isinstance(capabilities, dict):
            kinds = [k for k in capabilities if k not in ("extensions", "experimental")]
            lines.append(f"  capabilities: {', '.join(kinds) or 'none'}")
            extensions = capabilities.get("extensions")
            if isinstance(extensions, dict) and extensions:
                lines.append(f"  extensions: {', '.join(extensions)}")
        authorization = ours.get("authorization")
        if isinstance(authorization, dict):
            line = f"  authorization: required, metadata at {authorization.get('resourceMetadata')}"
            scopes = authorization.get("scopesSupported")
            if isinstance(scopes, list) and scopes:
                line += f", scopes {' '.join(map(str, scopes))}"
            lines.append(line)
    return "\n".join(lines) + "\n"


def _print_json(value: object) -> None:
    sys.stdout.write(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode() + "\n")
