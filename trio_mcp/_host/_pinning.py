"""Tool pinning: the definition of each tool as approved, so a server cannot change a
tool's description or schema after the user approved it without the host noticing.

The tools of a server's first listing are pinned as they are (trust on first use); pins
outlive restarts of the server, and last as long as the host. Each later tools/list is
compared with the pins: a tool whose definition differs, or a tool that was not in the
first listing (annotations from an untrusted server are hints, so a new tool is a change
like any other), is ``"changed"`` and refused until approved again (:meth:`Pins.approve`).
An approval names the definition it approves by its :func:`digest`: a tool that changed
again while its approval was being asked for stays ``"changed"``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import attrs

from .._types._tools import Tool

__all__ = ["DEFAULT_MAX_DESCRIPTION", "Pins", "ToolStatus", "definition", "digest"]

#: The most text (in characters) a host accepts by default in one tool's definition as
#: offered to a model: its title, description, annotations' title and every ``title`` and
#: ``description`` in its input and output schemas, added up. More is refused (room for
#: instructions hidden from the user).
DEFAULT_MAX_DESCRIPTION = 8192

#: The spec's rule for tool names (as :mod:`trio_mcp.server` checks its own): 1 to 128 of
#: ``A-Z a-z 0-9 _ - .``. A tool named otherwise (empty, say) is refused.
_TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")

#: A tool's standing: approved, changed since approved (or new since the first listing),
#: listed twice by its server, described at too great a length, named against the spec's
#: rule, or colliding with another server's namespaced name.
ToolStatus = Literal["approved", "changed", "duplicate", "too_long", "bad_name", "collision"]


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


def offered_text(tool: Tool) -> int:
    """How many characters of ``tool``'s definition a model is offered to read: its
    title, description, annotations' title and every string ``title`` or
    ``description`` in its input and output schemas (walked without recursion, so a deep
    schema cannot overflow the stack)."""
    total = len(tool.title or "") + len(tool.description or "")
    if tool.annotations is not None:
        total += len(tool.annotations.title or "")
    stack: list[object] = [tool.input_schema, tool.output_schema]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            for key, value in node.items():
                if key in ("title", "description") and isinstance(value, str):
                    total += len(value)
                else:
                    stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
    return total


def digest(current: Mapping[str, Any]) -> str:
    """The SHA-256 (hex) of a tool :func:`definition`, as canonical JSON: what an
    approval names."""
    text = json.dumps(current, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@attrs.define
class Pins:
    """The approved definitions of one host's tools, by server then tool name.

    Memory: two definitions per tool ever listed (servers' lists are bounded by the
    client's page limits).
    """

    max_description: int = DEFAULT_MAX_DESCRIPTION
    _approved: dict[tuple[str, str], dict[str, Any]] = attrs.Factory(dict)
    _status: dict[tuple[str, str], ToolStatus] = attrs.Factory(dict)
    _current: dict[tuple[str, str], dict[str, Any]] = attrs.Factory(dict)
    _listed: set[str] = attrs.Factory(set)

    def review(self, server: str, tools: Sequence[Tool]) -> list[tuple[str, ToolStatus, str]]:
        """Compare a fresh tools/list of ``server`` with the pins; on the server's first
        listing, pin its tools. Returns the tools whose status is not ``"approved"`` and
        is new, with why (``"new"`` for a tool absent from the pins), for the audit."""
        first = server not in self._listed
        self._listed.add(server)
        counts: dict[str, int] = {}
        for tool in tools:
            counts[tool.name] = counts.get(tool.name, 0) + 1
        news: list[tuple[str, ToolStatus, str]] = []
        for tool in tools:
            key = (server, tool.name)
            status: ToolStatus
            current = definition(tool)
            self._current[key] = current
            why: str = "changed"
            if not _TOOL_NAME.fullmatch(tool.name):
                status = why = "bad_name"
            elif counts[tool.name] > 1:
                status = why = "duplicate"
            elif offered_text(tool) > self.max_description:
                status = why = "too_long"
            elif key not in self._approved and first:
                self._approved[key] = current
                status = "approved"
            elif key not in self._approved:
                status, why = "changed", "new"
            elif self._approved[key] != current:
                status = "changed"
            else:
                status = "approved"
            if status != "approved" and self._status.get(key) != status:
                news.append((tool.name, status, why))
            self._status[key] = status
        return news

    def status(self, server: str, name: str) -> ToolStatus:
        return self._status.get((server, name), "approved")

    def approved(self, server: str, name: str) -> Mapping[str, Any] | None:
        """The approved definition of ``server``'s tool ``name``, if any (``None``: a tool
        that appeared after the first listing and was never approved)."""
        return self._approved.get((server, name))

    def current(self, server: str, name: str) -> Mapping[str, Any] | None:
        """The definition of ``server``'s tool ``name`` as last listed, if any."""
        return self._current.get((server, name))

    def approve(self, server: str, name: str, approved: str) -> bool:
        """Approve the definition of ``server``'s tool ``name`` whose :func:`digest` is
        ``approved``. Returns whether it is the definition listed now (then the tool is
        ``"approved"``); if the tool changed again since, nothing is approved and it
        stays ``"changed"``."""
        key = (server, name)
        current = self._current.get(key)
        if current is None or digest(current) != approved:
            return False
        self._approved[key] = current
        if self._status.get(key) == "changed":
            self._status[key] = "approved"
        return True
