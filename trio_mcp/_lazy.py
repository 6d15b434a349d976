"""What this package's top-level modules load on first use, and the helper every package's
``_lazy`` module is built with.

Each private package that defers imports for start-up time (see "What importing loads" in
``docs/reference/layout.md``) lists them in its own ``_lazy.py``, in one place: code writes
``_lazy.Name`` where it needs one of them, and the first read imports the module. The
imports are written twice, the same statements: under ``TYPE_CHECKING`` (what type checkers
and the layering test read) and as the text handed to :func:`on_first_use` (what runs);
``tests/test_lazy_imports.py`` checks that the two agree.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

# The same statements as the text handed to on_first_use below, one a line.
# isort: off
if TYPE_CHECKING:
    # _jsonschema: a slow import, that servers whose tools are typed functions never need
    import jsonschema  # type: ignore[import-untyped]
    import referencing

    # _errors: every module imports it, few programs meet URLElicitationRequired
    from ._types._elicitation import ElicitRequestURLParams
# isort: on


def on_first_use(namespace: dict[str, Any], imports: str) -> Callable[[str], Any]:
    """The module ``__getattr__`` (PEP 562) of a ``_lazy`` module.

    Args:
        namespace: the ``_lazy`` module's ``globals()``.
        imports: import statements, one a line, as they would be written at the top of the
            ``_lazy`` module: ``import module`` or ``from module import name, name``
            (``module`` relative to the ``_lazy`` module's package, or absolute). They are
            read, not run: each binds its names on first read.

    Reading a name imports its module once and keeps the name in ``namespace``, so later
    reads are plain attribute lookups. A name not in ``imports`` raises
    :class:`AttributeError`; a module that cannot be imported (an extra not installed)
    raises :class:`ImportError` at the read.
    """
    where: dict[str, tuple[str, bool]] = {}
    for line in imports.splitlines():
        words = line.replace(",", " ").split()
        if words[:1] == ["import"] and len(words) == 2:
            where[words[1].rpartition(".")[2]] = (words[1], True)
        elif words[:1] == ["from"] and words[2:3] == ["import"] and "as" not in words:
            where.update((name, (words[1], False)) for name in words[3:])
        elif words:
            raise ValueError(f"not an import statement on_first_use reads: {line!r}")
    package = namespace["__package__"]

    def __getattr__(name: str) -> Any:
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


if not TYPE_CHECKING:
    __getattr__ = on_first_use(
        globals(),
        """
        import jsonschema
        import referencing
        from ._types._elicitation import ElicitRequestURLParams
        """,
    )
