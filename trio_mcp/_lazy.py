"""What this package's top-level modules load on first use, and the helper every package's
``_lazy`` module is built with.

Each private package that defers imports for start-up time (see "What importing loads" in
``docs/reference/layout.md``) lists them in its own ``_lazy.py``, in one place: code writes
``_lazy.Name`` where it needs one of them, and the first read imports the module. The names
are written twice, as imports under ``TYPE_CHECKING`` (what type checkers and the layering
test read) and as the table handed to :func:`on_first_use` (what runs);
``tests/test_lazy_imports.py`` checks that the two agree.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # _jsonschema: a slow import, that servers whose tools are typed functions never need
    import jsonschema as jsonschema  # type: ignore[import-untyped]
    import referencing as referencing

    # _errors: every module imports it, few programs meet URLElicitationRequired
    from ._types._elicitation import ElicitRequestURLParams as ElicitRequestURLParams


def on_first_use(
    namespace: dict[str, Any], imports: Mapping[str, tuple[str, ...]]
) -> Callable[[str], Any]:
    """The module ``__getattr__`` (PEP 562) of a ``_lazy`` module.

    Args:
        namespace: the ``_lazy`` module's ``globals()``.
        imports: each module, named as an import statement names it (relative to the
            ``_lazy`` module's package, as ``".._types._prompts"``, or absolute), to the
            names read from it; ``()`` stands for the module itself, under its last name.

    Reading a name imports its module once and keeps the name in ``namespace``, so later
    reads are plain attribute lookups. A name not in ``imports`` raises
    :class:`AttributeError`; a module that cannot be imported (an extra not installed)
    raises :class:`ImportError` at the read.
    """
    where: dict[str, tuple[str, bool]] = {}
    for module, names in imports.items():
        if names:
            where.update((name, (module, False)) for name in names)
        else:
            where[module.rpartition(".")[2]] = (module, True)
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
        {
            "jsonschema": (),
            "referencing": (),
            "._types._elicitation": ("ElicitRequestURLParams",),
        },
    )
