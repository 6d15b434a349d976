"""Tool pinning: the definition of each tool as approved, so a server cannot change a
tool, or add one, after the user approved its tools without the host noticing.

A server's tools are pinned the first time the host lists them (trust on first use); pins
outlive restarts of the server, and last as long as the host. Each later tools/list is
compared with the pins: a tool whose definition differs is ``"changed"``, and a tool that
was not in the first listing is ``"new"``: both are refused until approved
(:meth:`Pins.approve`), which names the definition approved by its digest
(:func:`digest`), so that a server that changes a tool again while its approval is asked
is asked about again.

A tool is also refused, whatever its approval, when its server lists its name twice
(``"duplicate"``), when the text it offers a model is longer than ``max_description``
characters in all (``"too_long"``: the title, the description, the annotations' title and
every ``title`` and ``description`` inside its schemas), or when its name breaks the
spec's rules for tool names (``"bad_name"``: 1 to 128 characters of ``A-Z a-z 0-9 _ - .``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import attrs
import orjson

from .._tool_text import TOOL_NAME, schema_texts
from .._types._tools import Tool

__all__ = [
    "DEFAULT_MAX_DESCRIPTION",
    "Pins",
    "ToolStatus",
    "definition",
    "digest",
    "model_text_length",
    "schema_depth",
    "shown",
]

#: The most characters of text a tool may offer a model (title, description, annotations'
#: title, the titles and descriptions in its schemas, together) that a host accepts by
#: default; more is refused (room for instructions hidden from the user).
DEFAULT_MAX_DESCRIPTION = 8192
#: The deepest nesting of objects and arrays in a tool's schemas that a host accepts;
#: deeper is refused (``"too_deep"``): no real schema needs it, and comparing, hashing or
#: walking such a definition recursively would fail.
MAX_SCHEMA_DEPTH = 64
#: The longest name written to logs and audit events; a longer one is cut, marked.
MAX_SHOWN_NAME = 200

#: A tool's standing: approved, changed since approved, added after the first listing,
#: listed twice by its server, offering too much text, with schemas nested too deep,
#: named against the spec's rules, or
#: colliding with another server's namespaced name.
ToolStatus = Literal[
    "approved", "changed", "new", "duplicate", "too_long", "too_deep", "bad_name", "collision"
]


def shown(name: str) -> str:
    """``name`` as logs and audit events show it: cut at :data:`MAX_SHOWN_NAME`
    characters, with a marker that says how long it was."""
    if len(name) <= MAX_SHOWN_NAME:
        return name
    return f"{name[:MAX_SHOWN_NAME]}...[{len(name)} characters]"


def definition(tool: Tool) -> dict[str, Any]:
    """The parts of a tool a user approves: name, title, description, input and output
    schema, annotations."""
    annotations = tool.annotations
    return {
        "name": tool.name,
        "title": tool.title,
        "description": tool.description,
        "inputSchema": tool.input_schema,
        "outputSchema": tool.output_schema,
        "annotations": None
        if annotations is None
        else {
            "title": annotations.title,
            "readOnlyHint": annotations.read_only_hint,
            "destructiveHint": annotations.destructive_hint,
            "idempotentHint": annotations.idempotent_hint,
            "openWorldHint": annotations.open_world_hint,
        },
    }


def digest(current: Mapping[str, Any]) -> str:
    """The SHA-256 (hex) of a tool's definition (see :func:`definition`), as JSON with
    sorted keys: what an approval names."""
    return hashlib.sha256(orjson.dumps(current, option=orjson.OPT_SORT_KEYS)).hexdigest()


def _walk_schemas(tool: Tool) -> tuple[int, int]:
    """The characters of ``title`` and ``description`` strings in ``tool``'s schemas, and
    the deepest nesting of objects and arrays in them (see
    :func:`~trio_mcp._tool_text.schema_texts`, which never recurses)."""
    texts, deepest = schema_texts((tool.input_schema, tool.output_schema))
    return sum(len(text) for _, text in texts), deepest


def model_text_length(tool: Tool) -> int:
    """The characters of text ``tool`` offers a model: its title and description, its
    annotations' title, and every ``title`` and ``description`` in its schemas."""
    length = len(tool.title or "") + len(tool.description or "")
    if tool.annotations is not None:
        length += len(tool.annotations.title or "")
    return length + _walk_schemas(tool)[0]


def schema_depth(tool: Tool) -> int:
    """The deepest nesting of objects and arrays in ``tool``'s input and output schemas
    (``{}`` is 1)."""
    return _walk_schemas(tool)[1]


@attrs.define
class Pins:
    """The approved definitions of one host's tools, by server then tool name.

    Memory: the definitions of the tools each server lists now (bounded by the client's
    page limits) and of the tools approved, which a server cannot add to by itself:
    what it stops listing is forgotten unless it was approved.
    """

    max_description: int = DEFAULT_MAX_DESCRIPTION
    _approved: dict[tuple[str, str], dict[str, Any]] = attrs.Factory(dict)
    _current: dict[tuple[str, str], dict[str, Any]] = attrs.Factory(dict)
    _status: dict[tuple[str, str], ToolStatus] = attrs.Factory(dict)
    _listed: set[str] = attrs.Factory(set)

    def review(self, server: str, tools: Sequence[Tool]) -> list[tuple[str, ToolStatus]]:
        """Compare a fresh tools/list of ``server`` with the pins; on the server's first
        listing, pin its tools. Returns the tools whose status is not ``"approved"`` and
        is new (for the audit)."""
        first = server not in self._listed
        self._listed.add(server)
        counts: dict[str, int] = {}
        for tool in tools:
            counts[tool.name] = counts.get(tool.name, 0) + 1
        news: list[tuple[str, ToolStatus]] = []
        for tool in tools:
            key = (server, tool.name)
            status: ToolStatus
            current = self._current[key] = definition(tool)
            if not TOOL_NAME.fullmatch(tool.name):
                status = "bad_name"
            elif counts[tool.name] > 1:
                status = "duplicate"
            elif schema_depth(tool) > MAX_SCHEMA_DEPTH:
                status = "too_deep"
            elif model_text_length(tool) > self.max_description:
                status = "too_long"
            elif key not in self._approved:
                if first:
                    self._approved[key] = current
                    status = "approved"
                else:
                    status = "new"
            elif self._approved[key] != current:
                status = "changed"
            else:
                status = "approved"
            if status != "approved" and self._status.get(key) != status:
                news.append((tool.name, status))
            self._status[key] = status
        # Forget what this server no longer lists (it cannot be called): a server adding
        # and removing fresh names must not grow the pins. Approvals stay, as they must.
        listed = {(server, tool.name) for tool in tools}
        for key in [key for key in self._current if key[0] == server and key not in listed]:
            del self._current[key]
            self._status.pop(key, None)
        return news

    def status(self, server: str, name: str) -> ToolStatus:
        return self._status.get((server, name), "approved")

    def approved(self, server: str, name: str) -> Mapping[str, Any] | None:
        """The approved definition of ``server``'s tool ``name``, if any."""
        return self._approved.get((server, name))

    def current(self, server: str, name: str) -> Mapping[str, Any] | None:
        """The definition of ``server``'s tool ``name`` in its latest listing, if any."""
        return self._current.get((server, name))

    def approve(self, server: str, name: str, approved_digest: str) -> bool:
        """Approve the definition of ``server``'s tool ``name`` whose :func:`digest` is
        ``approved_digest``, if that is the definition its server lists now. Returns
        whether it was: a tool that changed again (or a digest of another definition)
        stays refused, to be approved as it is now. Tools refused for what they are
        (``"duplicate"``, ``"too_long"``, ``"too_deep"``, ``"bad_name"``) cannot be
        approved."""
        key = (server, name)
        current = self._current.get(key)
        if current is None or self._status.get(key) not in ("approved", "changed", "new"):
            return False
        if digest(current) != approved_digest:
            return False
        self._approved[key] = current
        self._status[key] = "approved"
        return True
