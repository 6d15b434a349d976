"""Opaque cursors for paginated lists."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import TypeVar

import orjson

from .._errors import ErrorCode, McpError

T = TypeVar("T")

__all__ = ["paginate"]


def _encode(kind: str, offset: int) -> str:
    raw = orjson.dumps({"k": kind, "o": offset})
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _decode(kind: str, cursor: str) -> int:
    try:
        data = orjson.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (ValueError, orjson.JSONDecodeError):
        data = None
    if (
        not isinstance(data, dict)
        or data.get("k") != kind
        or type(data.get("o")) is not int
        or data["o"] < 0
    ):
        raise McpError(
            f"Invalid params: invalid cursor {cursor!r:.60}", code=ErrorCode.INVALID_PARAMS
        )
    offset: int = data["o"]
    return offset


def paginate(
    kind: str, items: Sequence[T], cursor: str | None, page_size: int
) -> tuple[list[T], str | None]:
    """One page of ``items`` from ``cursor``, and the cursor of the next page.

    A cursor past the end gives an empty last page (the list may have shrunk
    since the cursor was issued); a malformed one, or one for another list,
    gives -32602.
    """
    offset = 0 if cursor is None else _decode(kind, cursor)
    page = list(items[offset : offset + page_size])
    following = offset + page_size
    return page, (_encode(kind, following) if following < len(items) else None)
