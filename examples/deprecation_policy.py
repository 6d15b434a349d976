"""How a public name will be deprecated after 0.1.0 (docs/reference/api-stability.md).

The old name stays for at least one minor release, keeps working, and warns with a
DeprecationWarning that names the replacement and the release that removes it;
``stacklevel=2`` points the warning at the caller's line. Run it: it calls the old name and
prints the warning as a user sees it.
"""

from __future__ import annotations

import warnings
from typing import Any


def fuzz(*args: Any, **kwargs: Any) -> str:
    """The new name (a stand-in for trio_mcp.fuzz.fuzz)."""
    return "fuzzed"


def fuzz_server(*args: Any, **kwargs: Any) -> str:
    """Deprecated since 0.2.0: use :func:`trio_mcp.fuzz.fuzz` (removed in 0.3.0)."""
    warnings.warn(
        "trio_mcp.fuzz.fuzz_server is deprecated since 0.2.0 and will be removed in 0.3.0: "
        "use trio_mcp.fuzz.fuzz",
        DeprecationWarning,
        stacklevel=2,
    )
    return fuzz(*args, **kwargs)


def main() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fuzz_server()  # the caller's line: the warning points here
    (warning,) = caught
    print(f"old name -> {result}")
    print(f"{warning.category.__name__}: {warning.message}")
    print(f"reported at {'this file' if warning.filename == __file__ else warning.filename}")


if __name__ == "__main__":
    main()
