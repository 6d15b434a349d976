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
    """Re-exports only; ``trio_mcp/__init__.py`` may also re-export names that load on first
    use, in the shape of a ``_lazy`` module (``TYPE_CHECKING`` imports and the same imports
    handed to ``_lazy.on_first_use``, which ``tests/test_lazy_imports.py`` checks agree)."""
    tree = ast.parse(path.read_text())
    body: list[ast.stmt] = []
    for node in tree.body:
        if ast.unparse(node) in ("from typing import TYPE_CHECKING", "from . import _lazy"):
            continue
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            if ast.unparse(node.test) == "TYPE_CHECKING":
                body.extend(node.body)
            else:
                assert ast.unparse(node.test) == "not TYPE_CHECKING"
                (assign,) = node.body
                assert ast.unparse(assign).startswith("__getattr__ = _lazy.on_first_use(")
            continue
        body.append(node)
    for node in body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if _checks_its_extra(node):
            continue  # names the extra to install before the re-exports need it
        assert isinstance(node, ast.ImportFrom), f"{path.name}:{node.lineno} is not a re-export"
        assert node.level == 1 and node.module and node.module.startswith("_"), (
            f"{path.name}:{node.lineno} must import from a private module"
        )
        for alias in node.names:
            assert alias.asname == alias.name, f"{path.name}: write `{alias.name} as {alias.name}`"


def _checks_its_extra(node: ast.stmt) -> bool:
    """The one statement besides re-exports a public module may hold, with its import:
    ``from ._extras import require_extra`` then ``require_extra("extra", "trio_mcp.x")``."""
    if isinstance(node, ast.ImportFrom):
        return node.module == "_extras" and [a.name for a in node.names] == ["require_extra"]
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
        and node.value.func.id == "require_extra"
    )


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


def test_without_hypothesis_only_the_testing_strategies_need_the_extra() -> None:
    """The base install runs servers and clients, and trio_mcp.testing's memory pairs,
    ``connect`` and ``check_transport`` (the course uses them); its Hypothesis strategies
    say which extra they need."""
    code = (
        "import sys\n"
        "sys.modules['hypothesis'] = None  # as if it were not installed\n"
        "import trio_mcp, trio_mcp.server, trio_mcp.client, trio_mcp.host\n"
        "from trio_mcp.testing import check_transport, connect, memory_session_pair\n"
        "try:\n"
        "    from trio_mcp.testing import json_values\n"
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
    # Server cards are documents: built from a Server, served by the ASGI app, read with
    # httpx; no session, transport or client of ours is needed for any of it.
    "_cards": ("_session", "_transports", "_client", "_testing", "_fuzz"),
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


#: Which modules each layer of the edges may not import (absolute names, prefixes; imports
#: for the type checker count too). What holds today, written down so it keeps holding.
EDGE_LAYERS: dict[str, tuple[tuple[str, ...], str]] = {
    "_auth": (
        (
            "trio_mcp._http",
            "trio_mcp._websocket",
            "trio_mcp._server",
            "trio_mcp._client",
            "trio_mcp._session",
            "trio_mcp._transports",
            "trio_mcp._protocol",
            "trio_mcp._host",
            "trio_mcp._fleet",
            "trio_mcp._cli",
            "trio_mcp._fuzz",
            "trio_mcp._testing",
        ),
        "OAuth is below every transport: the HTTP server and the WebSocket transport call it, "
        "it names what it needs of a request (_auth/_exchange.py)",
    ),
    "_http": (
        (
            "trio_mcp._websocket",
            "trio_mcp._host",
            "trio_mcp._cli",
            "trio_mcp._fuzz",
            "trio_mcp._testing",
        ),
        "the HTTP transports know nothing of the layers built on them",
    ),
    "_websocket.py": (
        (
            "trio_mcp._http.client",
            "trio_mcp._http.server._asgi",
            "trio_mcp._http.server._modern",
            "trio_mcp._http.server._session_engine",
            "trio_mcp._http.server._session_manager",
            "trio_mcp._host",
            "trio_mcp._cli",
            "trio_mcp._fuzz",
            "trio_mcp._testing",
        ),
        "the WebSocket transport is beside HTTP, not on it: of the HTTP server it uses only "
        "the shared pieces (test_the_websocket_transport_uses_only_https_shared_pieces)",
    ),
    "_websocket_auth.py": (
        (
            "trio_mcp._http.client",
            "trio_mcp._http.server._asgi",
            "trio_mcp._http.server._modern",
            "trio_mcp._http.server._session_engine",
            "trio_mcp._http.server._session_manager",
            "trio_mcp._client",
            "trio_mcp._host",
            "trio_mcp._cli",
            "trio_mcp._fuzz",
            "trio_mcp._testing",
        ),
        "the WebSocket handshake's authorization: the auth layer and the wire, no more",
    ),
}


def _under(name: str, modules: tuple[str, ...] | set[str]) -> bool:
    """Whether ``name`` is one of ``modules`` or inside one (``trio_mcp._cli`` is not
    inside ``trio_mcp._client``)."""
    return any(name == module or name.startswith(module + ".") for module in modules)


def _layer_files(layer: str) -> list[Path]:
    if layer.endswith(".py"):
        return [PACKAGE / layer]
    return sorted((PACKAGE / layer).rglob("*.py"))


def _edge_layer_violations(layer: str) -> list[str]:
    forbidden, _why = EDGE_LAYERS[layer]
    files = _layer_files(layer)
    assert files, layer
    return [
        f"{path.relative_to(PACKAGE)} imports {name}"
        for path in files
        for name in sorted(_imports(path))
        if _under(name, forbidden)
    ]


@pytest.mark.parametrize("layer", sorted(EDGE_LAYERS))
def test_the_edges_are_layered(layer: str) -> None:
    found = _edge_layer_violations(layer)
    assert not found, f"{EDGE_LAYERS[layer][1]}:\n" + "\n".join(found)


#: What the WebSocket transport takes from the HTTP server: the Host/Origin policy both
#: enforce, and the JSON-RPC error body both send.
WEBSOCKET_FROM_HTTP_SERVER = {
    ("trio_mcp._http.server._security", "OriginPolicy"),
    ("trio_mcp._http.server._security", "is_loopback"),
    ("trio_mcp._http.server._exchange", "error_body"),
}


def _imported_from(path: Path, prefix: str) -> set[tuple[str, str]]:
    """The ``(module, name)`` pairs ``path`` imports from modules under ``prefix``."""
    package = path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else ()
            module = ".".join((*base, *(node.module.split(".") if node.module else ())))
            if _under(module, (prefix,)):
                found.update((module, alias.name) for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update((a.name, "") for a in node.names if _under(a.name, (prefix,)))
    return found


@pytest.mark.parametrize("module", ["_websocket.py", "_websocket_auth.py"])
def test_the_websocket_transport_uses_only_https_shared_pieces(module: str) -> None:
    taken = _imported_from(PACKAGE / module, "trio_mcp._http")
    assert taken <= WEBSOCKET_FROM_HTTP_SERVER, sorted(taken - WEBSOCKET_FROM_HTTP_SERVER)


#: The one module that imports the command line: ``python -m trio_mcp`` runs it.
IMPORTS_THE_CLI = {"__main__.py"}


def test_nothing_but_the_entry_point_imports_the_cli() -> None:
    """The CLI is the top layer: the library never imports it (nor its dependencies)."""
    found = [
        f"{path.relative_to(PACKAGE)} imports {name}"
        for path in SOURCES
        if path.relative_to(PACKAGE).parts[0] != "_cli"
        and str(path.relative_to(PACKAGE)) not in IMPORTS_THE_CLI
        for name in sorted(_imports(path))
        if _under(name, ("trio_mcp._cli",))
    ]
    assert not found, found


#: The session's modules that may import the session module itself: the session's own
#: options (a TypedDict of its keyword arguments, which name its handler types; imported
#: only for the type checker).
SESSION = PACKAGE / "_session"
SESSION_MODULE = "trio_mcp._session._engine"
IMPORTS_THE_SESSION = {"_engine.py", "_options.py"}


@pytest.mark.parametrize(
    "path",
    sorted(p for p in SESSION.glob("*.py") if p.name not in IMPORTS_THE_SESSION),
    ids=lambda p: p.name,
)
def test_the_session_parts_do_not_import_the_session(path: Path) -> None:
    """Imports run one way, as in h11: ``_engine`` puts the session together from its
    parts, and a part is given what it needs (a ``_link.Link``, callables), never the
    ``Session`` class, not even for the type checker."""
    imported = _imports(path)
    assert SESSION_MODULE not in imported, f"_session/{path.name} imports {SESSION_MODULE}"
    # Nor does it reach into the session it is given (``session._send``).
    reads = _private_reads(path.read_text(), {"session", "_session"})
    assert not reads, f"_session/{path.name} reads the session's privates: {reads}"


# -- nobody reads a Server's private attributes ----------------------------------------------

#: The names a Server goes by in trio_mcp (``server._x``, ``self.server._x``, ``srv._x``,
#: ``self._server._x``, ``manager.server._x``).
SERVER_NAMES = {"server", "srv", "_server"}
#: The modules that may read a Server's private attributes, and why.
READS_SERVER_PRIVATES = {
    "trio_mcp/_server/_server.py": "the Server itself",
    "trio_mcp/_server/_internals.py": "ServerInternals: the one internal read interface that "
    "the dispatch, the HTTP transports, the workers and the fleet use instead",
}


def _private_reads(source: str, names: set[str] = SERVER_NAMES) -> list[tuple[int, str]]:
    """The ``(line, code)`` of every private attribute read (or call, or write) on
    something named as one of ``names`` (a server, by default) in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            continue
        holder = node.value
        if (isinstance(holder, ast.Name) and holder.id in names) or (
            isinstance(holder, ast.Attribute) and holder.attr in names
        ):
            found.append((node.lineno, ast.unparse(node)))
    return found


def test_only_the_server_reads_its_private_attributes() -> None:
    """The dispatch and the transports read a Server through ``ServerInternals``
    (``_server/_internals.py``), so ``_server.py`` can change what is behind it."""
    found = []
    for path in SOURCES:
        name = str(path.relative_to(PACKAGE.parent))
        if name not in READS_SERVER_PRIVATES:
            found += [f"{name}:{line}: {code}" for line, code in _private_reads(path.read_text())]
    assert not found, "a Server's private attributes read outside it:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "source",
    [
        "server._tools.get(name)\n",
        "self.server._sealer.open(state)\n",
        "srv._hub.relay = None\n",
        "self.manager.server._notification_callbacks\n",
        "self._server._templates\n",
    ],
)
def test_the_server_privates_check_finds_a_read(source: str) -> None:
    assert len(_private_reads(source)) == 1


@pytest.mark.parametrize(
    "source", ["server.tools.get(name)\n", "internals.tools\n", "server.__class__\n"]
)
def test_the_server_privates_check_passes_public_reads(source: str) -> None:
    assert _private_reads(source) == []


# -- a client part reads no other object's private attributes -------------------------------

CLIENT = PACKAGE / "_client"


def _foreign_private_reads(source: str) -> list[tuple[int, str]]:
    """The ``(line, code)`` of every private attribute read (or call, or write) in
    ``source`` on anything but ``self`` or ``cls``: ``self._client._rounds``,
    ``task._cancel_on_exit()``, ``client._session``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            continue
        holder = node.value
        if not (isinstance(holder, ast.Name) and holder.id in {"self", "cls"}):
            found.append((node.lineno, ast.unparse(node)))
    return found


@pytest.mark.parametrize("path", sorted(CLIENT.glob("*.py")), ids=lambda p: p.name)
def test_the_client_parts_read_no_other_objects_privates(path: Path) -> None:
    """A client part is given what it needs (``ToolTask`` gets the ``InputRounds``; the
    ``Client`` cancels a task through ``cancel_on_exit``), so each class can change its
    private attributes without breaking another."""
    reads = _foreign_private_reads(path.read_text())
    assert not reads, f"_client/{path.name} reads another object's privates: {reads}"


@pytest.mark.parametrize(
    "source",
    [
        "self._client._rounds.answer(typed)\n",
        "await task._cancel_on_exit()\n",
        "client._session = None\n",
        "cls._registry.get(name)._handler\n",
    ],
)
def test_the_foreign_privates_check_finds_a_read(source: str) -> None:
    assert len(_foreign_private_reads(source)) == 1


@pytest.mark.parametrize(
    "source", ["self._rounds.answer(typed)\n", "cls._registry\n", "task.cancel()\n"]
)
def test_the_foreign_privates_check_passes_own_and_public_reads(source: str) -> None:
    assert _foreign_private_reads(source) == []


def test_the_package_is_typed() -> None:
    assert (PACKAGE / "py.typed").exists()


# -- every shield has a deadline ------------------------------------------------------------

#: The scopes that carry a deadline of their own: a shield set on one of them is bounded.
DEADLINE_SCOPES = {"move_on_after", "move_on_at", "fail_after", "fail_at"}
#: A ``CancelScope(...)`` keyword that gives it a deadline.
DEADLINE_KEYWORDS = {"deadline", "relative_deadline"}
#: The comment that accepts a shield without a deadline; the reason must follow it.
UNBOUNDED_MARK = "# unbounded shield:"


def _called_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute):
            return func.attr
        if isinstance(func, ast.Name):
            return func.id
    return None


def _infinite(node: ast.expr) -> bool:
    """Whether ``node`` is written as infinity (``math.inf``, ``inf``, ``float("inf")``):
    a deadline that never comes."""
    text = ast.unparse(node)
    return text in ("math.inf", "inf") or text.replace("'", '"') == 'float("inf")'


def _has_deadline(node: ast.expr) -> bool:
    """Whether ``node`` makes a cancel scope with a deadline (not one written as
    infinity)."""
    name = _called_name(node)
    if not isinstance(node, ast.Call):
        return False
    if name in DEADLINE_SCOPES:
        given = [
            *node.args[:1],
            *(k.value for k in node.keywords if k.arg in ("seconds", "deadline")),
        ]
        return not any(_infinite(value) for value in given)
    return name == "CancelScope" and any(
        k.arg in DEADLINE_KEYWORDS and not _infinite(k.value) for k in node.keywords
    )


#: Awaits that never block: they may stand in a shield outside its deadlines.
NEVER_BLOCKS = {"checkpoint", "checkpoint_if_cancelled"}


def _deadline_inside(body: list[ast.stmt]) -> bool:
    """Whether a shielded block is bounded from inside: it has a deadline scope (``with
    trio.move_on_after(t):``) and every wait in it (an ``await``, an ``async with``, an
    ``async for``) is inside one, or never blocks (``trio.lowlevel.checkpoint()``).
    Function definitions inside it do not run there, and are not looked at."""
    has_deadline = False

    def bounded(nodes: list[ast.stmt] | list[ast.AST]) -> bool:
        nonlocal has_deadline
        for node in nodes:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                continue
            if isinstance(node, ast.With | ast.AsyncWith) and any(
                _has_deadline(item.context_expr) for item in node.items
            ):
                has_deadline = True
                continue  # everything in it waits at most until its deadline
            if isinstance(node, ast.AsyncWith | ast.AsyncFor):
                return False
            if isinstance(node, ast.Await) and _called_name(node.value) not in NEVER_BLOCKS:
                return False
            if not bounded(list(ast.iter_child_nodes(node))):
                return False
        return True

    return bounded(list(body)) and has_deadline


def _shields(source: str) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """The shields of ``source`` that have no deadline in the statement that sets them,
    as ``(line, code)``: those not marked, and those marked ``# unbounded shield: why``.

    A shield is ``shield=`` in a call (``CancelScope(shield=True)``, ``move_on_after(t,
    shield=True)``) or an assignment to ``<scope>.shield``. It is bounded when the call
    itself has a deadline, when another item of the same ``with`` statement does
    (``with CancelScope(shield=True), move_on_after(t):``), when its block is bounded from
    inside (:func:`_deadline_inside`), or, for ``scope.shield = ...``,
    when ``scope`` is the target of an enclosing ``with move_on_after(t) as scope:``. The
    mark goes on the shield's line or in the comment block just above its statement.
    """
    tree = ast.parse(source)
    lines = source.splitlines()
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node

    def enclosing(node: ast.AST) -> list[ast.AST]:
        chain = []
        while node in parents:
            node = parents[node]
            chain.append(node)
        return chain

    def statement_of(node: ast.AST) -> ast.stmt:
        while not isinstance(node, ast.stmt):
            node = parents[node]
        return node

    def marked(node: ast.expr | ast.stmt) -> str | None:
        """The reason marked on the shield's lines or the comment block just above."""
        first = statement_of(node).lineno
        while first > 1 and lines[first - 2].strip().startswith("#"):
            first -= 1
        block = lines[first - 1 : node.lineno]
        text = " ".join(line[line.index("#") :] for line in block if "#" in line)
        if UNBOUNDED_MARK not in text:
            return None
        return text.split(UNBOUNDED_MARK, 1)[1].replace(" # ", " ").strip() or None

    unmarked: list[tuple[int, str]] = []
    accepted: list[tuple[int, str]] = []

    def judge(node: ast.expr | ast.stmt) -> None:
        reason = marked(node)
        if reason:
            accepted.append((node.lineno, reason))
        else:
            unmarked.append((node.lineno, lines[node.lineno - 1].strip()))

    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and any(k.arg == "shield" for k in node.keywords):
            if _has_deadline(node):
                continue
            statement = statement_of(node)
            if isinstance(statement, ast.With | ast.AsyncWith) and (
                any(_has_deadline(item.context_expr) for item in statement.items)
                or _deadline_inside(statement.body)
            ):
                continue
            judge(node)
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if not (isinstance(target, ast.Attribute) and target.attr == "shield"):
                    continue
                scope = target.value
                bounded = isinstance(scope, ast.Name) and any(
                    isinstance(outer, ast.With | ast.AsyncWith)
                    and any(
                        _has_deadline(item.context_expr)
                        and isinstance(item.optional_vars, ast.Name)
                        and item.optional_vars.id == scope.id
                        for item in outer.items
                    )
                    for outer in enclosing(node)
                )
                if not bounded:
                    judge(node)
    return unmarked, accepted


SOURCES = sorted(PACKAGE.rglob("*.py"))


def test_every_shield_has_a_deadline_or_says_why_not() -> None:
    """A shield without a deadline lets a stuck peer hold the caller, cancelled or not,
    for ever: bound it (``trio.move_on_after(t, shield=True)``, with a named constant and
    a row in docs/reference/limits.md) or mark it ``# unbounded shield: <why>``."""
    unmarked: list[str] = []
    accepted: list[str] = []
    stale: list[str] = []
    for path in SOURCES:
        source = path.read_text()
        found, marked = _shields(source)
        name = path.relative_to(PACKAGE.parent)
        unmarked += [f"{name}:{line}: {code}" for line, code in found]
        accepted += [f"{name}:{line}: {why}" for line, why in marked]
        if source.count(UNBOUNDED_MARK) != len(marked):
            stale.append(str(name))
    assert not unmarked, "shields without a deadline:\n" + "\n".join(unmarked)
    # A mark where the shield is bounded after all says something false: take it out.
    assert not stale, f"'{UNBOUNDED_MARK}' marks on no unbounded shield in {stale}"
    # The accepted ones, for the record (pytest -rP shows them).
    print("unbounded shields, and why:\n" + "\n".join(accepted))
    assert any("_tasks/_sqlite.py" in entry for entry in accepted)


BOUNDED_SHIELDS = [
    "with trio.move_on_after(5, shield=True):\n    pass\n",
    "with trio.fail_at(t, shield=True):\n    pass\n",
    "with trio.CancelScope(shield=True, deadline=t):\n    pass\n",
    "with trio.CancelScope(shield=True, relative_deadline=5):\n    pass\n",
    "with trio.CancelScope(shield=True), trio.move_on_after(5):\n    pass\n",
    "with trio.move_on_after(5) as cleanup:\n    cleanup.shield = True\n",
    "# unbounded shield: a thread that cannot be cancelled\nwith trio.CancelScope(shield=True):\n"
    "    pass\n",
    "scope = trio.CancelScope(shield=True)  # unbounded shield: cancelled below\n",
    # bounded from inside: every wait is in a deadline scope, or never blocks
    "with trio.CancelScope(shield=True):\n    await trio.lowlevel.checkpoint()\n"
    "    with trio.move_on_after(1):\n        await flush()\n"
    "    with trio.fail_after(2):\n        async with lock:\n            await close()\n"
    "    def later():\n        return wait()\n",
]
UNBOUNDED_SHIELDS = [
    "with trio.CancelScope(shield=True):\n    pass\n",
    "scope = trio.CancelScope(shield=True)\n",
    "with trio.CancelScope() as scope:\n    scope.shield = True\n",
    "with trio.move_on_after(5):\n    with trio.CancelScope() as inner:\n"
    "        inner.shield = True\n",
    "with trio.move_on_after(5) as outer:\n    other.shield = True\n",
    "# unbounded shield:\nwith trio.CancelScope(shield=True):\n    pass\n",  # no reason
    "# unbounded shield: too far above\n\nwith trio.CancelScope(shield=True):\n    pass\n",
    "with trio.move_on_after(math.inf, shield=True):\n    pass\n",
    "with trio.CancelScope(shield=True, deadline=float('inf')):\n    pass\n",
    # a deadline inside, but one wait outside it
    "with trio.CancelScope(shield=True):\n    with trio.move_on_after(1):\n"
    "        await flush()\n    await close()\n",
    "with trio.CancelScope(shield=True):\n    with trio.move_on_after(1):\n"
    "        await flush()\n    async with lock:\n        pass\n",
    "with trio.CancelScope(shield=True):\n    with trio.move_on_after(1):\n"
    "        await flush()\n    async for item in stream:\n        pass\n",
    "with trio.CancelScope(shield=True):\n    with trio.move_on_after(1):\n"
    "        pass\n    x = [await f() for f in fs]\n",
    # nothing inside has a deadline
    "with trio.CancelScope(shield=True):\n    await trio.lowlevel.checkpoint()\n",
]


@pytest.mark.parametrize("source", BOUNDED_SHIELDS)
def test_the_shield_check_accepts_a_deadline_or_a_reason(source: str) -> None:
    assert _shields(source)[0] == []


@pytest.mark.parametrize("source", UNBOUNDED_SHIELDS)
def test_the_shield_check_refuses_a_shield_without_either(source: str) -> None:
    assert len(_shields(source)[0]) == 1


#: Modules that import by a name computed at run time (not a deferred import, which goes
#: through a ``_lazy`` module), and why.
IMPORTS_BY_COMPUTED_NAME = {
    "trio_mcp/_types/_methods.py": "the method table loads each method's model by its name",
    "trio_mcp/_types/_converter.py": "resolves the string annotations of every model module",
    "trio_mcp/_http/server/_worker_spec.py": "a worker imports the user's 'module:attribute'",
    "trio_mcp/_fuzz/_runner.py": "checks that the fuzz extra's packages, named, are there",
}


def test_only_the_lazy_modules_import_importlib() -> None:
    """A deferred import is written in the package's ``_lazy.py``, nowhere else: any other
    module importing ``importlib`` imports by a computed name, and says why above."""
    found = []
    for path in SOURCES:
        tree = ast.parse(path.read_text())
        uses = any(
            (isinstance(node, ast.Import) and any(a.name == "importlib" for a in node.names))
            or (isinstance(node, ast.ImportFrom) and node.module == "importlib")
            for node in ast.walk(tree)
        )
        name = str(path.relative_to(PACKAGE.parent))
        if uses and path.name != "_lazy.py" and name not in IMPORTS_BY_COMPUTED_NAME:
            found.append(name)
    assert not found, f"importlib outside the _lazy modules: {found}"
