"""The Server Card and the MCP Catalog as wire models, and their strict reading.

The shapes are those of the Server Card schema (``v2``, the SEP-2127 extension's
``schema.json``) and of the MCP Catalog of its ``discovery.md``. A card is a *closed*
document: the schema allows no member beyond those it names, at any depth, except in
``_meta`` (the extension point). So, unlike the protocol's messages (where a newer peer's
fields are ignored), :func:`parse_card` refuses an unknown member and names where it is.
A catalog is an MCP-scoped subset of the AI Catalog, so its unknown members are left
alone, and an entry whose ``type`` is not a server card is skipped (the SEP: clients
ignore entries with unrecognized types).
"""

from __future__ import annotations

import re
import types
from collections.abc import Mapping
from typing import Any, ClassVar, Final, Literal, TypeVar, Union, get_args, get_origin

import attrs
import orjson

from .._types._base import Icon, MetaObject, Model
from .._types._converter import StructureError, structure, unstructure, wire_name

__all__ = [
    "CARD_SCHEMA",
    "CARD_SUFFIX",
    "CATALOG_PATH",
    "CATALOG_SPEC_VERSION",
    "CARD_MIME_TYPE",
    "CardError",
    "CardHeader",
    "CardInput",
    "Catalog",
    "CatalogEntry",
    "Remote",
    "Repository",
    "ServerCard",
    "card_bytes",
    "catalog_bytes",
    "check_card",
    "parse_card",
    "parse_catalog",
]

#: The ``$schema`` every card names (the schema's ``v2`` family).
CARD_SCHEMA: Final = "https://static.modelcontextprotocol.io/schemas/v2/server-card.schema.json"
#: The media type of a card (``Accept`` of a request for one, ``Content-Type`` of the answer).
CARD_MIME_TYPE: Final = "application/mcp-server-card+json"
#: The reserved location of a server's card: its Streamable HTTP URL and this suffix.
CARD_SUFFIX: Final = "/server-card"
#: Where an origin publishes its MCP Catalog.
CATALOG_PATH: Final = "/.well-known/mcp/catalog.json"
#: The catalog format's version we write.
CATALOG_SPEC_VERSION: Final = "draft"

_NAME = re.compile(r"[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+")
_REMOTE_URL = re.compile(r"(https?://\S+|\{[a-zA-Z_][a-zA-Z0-9_]*\}\S*)")
#: What makes a version a range, which the schema refuses ('^1.2', '~1', '>=1', '1.x', '1.*').
_VERSION_RANGE = re.compile(r"^[\^~<>=]|\s|\|\||(^|\.)[xX*](\.|$)")

T = TypeVar("T")


class CardError(ValueError):
    """A server card or catalog that cannot be used: not JSON, too large, or not of the
    schema. The message names the member (``$.remotes[0].url``) and what was wrong."""


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CardInput(Model):
    """A value the user supplies or that is preset: a remote's URL variable, or a
    variable of a header's value."""

    description: str | None = None
    is_required: bool | None = None
    is_secret: bool | None = None
    format: Literal["string", "number", "boolean", "filepath"] | None = None
    default: str | None = None
    placeholder: str | None = None
    value: str | None = None
    choices: list[str] | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CardHeader(CardInput):
    """An HTTP header a remote needs or accepts (the schema's ``KeyValueInput``): its
    ``name``, and the variables its ``value`` refers to as ``{name}``."""

    name: str
    variables: dict[str, CardInput] | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Remote(Model):
    """An HTTP endpoint of the server: its transport, URL (a template when it has
    ``{variables}``) and the protocol revisions it speaks."""

    type: Literal["streamable-http", "sse"]
    url: str
    headers: list[CardHeader] | None = None
    variables: dict[str, CardInput] | None = None
    supported_protocol_versions: list[str] | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Repository(Model):
    """Where the server's source code is."""

    url: str
    source: str
    subfolder: str | None = None
    id: str | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ServerCard(Model):
    """A Server Card: who the server is and how to reach it, read before connecting.

    Advisory, not authoritative (the SEP): a client checks what it says against the live
    connection and never makes access decisions on it."""

    schema: str = CARD_SCHEMA
    name: str
    version: str
    description: str
    title: str | None = None
    website_url: str | None = None
    repository: Repository | None = None
    icons: list[Icon] | None = None
    remotes: list[Remote] | None = None
    meta: MetaObject | None = None

    __wire_names__: ClassVar[Mapping[str, str]] = {"schema": "$schema"}


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CatalogEntry(Model):
    """One server of a catalog: where its card is."""

    identifier: str
    display_name: str
    type: str
    url: str


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Catalog(Model):
    """An MCP Catalog: the server cards an origin lists (``/.well-known/mcp/catalog.json``).

    :func:`parse_catalog` keeps only the entries whose ``type`` is a server card."""

    spec_version: str = CATALOG_SPEC_VERSION
    entries: list[CatalogEntry]


# --- Reading --------------------------------------------------------------------------------


def _decode(data: bytes | str | Mapping[str, Any], what: str) -> dict[str, Any]:
    if isinstance(data, Mapping):
        return dict(data)
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise CardError(f"the {what} is not JSON: {exc}") from None
    if type(value) is not dict:
        raise CardError(f"the {what} must be a JSON object, got {type(value).__name__}")
    return value


def _read(value: dict[str, Any], cls: type[T], what: str) -> T:
    try:
        return structure(value, cls)
    except StructureError as exc:
        raise CardError(f"the {what} does not fit its schema: {exc}") from None


def parse_card(data: bytes | str | Mapping[str, Any]) -> ServerCard:
    """Read a server card (JSON text, or the decoded object) strictly, as its schema says.

    Raises:
        CardError: not a JSON object; a required member missing (``name``, ``version``,
            ``description``, ``$schema``) or of the wrong type; a member the schema does
            not have (anywhere but in ``_meta``); a ``$schema`` other than
            :data:`CARD_SCHEMA`; a name that is not ``namespace/name``; a version range;
            a title or description outside 1 to 100 characters; a remote URL that is
            not ``http(s)://`` or a ``{variable}``. The message names the member.
    """
    value = _decode(data, "server card")
    unknown = _unknown_member(value, ServerCard, "$")
    if unknown is not None:
        raise CardError(
            f"the server card has a member its schema does not allow: {unknown} "
            "(extension data belongs in _meta)"
        )
    if "$schema" not in value:
        raise CardError(
            "the server card does not fit its schema: required field missing @ $.$schema"
        )
    card = _read(value, ServerCard, "server card")
    check_card(card)
    return card


def check_card(card: ServerCard) -> None:
    """Check the rules of the schema the types alone do not carry (see :func:`parse_card`).

    Raises:
        CardError: naming the member that breaks a rule.
    """
    if card.schema != CARD_SCHEMA:
        raise CardError(f"$.$schema: expected {CARD_SCHEMA!r}, got {card.schema!r:.120}")
    if not (3 <= len(card.name) <= 200 and _NAME.fullmatch(card.name)):
        raise CardError(
            f"$.name: expected a reverse-DNS name with one '/' (as 'com.example/weather'), "
            f"got {card.name!r:.120}"
        )
    if len(card.version) > 255 or not card.version or _VERSION_RANGE.search(card.version):
        raise CardError(f"$.version: expected one version (not a range), got {card.version!r:.60}")
    _check_text("$.description", card.description)
    if card.title is not None:
        _check_text("$.title", card.title)
    for index, remote in enumerate(card.remotes or ()):
        if not _REMOTE_URL.fullmatch(remote.url):
            raise CardError(
                f"$.remotes[{index}].url: expected an http(s) URL or a {{variable}}, "
                f"got {remote.url!r:.120}"
            )


def _check_text(where: str, text: str) -> None:
    if not 1 <= len(text) <= 100:
        raise CardError(f"{where}: expected 1 to 100 characters, got {len(text)}")


def parse_catalog(data: bytes | str | Mapping[str, Any]) -> Catalog:
    """Read an MCP Catalog: ``specVersion`` and ``entries`` are required, and each entry's
    ``identifier``, ``displayName``, ``type`` and ``url`` (an entry of the first drafts,
    which named ``type`` ``mediaType``, is read too). Entries of another ``type`` than
    :data:`CARD_MIME_TYPE` are left out; unknown members are ignored.

    Raises:
        CardError: not a JSON object, or a required member missing or of the wrong type;
            the message names it (``$.entries[1].url``).
    """
    value = _decode(data, "catalog")
    entries = value.get("entries")
    if type(entries) is list:
        value["entries"] = [
            {"type": entry["mediaType"], **entry}
            if type(entry) is dict and "type" not in entry and "mediaType" in entry
            else entry
            for entry in entries
        ]
    catalog = _read(value, Catalog, "catalog")
    if "specVersion" not in value:
        raise CardError(
            "the catalog does not fit its schema: required field missing @ $.specVersion"
        )
    kept = [entry for entry in catalog.entries if entry.type == CARD_MIME_TYPE]
    return attrs.evolve(catalog, entries=kept) if len(kept) != len(catalog.entries) else catalog


def _unknown_member(value: object, cls: Any, path: str) -> str | None:
    """The first member of ``value`` that the closed model ``cls`` (and the models it
    holds) does not have, as ``'name' at $.path``; ``None`` if there is none."""
    if type(value) is not dict or not attrs.has(cls):
        return None
    attrs.resolve_types(cls)
    fields = {wire_name(cls, a.name): a for a in attrs.fields(cls)}
    for key, item in value.items():
        field = fields.get(key)
        if field is None:
            return f"{key!r} at {path}"
        if field.name == "meta":
            continue  # the extension point: open
        found = _unknown_in(item, field.type, f"{path}.{key}")
        if found is not None:
            return found
    return None


def _unknown_in(value: object, tp: Any, path: str) -> str | None:
    origin = get_origin(tp)
    if origin is Union or origin is types.UnionType:
        inner = [arg for arg in get_args(tp) if arg is not type(None)]
        return _unknown_in(value, inner[0], path) if len(inner) == 1 else None
    if origin is list and type(value) is list:
        (item_type,) = get_args(tp)
        for index, item in enumerate(value):
            found = _unknown_in(item, item_type, f"{path}[{index}]")
            if found is not None:
                return found
        return None
    if origin is dict and type(value) is dict:
        item_type = get_args(tp)[1]
        for key, item in value.items():
            found = _unknown_in(item, item_type, f"{path}.{key}")
            if found is not None:
                return found
        return None
    return _unknown_member(value, tp, path)


# --- Writing --------------------------------------------------------------------------------


def card_bytes(card: ServerCard) -> bytes:
    """The card as JSON, as served."""
    return orjson.dumps(unstructure(card))


def catalog_bytes(catalog: Catalog) -> bytes:
    """The catalog as JSON, as served. Each entry also carries its ``type`` as
    ``mediaType``, the name the first drafts gave it, so their readers find it too."""
    data = unstructure(catalog)
    for entry in data["entries"]:
        entry["mediaType"] = entry["type"]
    return orjson.dumps(data)
