"""Regression tests for bugs the fuzzers (fuzz/) found in the sans-IO core. Each test is
named for the bug it pins down."""

from __future__ import annotations

import pytest

from trio_mcp.protocol import MODERN_VERSIONS, Connection, Phase
from trio_mcp.types import Implementation

INFO = Implementation(name="t", version="0")


def test_initialize_request_on_modern_only_client_raises_value_error_not_index_error() -> None:
    client = Connection("client", info=INFO, versions=MODERN_VERSIONS)
    with pytest.raises(ValueError, match="no legacy revision"):
        client.initialize_request()
    assert client.phase is Phase.NEW
    assert client.outstanding == 0
