"""MkDocs hooks for the site build (``mkdocs.yml`` names this file).

- The site is titled with the package version.
- The lifecycle diagrams are drawn at build time from the protocol tables: each
  ``mermaid`` block of the lifecycle page is replaced by an SVG that Graphviz's ``dot``
  (the ``graphviz`` system package) renders from ``trio_mcp.protocol.TRANSITIONS``, so the
  site needs no JavaScript for them and cannot show a diagram the tables do not have.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from trio_mcp import __version__, protocol

_BLOCK = re.compile(r"```mermaid\n(.*?)```", re.DOTALL)
_API = re.compile(r"<!-- api: ([a-z_.]+) -->")
PACKAGE = Path(__file__).resolve().parent.parent / "trio_mcp"


def on_config(config: Any) -> Any:
    config["site_name"] = f"trio_mcp {__version__}"
    return config


def lifecycle_dot(role: str) -> str:
    """The DOT source of ``role``'s lifecycle, from the same table the Mermaid text uses."""
    edges = ['  start [shape=point, width=0.15]; start -> "new";']
    for (r, before, event), after in protocol.TRANSITIONS.items():
        if r != role or event is protocol.Event.CLOSE or before is protocol.Phase.CLOSED:
            continue
        edges.append(f'  "{before.value}" -> "{after.value}" [label="{event.value}"];')
    edges += [
        '  "operating" -> "closed" [label="close"];',
        '  "modern" -> "closed" [label="close"];',
        '  end [shape=doublecircle, width=0.1, label=""]; "closed" -> end;',
    ]
    return (
        "digraph lifecycle {\n  rankdir=LR;\n"
        '  node [shape=box, style="rounded", fontname="sans-serif"];\n'
        '  edge [fontname="sans-serif", fontsize=10];\n' + "\n".join(edges) + "\n}\n"
    )


def render_svg(dot: str) -> str:
    binary = shutil.which("dot")
    if binary is None:
        raise RuntimeError("the docs build needs Graphviz's dot (apt-get install graphviz)")
    svg = subprocess.run(
        [binary, "-Tsvg"], input=dot, capture_output=True, text=True, check=True, timeout=60
    ).stdout
    return svg[svg.index("<svg") :]  # inline: no XML prologue or doctype


def reexports(module: str) -> list[str]:
    """The names public module ``module`` re-exports, in source order."""
    path = PACKAGE / ("__init__.py" if module == "trio_mcp" else f"{module.split('.')[1]}.py")
    names = []
    body = ast.parse(path.read_text()).body
    # Names loaded on first use are imported under ``if TYPE_CHECKING:`` (see _lazy.py).
    lazy = [n for node in body if isinstance(node, ast.If) for n in node.body]
    for node in body + lazy:
        if isinstance(node, ast.ImportFrom) and node.level > 0:  # ours, not typing's
            names.extend(a.asname or a.name for a in node.names if not a.name.startswith("_"))
    return names


def api_page(match: re.Match[str]) -> str:
    """A module's reference: its docstring, then each name it exports."""
    module = match.group(1)
    blocks = [f"::: {module}\n    options:\n      members: false\n      show_root_heading: false"]
    blocks += [
        f"::: {module}.{name}\n    options:\n      show_root_heading: true"
        for name in reexports(module)
    ]
    return "\n\n".join(blocks) + "\n"


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if _API.search(markdown):
        return _API.sub(api_page, markdown)
    if page.file.src_uri != "reference/lifecycle.md":
        return markdown
    roles = iter(["client", "server"])

    def diagram(match: re.Match[str]) -> str:
        role = next(roles)
        if match.group(1).strip() != protocol.mermaid(role).strip():  # type: ignore[arg-type]
            raise RuntimeError(f"the {role} diagram on the lifecycle page is out of date")
        svg = render_svg(lifecycle_dot(role))
        return f'<div class="lifecycle-diagram" data-role="{role}">\n{svg}\n</div>'

    return _BLOCK.sub(diagram, markdown)
