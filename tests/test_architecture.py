"""The layout is the architecture: checks that keep it so."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "trio_mcp"
PUBLIC = sorted(
    p for p in PACKAGE.glob("*.py") if not p.name.startswith("_") or p.name == "__init__.py"
)


@pytest.mark.parametrize("path", PUBLIC, ids=lambda p: p.name)
def test_public_modules_only_reexport(path: Path) -> None:
    tree = ast.parse(path.read_text())
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        assert isinstance(node, ast.ImportFrom), f"{path.name}:{node.lineno} is not a re-export"
        assert node.level == 1 and node.module and node.module.startswith("_"), (
            f"{path.name}:{node.lineno} must import from a private module"
        )
        for alias in node.names:
            assert alias.asname == alias.name, f"{path.name}: write `{alias.name} as {alias.name}`"


@pytest.mark.parametrize("path", PUBLIC, ids=lambda p: p.name)
def test_every_reexport_resolves(path: Path) -> None:
    name = "trio_mcp" if path.name == "__init__.py" else f"trio_mcp.{path.stem}"
    module = importlib.import_module(name)
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                assert getattr(module, alias.name) is not None


def test_the_sans_io_core_imports_no_trio() -> None:
    code = (
        "import sys\n"
        "import trio_mcp.types, trio_mcp.jsonrpc, trio_mcp.protocol\n"
        "bad = sorted(m for m in sys.modules if m == 'trio' or m.startswith(('trio.', 'trio_mcp._session', 'trio_mcp._transports')))\n"
        "assert not bad, bad\n"
    )
    # trio_mcp/__init__ pulls in the Trio layers, so import the core modules without it.
    run = subprocess.run(
        [sys.executable, "-c", "import importlib.util, sys\n" + _without_package_init() + code],
        capture_output=True,
        text=True,
        cwd=PACKAGE.parent,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr


def test_without_hypothesis_only_the_testing_module_needs_the_extra() -> None:
    """The base install runs servers and clients; trio_mcp.testing says which extra it needs."""
    code = (
        "import sys\n"
        "sys.modules['hypothesis'] = None  # as if it were not installed\n"
        "import trio_mcp, trio_mcp.server, trio_mcp.client, trio_mcp.host\n"
        "try:\n"
        "    import trio_mcp.testing\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=PACKAGE.parent, timeout=60
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == (
        "trio_mcp.testing needs Hypothesis (for its strategies): pip install 'trio-mcp[testing]'"
    )


def _without_package_init() -> str:
    # Load the package object without executing its __init__ (which imports the Trio layers).
    return (
        "import types as _t\n"
        f"pkg = _t.ModuleType('trio_mcp'); pkg.__path__ = [{str(PACKAGE)!r}]; sys.modules['trio_mcp'] = pkg\n"
    )


LAYERS = {
    # module prefix -> private modules it must not import
    "_types": (
        "_jsonrpc",
        "_protocol",
        "_session",
        "_transports",
        "_server",
        "_client",
        "_testing",
    ),
    "_jsonrpc": ("_protocol", "_session", "_transports", "_server", "_client", "_testing"),
    "_protocol": ("_session", "_transports", "_server", "_client", "_testing"),
    "_session": ("_server", "_client", "_testing"),
    "_transports": ("_session", "_server", "_client", "_testing"),
    "_server": ("_client", "_testing"),
    "_client": ("_server", "_testing"),
    "_host": ("_testing",),
    # Task records and stores know nothing of sessions, servers or clients.
    "_tasks": ("_session", "_transports", "_server", "_client", "_host", "_testing", "_http"),
    # The fuzzer speaks raw JSON-RPC to any server: it uses none of our server, client or
    # session code (so it cannot share their bugs).
    "_fuzz": ("_server", "_client", "_host", "_session", "_testing"),
    "_jsonschema": (
        "_types",
        "_jsonrpc",
        "_protocol",
        "_session",
        "_transports",
        "_server",
        "_client",
    ),
}


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_dependencies_point_downward(layer: str) -> None:
    forbidden = LAYERS[layer]
    files = (
        [PACKAGE / f"{layer}.py"]
        if (PACKAGE / f"{layer}.py").exists()
        else list((PACKAGE / layer).glob("*.py"))
    )
    assert files
    for path in files:
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level >= 1 and node.module:
                top = node.module.split(".")[0]
                if node.level == 1 and path.parent != PACKAGE:
                    continue  # a sibling inside the same layer
                assert top not in forbidden, f"{path.relative_to(PACKAGE)} imports {node.module}"


def _imports(path: Path) -> set[str]:
    """The absolute names of the modules ``path`` imports (relative imports resolved)."""
    package = path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1]
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else ()
            module = ".".join((*base, *(node.module.split(".") if node.module else ())))
            names.add(module)
            if not node.module:  # from .. import x: x may be a module
                names.update(f"{module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


HTTP = PACKAGE / "_http"
HTTP_SIDES = {
    # The ASGI server and the httpx client share only _http/_headers.py: neither imports
    # the other, nor the other side's library code.
    "server": ("trio_mcp._http.client", "trio_mcp._client", "httpx"),
    "client": ("trio_mcp._http.server", "trio_mcp._server", "hypercorn"),
}


def test_http_is_split_into_server_and_client() -> None:
    assert {p.name for p in HTTP.glob("*.py")} == {"__init__.py", "_headers.py"}
    assert {p.name for p in HTTP.iterdir() if p.is_dir() and p.name != "__pycache__"} == {
        "server",
        "client",
    }


@pytest.mark.parametrize("side", sorted(HTTP_SIDES))
def test_the_http_server_and_client_do_not_import_each_other(side: str) -> None:
    forbidden = HTTP_SIDES[side]
    files = list((HTTP / side).glob("*.py"))
    assert files
    for path in files:
        for name in _imports(path):
            assert not name.startswith(forbidden), f"{path.relative_to(PACKAGE)} imports {name}"


#: The client's two legacies (the sessions of legacy Streamable HTTP, the 2024-11-05
#: HTTP+SSE transport) are two sides of one stream that know nothing of each other;
#: ``_stream.py`` joins them and chooses the mode.
HTTP_CLIENT_LEGACIES = {"_legacy": "_sse_2024", "_sse_2024": "_legacy"}


@pytest.mark.parametrize("module", sorted(HTTP_CLIENT_LEGACIES))
def test_the_http_clients_two_legacies_do_not_import_each_other(module: str) -> None:
    other = f"trio_mcp._http.client.{HTTP_CLIENT_LEGACIES[module]}"
    imported = _imports(HTTP / "client" / f"{module}.py")
    assert "trio_mcp._http.client._exchange" in imported  # both build on the shared part
    assert other not in imported, f"_http/client/{module}.py imports {other}"


def test_the_package_is_typed() -> None:
    assert (PACKAGE / "py.typed").exists()
