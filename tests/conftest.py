"""Shared fixtures: the spec schemas (located in ``spec_support``), real components
started for the tests (a redis-server, oidc-provider) and the memory session pair. The
Hypothesis profiles and the rule that every skip says why live in the top-level conftest.py.
Test modules import helpers from the ``*_support`` modules, never from a conftest."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import front_ends
import pytest
from npm_support import NPM_CACHE, NpmServer, install_npm_server
from redis_support import RedisProcess, running_redis
from spec_support import REQUIRE_SPEC, SPEC_DIR, load_schema, missing_schemas

if TYPE_CHECKING:
    from trio_mcp.testing import SessionPair


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


@pytest.fixture
def spec_schema(request: pytest.FixtureRequest) -> dict[str, Any]:
    version = request.param
    schema = load_schema(version)
    if schema is None:
        pytest.skip(f"the spec schemas are not at {SPEC_DIR}")
    return schema


@pytest.fixture(scope="session")
def npm_server_everything() -> NpmServer:
    """``@modelcontextprotocol/server-everything``, installed with npm into
    :data:`~npm_support.NPM_CACHE` the first time (later runs need no network)."""
    return install_npm_server(NPM_CACHE)


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``redis://127.0.0.1:PORT/0`` of a redis-server shared by the whole run: tests that
    use it keep apart by a key prefix of their own. Skips without ``redis-server``, fails
    with ``TRIO_MCP_REQUIRE_REDIS=1``."""
    with running_redis(tmp_path_factory.mktemp("redis")) as redis:
        yield redis.url


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[RedisProcess]:
    """A redis-server of this test alone, which it may kill, stop and start again."""
    with running_redis(tmp_path) as process:
        yield process


@pytest.fixture
def durable_redis(tmp_path: Path) -> Iterator[RedisProcess]:
    """As :func:`redis`, with every write synced to an append-only file: what was written
    survives the server killed and started again, as with a production Redis."""
    with running_redis(tmp_path, durable=True) as process:
        yield process


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
