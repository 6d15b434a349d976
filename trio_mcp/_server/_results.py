"""Turning what handlers return into content, and Python values into JSON."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from typing import Any

import attrs
import orjson

from .._types._content import (
    AudioContent,
    BlobResourceContents,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
)

__all__ = ["CONTENT_TYPES", "downgrade_content", "to_content", "to_json"]

CONTENT_TYPES = (TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource)


def to_json(value: Any) -> Any:
    """A JSON value for ``value``: attrs classes and dataclasses become objects, enums
    their values, tuples and sets arrays.

    Raises:
        TypeError: something with no JSON form.
    """
    if value is None or isinstance(value, (str, bool, int, float)):
        return value.value if isinstance(value, enum.Enum) else value
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_json(v) for v in value]
    if attrs.has(type(value)):
        return {a.name: to_json(getattr(value, a.name)) for a in attrs.fields(type(value))}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    raise TypeError(f"{type(value).__name__} has no JSON form")


def to_content(value: Any, *, blob_uri: str = "tool://result") -> list[Any]:
    """Content blocks for a handler's return value: text for strings, content blocks as
    they are, lists flattened, anything else as its JSON text.

    ``bytes`` (or ``bytearray``, ``memoryview``) become an embedded resource with a
    base64 blob of type ``application/octet-stream`` named ``blob_uri`` (in a list, the
    item's index is appended: ``blob_uri/0``). For an image or audio, return
    ``ImageContent.from_bytes(data, mime_type)`` (or ``AudioContent``) instead.
    """
    if value is None:
        return []
    if isinstance(value, str):
        return [TextContent(text=value)]
    if isinstance(value, CONTENT_TYPES):
        return [value]
    if isinstance(value, _BYTES):
        return [_blob(blob_uri, value)]
    if isinstance(value, (list, tuple)):
        blocks: list[Any] = []
        for index, item in enumerate(value):
            if isinstance(item, str):
                blocks.append(TextContent(text=item))
            elif isinstance(item, CONTENT_TYPES):
                blocks.append(item)
            elif isinstance(item, _BYTES):
                blocks.append(_blob(f"{blob_uri}/{index}", item))
            else:
                blocks.append(TextContent(text=dumps_text(to_json(item))))
        return blocks
    return [TextContent(text=dumps_text(to_json(value)))]


_BYTES = (bytes, bytearray, memoryview)


def _blob(uri: str, data: bytes | bytearray | memoryview) -> EmbeddedResource:
    return EmbeddedResource(
        resource=BlobResourceContents.from_bytes(uri, bytes(data), "application/octet-stream")
    )


def dumps_text(value: Any) -> str:
    return orjson.dumps(value).decode("utf-8")


#: The first revision with each content type that 2024-11-05 did not have.
_CONTENT_SINCE = {AudioContent: "2025-03-26", ResourceLink: "2025-06-18"}


def downgrade_content(blocks: list[Any], version: str) -> list[Any]:
    """``blocks`` as a peer on ``version`` can read them: content types newer than the
    revision become a text block that describes them (a resource link its name and URI,
    audio a note that it was left out). Returns ``blocks`` itself when nothing changes."""
    if version >= "2025-06-18" or not any(type(b) in _CONTENT_SINCE for b in blocks):
        return blocks
    out = []
    for block in blocks:
        since = _CONTENT_SINCE.get(type(block))
        if since is None or version >= since:
            out.append(block)
        elif isinstance(block, ResourceLink):
            kind = f" ({block.mime_type})" if block.mime_type else ""
            out.append(TextContent(text=f"{block.title or block.name}: {block.uri}{kind}"))
        else:
            out.append(
                TextContent(
                    text=f"[{block.mime_type} audio left out: protocol version {version} "
                    "has no audio content]"
                )
            )
    return out
