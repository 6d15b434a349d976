"""Printing results for people, or as JSON for programs."""

from __future__ import annotations

import sys
from typing import Any

import orjson

from .._types._converter import unstructure


def print_json(value: Any, version: str | None = None) -> None:
    """Print ``value`` as JSON; what a server sent is written as its revision has it
    (``version``: the negotiated one), so a field that revision lacks is not added."""
    data = unstructure(value, version)
    sys.stdout.write(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")


def describe_block(block: Any) -> str:
    kind = getattr(block, "type", "?")
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        return f"[{kind} {block.mime_type}, {len(block.data) * 3 // 4} bytes]"
    if kind == "resource":
        resource = block.resource
        text = getattr(resource, "text", None)
        return f"[resource {resource.uri}]" + (f"\n{text}" if text is not None else " (binary)")
    if kind == "resource_link":
        return f"[link {block.uri}] {block.name}"
    return f"[{kind}]"


def one_line(text: str | None, width: int = 72) -> str:
    if not text:
        return ""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"
