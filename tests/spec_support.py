"""Where the spec's JSON Schemas are (``../shared/spec``, or ``$TRIO_MCP_SPEC_DIR``) and how
the tests load them. Optional outside CI: the checks that need them skip (and only they);
``TRIO_MCP_REQUIRE_SPEC=1`` makes their absence an error of the whole run (tests/conftest.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SPEC_DIR = Path(os.environ.get("TRIO_MCP_SPEC_DIR", ROOT.parent / "shared" / "spec"))

SCHEMA_FILES = {
    "2026-07-28": "schema-2026-07-28.json",
    "2025-11-25": "schema-2025-11-25.json",
    "2025-06-18": "schema-2025-06-18.json",
}
#: The schemas of the protocol extensions we implement, checked against like the versions'.
EXTENSION_SCHEMA_FILES = ("ext-tasks-schema.json",)


#: Set to 1 (CI does) to make missing spec schemas an error of the whole run: without them
#: 50-odd checks skip and the tests generated from the schemas' definitions are not even
#: collected, which would let a green run hide that nothing was checked against the spec.
REQUIRE_SPEC = "TRIO_MCP_REQUIRE_SPEC"


def missing_schemas() -> list[str]:
    """The schema files of :data:`SCHEMA_FILES` and :data:`EXTENSION_SCHEMA_FILES` that are
    not in :data:`SPEC_DIR`."""
    names = [*SCHEMA_FILES.values(), *EXTENSION_SCHEMA_FILES]
    return [name for name in names if not (SPEC_DIR / name).is_file()]


def load_schema(version: str) -> dict[str, Any] | None:
    path = SPEC_DIR / SCHEMA_FILES[version]
    if not path.exists():
        return None
    return json.loads(path.read_text())  # type: ignore[no-any-return]
