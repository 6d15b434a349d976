"""Shared fixtures. Paths to the spec schemas are optional: checks that need them skip
(and only they) when ../shared is absent. The Hypothesis profiles live in the top-level
conftest.py."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import front_ends
import pytest

if TYPE_CHECKING:
    from trio_mcp.testing import SessionPair

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


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get(REQUIRE_SPEC) == "1" and (missing := missing_schemas()):
        raise pytest.UsageError(
            f"{REQUIRE_SPEC}=1 but the spec schemas {', '.join(missing)} are not in "
            f"{SPEC_DIR} (put them there or point TRIO_MCP_SPEC_DIR at them)"
        )


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say at the end of a run without every schema (and not requiring them) that it
    checked less than it seems: a green run must not hide that."""
    if missing := missing_schemas():
        terminalreporter.write_sep("=", "spec schemas missing", yellow=True)
        terminalreporter.write_line(
            f"{', '.join(missing)} not in {SPEC_DIR}: the checks against them skipped (-rs "
            "lists them) and the tests generated from their definitions were not collected; "
            f"{REQUIRE_SPEC}=1 (CI sets it) makes this an error"
        )


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


@pytest.fixture
def session_pair_options() -> dict[str, Any]:
    """The options of :func:`~trio_mcp.testing.memory_session_pair` for :func:`pair`: none
    here. A test module overrides this fixture with its own (its handler, capabilities); a
    test adds to them with ``@pytest.mark.session_pair(**options)`` (its ``client_options``
    and ``server_options`` are merged into the module's)."""
    return {}


@pytest.fixture
async def pair(
    request: pytest.FixtureRequest, session_pair_options: dict[str, Any]
) -> AsyncIterator[SessionPair]:
    """A client and a server session over memory streams, the handshake done
    (:func:`~trio_mcp.testing.memory_session_pair` with :func:`session_pair_options`, then the
    test's ``session_pair`` marker). Both close when the test has finished."""
    from trio_mcp.testing import memory_session_pair

    options = dict(session_pair_options)
    marker = request.node.get_closest_marker("session_pair")
    for key, value in (marker.kwargs if marker is not None else {}).items():
        if key in ("client_options", "server_options"):
            value = {**options.get(key, {}), **value}  # added to, not replaced
        options[key] = value
    async with memory_session_pair(**options) as opened:
        yield opened


@pytest.fixture(params=front_ends.FRONT_ENDS)
def front_end(request: pytest.FixtureRequest) -> Iterator[str]:
    """Each HTTP front end in turn, for the helpers that serve apps (see ``front_ends``)."""
    chosen: str = request.param
    front_ends.current = chosen
    try:
        yield chosen
    finally:
        front_ends.current = "hypercorn"
