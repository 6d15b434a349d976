"""The ``tools`` check class: what a server's tools/list results show a user and a model,
judged on one connection (tool poisoning, rug pulls, look-alike names).

:class:`ToolWatch` is told of every tools/list result the checker sees, page by page, and
returns the problems as (invariant name, detail) pairs: hidden instructions in a tool's
texts, a tool whose definition changed since an earlier listing on the same connection
(with or without ``notifications/tools/list_changed``), names that break the spec's
rules or that a user or a host could confuse with another tool's. The text checks are
those the host refuses tools for (:mod:`trio_mcp._tool_text`).

Memory: a digest per tool name and a name per look-alike, for at most
:data:`MAX_WATCHED_TOOLS` names on one connection.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from typing import Any, Final

import orjson

from .._tool_text import TOOL_NAME, hidden_instruction, look_alike, schema_texts

__all__ = ["MAX_WATCHED_TOOLS", "NAMESPACE_SEPARATOR", "ToolWatch"]

#: The most tool names one connection's watch remembers (their definitions' digests);
#: names past it are still checked for hidden text and bad names, not for drift.
MAX_WATCHED_TOOLS: Final = 10_000
#: What hosts (ours by default) put between a server's name and a tool's.
NAMESPACE_SEPARATOR: Final = "__"
_SHOWN: Final = 80


def _shown(name: str) -> str:
    return repr(name if len(name) <= _SHOWN else name[:_SHOWN] + "...")


def _texts(tool: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """Every text of ``tool`` a user or a model reads, with where it is."""
    name = tool.get("name")
    if isinstance(name, str):
        yield "name", name
    for key in ("title", "description"):
        value = tool.get(key)
        if isinstance(value, str):
            yield key, value
    annotations = tool.get("annotations")
    if isinstance(annotations, Mapping) and isinstance(annotations.get("title"), str):
        yield "annotations.title", annotations["title"]
    for field in ("inputSchema", "outputSchema"):
        texts, _ = schema_texts([tool.get(field)])
        for path, text in texts:
            yield f"{field}.{path}", text


def _definition(tool: Mapping[str, Any]) -> bytes:
    """The digest of what a user approves: everything but ``_meta`` (sorted JSON)."""
    kept = {k: v for k, v in tool.items() if k != "_meta"}
    return hashlib.sha256(orjson.dumps(kept, option=orjson.OPT_SORT_KEYS)).digest()


class ToolWatch:
    """The tools seen on one connection (see the module docstring)."""

    def __init__(self) -> None:
        self._digests: dict[str, bytes] = {}
        self._look_alikes: dict[str, str] = {}
        self._list_changed = 0
        self._reported: set[tuple[str, str, str]] = set()

    def list_changed(self) -> None:
        """The server sent ``notifications/tools/list_changed``."""
        self._list_changed += 1

    def on_list(self, tools: list[Any]) -> list[tuple[str, str]]:
        """Judge one page of a tools/list result; returns (invariant, detail) pairs,
        each problem once per connection."""
        problems: list[tuple[str, str]] = []

        def report(invariant: str, name: str, detail: str, kind: str = "") -> None:
            if (invariant, name, kind) not in self._reported:
                self._reported.add((invariant, name, kind))
                problems.append((invariant, detail))

        on_page: set[str] = set()
        for tool in tools:
            if not isinstance(tool, Mapping) or not isinstance(tool.get("name"), str):
                continue
            name: str = tool["name"]
            if name in on_page:
                report("tool-names-distinct", name, f"tool {_shown(name)} is listed twice", "twice")
                continue
            on_page.add(name)
            for where, text in _texts(tool):
                why = hidden_instruction(text)
                if why is not None:
                    report(
                        "tool-no-hidden-instructions",
                        name,
                        f"tool {_shown(name)}: its {where} holds {why}",
                    )
                    break
            if not TOOL_NAME.fullmatch(name):
                report(
                    "tool-names-distinct",
                    name,
                    f"tool {_shown(name)}: the name is not 1 to 128 of A-Z a-z 0-9 _ - .",
                )
            if NAMESPACE_SEPARATOR in name:
                report(
                    "tool-names-distinct",
                    name,
                    f"tool {_shown(name)} holds {NAMESPACE_SEPARATOR!r}, the separator hosts "
                    "put between a server's name and its tools' (server__tool): once "
                    "namespaced it can collide with another server's tool",
                    "separator",
                )
            alike = look_alike(name)
            other = self._look_alikes.get(alike)
            if other is not None and other != name:
                report(
                    "tool-names-distinct",
                    name,
                    f"tools {_shown(other)} and {_shown(name)} differ only by case, Unicode "
                    f"look-alikes or punctuation (both read as {_shown(alike)}; a host that "
                    "namespaces or rewrites names cannot tell them apart)",
                    "alike",
                )
            elif len(self._look_alikes) < MAX_WATCHED_TOOLS:
                self._look_alikes.setdefault(alike, name)
            digest = _definition(tool)
            before = self._digests.get(name)
            if before is None:
                if len(self._digests) < MAX_WATCHED_TOOLS:
                    self._digests[name] = digest
            elif before != digest:
                announced = (
                    "after notifications/tools/list_changed"
                    if self._list_changed
                    else "with no notifications/tools/list_changed"
                )
                report(
                    "tool-definition-stable",
                    name,
                    f"tool {_shown(name)} changed its definition between two tools/list "
                    f"calls on one connection ({announced}): what the user approved is not "
                    "what the model now reads",
                    announced,
                )
                self._digests[name] = digest
        return problems
