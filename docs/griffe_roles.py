"""A Griffe extension for the API reference.

Our docstrings cross-reference in Sphinx's role syntax (``:class:`~trio_mcp.Client```) and
end a paragraph with ``::`` before a literal block. The site shows each reference as code,
linked when it names a public object the reference renders (``trio_mcp.<module>.<Name>``
or a member of one), so that under ``mkdocs build --strict`` every link made must resolve.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import griffe

PACKAGE = Path(__file__).resolve().parent.parent / "trio_mcp"
LITERAL = re.compile(r"(?<=\S)::\n")
ROLE = re.compile(r":(?:class|func|meth|attr|exc|data|mod|obj):`(~?)([^`<]+?)(?:\s*<([^>]+)>)?`")


def public_names() -> set[str]:
    """Every ``trio_mcp[.module].Name`` a public module re-exports (what the reference
    renders), read from the modules' source."""
    names: set[str] = set()
    for path in PACKAGE.glob("*.py"):
        if path.name.startswith("_") and path.name != "__init__.py":
            continue
        module = "trio_mcp" if path.name == "__init__.py" else f"trio_mcp.{path.stem}"
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ImportFrom):
                names.update(f"{module}.{alias.asname or alias.name}" for alias in node.names)
    return names


PUBLIC = public_names()


def _target(name: str) -> str | None:
    """The rendered object ``name`` refers to, if any (an object or its member)."""
    parts = name.split(".")
    for cut in range(len(parts), 1, -1):
        if ".".join(parts[:cut]) in PUBLIC:
            return name
    return None


def convert(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        short, name, explicit = match.group(1), match.group(2).strip(), match.group(3)
        target = (explicit or name).strip()
        shown = name.rsplit(".", 1)[-1] if short or explicit else name
        if explicit:
            shown = name
        link = _target(target) if target.startswith("trio_mcp") else None
        return f"[`{shown}`][{link}]" if link else f"`{shown}`"

    # reST's "text::" before a literal block: Markdown shows the block as code anyway.
    return LITERAL.sub(":\n", ROLE.sub(one, text))


class SphinxRoles(griffe.Extension):
    """Rewrites Sphinx roles in every docstring Griffe loads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = convert(obj.docstring.value)
