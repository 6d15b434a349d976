"""One public name per thing, and no name for two things (docs/reference/api-stability.md).

The public API is what the public modules re-export (``from ._x import Name as Name``, the
form ``tests/test_architecture.py`` requires); these tests read those statements, import
each name, and compare them across all the public modules.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "trio_mcp"
PUBLIC_MODULES = sorted(
    "trio_mcp" if p.name == "__init__.py" else f"trio_mcp.{p.stem}"
    for p in PACKAGE.glob("*.py")
    if not p.name.startswith("_") or p.name == "__init__.py"
)

# Names that differ only in case or underscores, on purpose: a class and the `_meta` key or
# constant of the same idea, a class and the function that makes one, a wire type and the
# Hypothesis strategy that draws it. A new pair fails the test until it is judged and added.
ALIKE_ON_PURPOSE = {
    frozenset({"ClientCapabilities", "CLIENT_CAPABILITIES"}),
    frozenset({"ClientInfo", "CLIENT_INFO"}),
    frozenset({"ProgressToken", "PROGRESS_TOKEN"}),
    frozenset({"InputRequests", "input_requests"}),
    frozenset({"InputResponses", "input_responses"}),
    frozenset({"ResourceContents", "resource_contents"}),
    frozenset({"ServerCard", "server_card"}),
    frozenset({"ToolUi", "tool_ui"}),
    frozenset({"WebSocketStream", "websocket_stream"}),
}


def reexports(module: str) -> list[str]:
    """The names ``module`` re-exports, including those it loads on first use (imported
    under ``if TYPE_CHECKING:``)."""
    path = PACKAGE / ("__init__.py" if module == "trio_mcp" else f"{module.split('.')[1]}.py")
    body = ast.parse(path.read_text()).body
    nested = [n for node in body if isinstance(node, ast.If) for n in node.body]
    return [
        alias.name
        for node in body + nested
        if isinstance(node, ast.ImportFrom) and node.level == 1
        for alias in node.names
        if alias.asname == alias.name
    ]


def public_names() -> dict[str, object]:
    """Every public dotted name and the object it names."""
    names: dict[str, object] = {}
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for name in reexports(module_name):
            names[f"{module_name}.{name}"] = getattr(module, name)
    return names


def _by_identity(value: object) -> bool:
    """Whether two names of ``value`` are one thing: not for plain values (strings, numbers)
    or aliases of builtins (``Cursor`` and ``ResultType`` are both ``str``)."""
    if isinstance(value, str | int | float | bytes | tuple | frozenset | bool):
        return False
    return not any(value is getattr(builtins, name) for name in dir(builtins))


def one_thing_under_several_names(names: dict[str, object]) -> list[list[str]]:
    groups: defaultdict[int, list[str]] = defaultdict(list)
    for dotted, value in names.items():
        if _by_identity(value):
            groups[id(value)].append(dotted)
    return sorted(group for group in groups.values() if len(group) > 1)


def one_name_for_several_things(names: dict[str, object]) -> dict[str, list[str]]:
    modules: defaultdict[str, list[str]] = defaultdict(list)
    for dotted in names:
        module, _, name = dotted.rpartition(".")
        modules[name].append(module)
    return {name: found for name, found in modules.items() if len(found) > 1}


def names_alike(names: dict[str, object]) -> set[frozenset[str]]:
    spellings: defaultdict[str, set[str]] = defaultdict(set)
    for dotted in names:
        name = dotted.rpartition(".")[2]
        spellings[name.lower().replace("_", "")].add(name)
    return {frozenset(found) for found in spellings.values() if len(found) > 1}


def test_every_public_thing_has_one_public_name() -> None:
    assert one_thing_under_several_names(public_names()) == []


def test_no_name_is_used_by_two_public_modules() -> None:
    assert one_name_for_several_things(public_names()) == {}


def test_no_two_public_names_differ_only_in_case_or_underscores() -> None:
    assert names_alike(public_names()) <= ALIKE_ON_PURPOSE


def test_the_checks_catch_a_second_name() -> None:
    """The three checks are not vacuous: a name exported twice, a name shared by two
    things, and a new near-duplicate are each caught."""
    from trio_mcp import McpError, types

    names = public_names()
    assert one_thing_under_several_names({**names, "trio_mcp.jsonrpc.McpError": McpError}) == [
        ["trio_mcp.McpError", "trio_mcp.jsonrpc.McpError"]
    ]
    shared = one_name_for_several_things({**names, "trio_mcp.protocol.Role": ("client",)})
    assert shared == {"Role": ["trio_mcp.types", "trio_mcp.protocol"]}
    assert types.Role is names["trio_mcp.types.Role"]
    alike = names_alike({**names, "trio_mcp.types.ROLE": "role"}) - ALIKE_ON_PURPOSE
    assert alike == {frozenset({"Role", "ROLE"})}


def test_the_stability_page_lists_every_public_module() -> None:
    page = (ROOT / "docs" / "reference" / "api-stability.md").read_text()
    listed = set(re.findall(r"^\| `(trio_mcp[\w.]*)` \|", page, flags=re.MULTILINE))
    assert listed == set(PUBLIC_MODULES)
