"""What this package's top-level modules load on first use, and the helper every package's
``_lazy`` module is built with.

Each private package that defers imports for start-up time (see "What importing loads" in
``docs/reference/layout.md``) lists them in its own ``_lazy.py``, in one place: code writes
``_lazy.Name`` where it needs one of them, and the first read imports the module. The
imports are written once, under ``TYPE_CHECKING``: type checkers (and the layering test)
read them as imports, and :func:`on_first_use` reads the same statements from the module's
source when a name is first read.
"""

from __future__ import annotations

import ast  # loaded already: inspect imports it
import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

# What __getattr__ below loads on first use: on_first_use reads these statements.
# isort: off
if TYPE_CHECKING:
    # _jsonschema: a slow import, that servers whose tools are typed functions never need
    import jsonschema  # type: ignore[import-untyped]
    import referencing

    # _errors: every module imports it, few programs meet URLElicitationRequired
    from ._types._elicitation import ElicitRequestURLParams
# isort: on


def on_first_use(namespace: dict[str, Any]) -> Callable[[str], Any]:
    """The module ``__getattr__`` (PEP 562) of a ``_lazy`` module, whose imports are the ones
    it writes under ``if TYPE_CHECKING:``: written once, read by type checkers as imports and,
    on the first read of a name, by this helper from the module's own source.

    Args:
        namespace: the ``_lazy`` module's ``globals()``.

    Reading a name imports its module once and keeps the name in ``namespace``, so later
    reads are plain attribute lookups. A name not imported under ``TYPE_CHECKING`` raises
    :class:`AttributeError`; a module that cannot be imported (an extra not installed)
    raises :class:`ImportError` at the read. The source is parsed once, at the first read of
    any name.
    """
    where: dict[str, tuple[str, bool]] | None = None
    package = namespace["__package__"]

    def __getattr__(name: str) -> Any:
        nonlocal where
        if where is None:
            where = _declared_imports(namespace["__file__"])
        try:
            module_name, whole = where[name]
        except KeyError:
            raise AttributeError(
                f"module {namespace['__name__']!r} has no attribute {name!r}"
            ) from None
        module = importlib.import_module(module_name, package)
        if whole:
            value: Any = module
        elif hasattr(module, name):
            value = getattr(module, name)
        else:  # ``from package import submodule``
            value = importlib.import_module(f"{module.__name__}.{name}")
        namespace[name] = value
        return value

    return __getattr__


def _declared_imports(path: str) -> dict[str, tuple[str, bool]]:
    """What the ``if TYPE_CHECKING:`` block at the top level of the module at ``path``
    imports: each bound name -> (module, whether the name is the module itself).

    Raises:
        ValueError: an import this helper cannot load (``import a.b`` without ``as``, a
            name imported under another name).
        TypeError: a statement in the block that is not an import.
    """
    with open(path, encoding="utf-8") as source:
        lines = source.read().splitlines()
    # Only the block is parsed (the whole of a large module would take far longer).
    start = lines.index("if TYPE_CHECKING:") + 1
    end = next(
        (i for i in range(start, len(lines)) if lines[i] and not lines[i][0].isspace()),
        len(lines),
    )
    block = ast.parse("\n".join(line[4:] for line in lines[start:end]), path)
    where: dict[str, tuple[str, bool]] = {}
    for statement in block.body:
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                if "." in alias.name and alias.asname is None:
                    raise ValueError(f"{path}: write 'import {alias.name} as NAME'")
                where[alias.asname or alias.name] = (alias.name, True)
        elif isinstance(statement, ast.ImportFrom):
            module = "." * statement.level + (statement.module or "")
            for alias in statement.names:
                if alias.asname not in (None, alias.name):
                    raise ValueError(f"{path}: a lazy import keeps its name ({alias.name})")
                where[alias.name] = (module, False)
        else:
            raise TypeError(f"{path}: not an import under TYPE_CHECKING: {ast.unparse(statement)}")
    return where


if not TYPE_CHECKING:
    __getattr__ = on_first_use(globals())
