"""The docs stay true: generated pages match the code."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_lifecycle_reference_matches_the_tables() -> None:
    spec = importlib.util.spec_from_file_location(
        "generate", ROOT / "docs" / "reference" / "generate.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (ROOT / "docs" / "reference" / "lifecycle.md").read_text() == module.render(), (
        "run: python docs/reference/generate.py"
    )
