"""Regression tests for bugs the fuzzers (fuzz/) found in the sans-IO core. Each test is
named for the bug it pins down."""

from __future__ import annotations

import pytest

from trio_mcp.jsonrpc import ErrorCode, McpError
from trio_mcp.protocol import (
    LEGACY_VERSIONS,
    MODERN_VERSIONS,
    PROTOCOL_VERSION,
    Connection,
    Phase,
)
from trio_mcp.types import Implementation

INFO = Implementation(name="t", version="0")


def test_initialize_request_on_modern_only_client_raises_value_error_not_index_error() -> None:
    client = Connection("client", info=INFO, versions=MODERN_VERSIONS)
    with pytest.raises(ValueError, match="no legacy revision"):
        client.initialize_request()
    assert client.phase is Phase.NEW
    assert client.outstanding == 0


def test_legacy_only_client_cannot_send_server_discover_unchecked() -> None:
    # The era probe skipped every send check, so a client speaking no modern revision sent
    # a modern-only method with no envelope.
    client = Connection("client", info=INFO, versions=LEGACY_VERSIONS)
    with pytest.raises(McpError) as caught:
        client.send_request("server/discover")
    assert caught.value.code == ErrorCode.METHOD_NOT_FOUND
    assert client.outstanding == 0


def test_dual_era_client_probes_with_server_discover_in_the_modern_envelope() -> None:
    client = Connection("client", info=INFO)
    pending, message = client.send_request("server/discover")
    assert pending.version == MODERN_VERSIONS[0]
    assert message.params is not None
    assert message.params["_meta"][PROTOCOL_VERSION] == MODERN_VERSIONS[0]
