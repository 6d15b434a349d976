"""Shared fixtures. Paths to the spec schemas are optional: checks that need them skip
(and only they) when ../shared is absent. The Hypothesis profiles live in the top-level
conftest.py."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPEC_DIR = Path(os.environ.get("TRIO_MCP_SPEC_DIR", ROOT.parent / "shared" / "spec"))

SCHEMA_FILES = {
    "2026-07-28": "schema-2026-07-28.json",
    "2025-11-25": "schema-2025-11-25.json",
    "2025-06-18": "schema-2025-06-18.json",
}


def load_schema(version: str) -> dict[str, Any] | None:
    path = SPEC_DIR / SCHEMA_FILES[version]
    if not path.exists():
        return None
    return json.loads(path.read_text())  # type: ignore[no-any-return]


@pytest.fixture
def spec_schema(request: pytest.FixtureRequest) -> dict[str, Any]:
    version = request.param
    schema = load_schema(version)
    if schema is None:
        pytest.skip(f"the spec schemas are not at {SPEC_DIR}")
    return schema


@pytest.fixture(scope="session")
def oidc_provider() -> Any:
    """A running oidc-provider (a real OAuth 2.1 authorization server, installed with npm on
    first use; see tests/auth_support/oidc.py), shared by the session: an
    :class:`~auth_support.oidc.OidcProvider` with its issuer URL and a confidential client
    for ``client_credentials``. Skips without node/npm, fails with TRIO_MCP_REQUIRE_OIDC=1."""
    from auth_support.oidc import start_oidc_provider

    with start_oidc_provider() as provider:
        yield provider


@pytest.fixture
def oidc_issuer(oidc_provider: Any) -> str:
    """The issuer URL of :func:`oidc_provider`."""
    return str(oidc_provider.issuer)
