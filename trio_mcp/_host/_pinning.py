"""Tool pinning: the definition of each tool as approved, so a server cannot change a
tool's description or schema after the user approved it without the host noticing.

A tool's definition is pinned the first time the host lists it (trust on first use);
pins outlive restarts of the server, and last as long as the host. Each tools/list is
compared with the pins: a tool whose definition differs is ``"changed"`` and refused
until approved again (:meth:`Pins.approve`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import attrs

from .._types._tools import Tool

__all__ = ["DEFAULT_MAX_DESCRIPTION", "Pins", "ToolStatus", "definition"]

#: The longest tool description (in characters) a host accepts by default; a longer one
#: is refused (room for instructions hidden from the user).
DEFAULT_MAX_DESCRIPTION = 8192

#: A tool's standing: approved, changed since approved, listed twice by its server,
#: described at too great a length, or colliding with another server's namespaced name.
ToolStatus = Literal["approved", "changed", "duplicate", "too_long", "collision"]


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


@attrs.define
class Pins:
    """The approved definitions of one host's tools, by server then tool name.

    Memory: one definition per tool ever listed (servers' lists are bounded by the
    client's page limits).
    """

    max_description: int = DEFAULT_MAX_DESCRIPTION
    _approved: dict[tuple[str, str], dict[str, Any]] = attrs.Factory(dict)
    _status: dict[tuple[str, str], ToolStatus] = attrs.Factory(dict)

    def review(self, server: str, tools: Sequence[Tool]) -> list[tuple[str, ToolStatus]]:
        """Compare a fresh tools/list of ``server`` with the pins; pin tools seen for the
        first time. Returns the tools whose status is not ``"approved"`` and is new
        (for the audit)."""
        counts: dict[str, int] = {}
        for tool in tools:
            counts[tool.name] = counts.get(tool.name, 0) + 1
        news: list[tuple[str, ToolStatus]] = []
        for tool in tools:
            key = (server, tool.name)
            status: ToolStatus
            current = definition(tool)
            if counts[tool.name] > 1:
                status = "duplicate"
            elif len(tool.description or "") > self.max_description:
                status = "too_long"
            elif key not in self._approved:
                self._approved[key] = current
                status = "approved"
            elif self._approved[key] != current:
                status = "changed"
            else:
                status = "approved"
            if status != "approved" and self._status.get(key) != status:
                news.append((tool.name, status))
            self._status[key] = status
        return news

    def status(self, server: str, name: str) -> ToolStatus:
        return self._status.get((server, name), "approved")

    def approved(self, server: str, name: str) -> Mapping[str, Any] | None:
        """The approved definition of ``server``'s tool ``name``, if any."""
        return self._approved.get((server, name))

    def approve(self, server: str, tool: Tool) -> None:
        """Approve ``tool``'s current definition (after a change)."""
        self._approved[(server, tool.name)] = definition(tool)
        self._status[(server, tool.name)] = "approved"
