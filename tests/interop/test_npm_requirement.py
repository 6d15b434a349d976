"""The npm reference server's fixture: a missing node, npm or package skips the tests that
need it, unless ``TRIO_MCP_REQUIRE_NPM=1`` (as in CI) makes that a failure."""

from __future__ import annotations

from pathlib import Path

import pytest
from npm_support import REQUIRE_NPM, install_npm_server


def failing_tools(bin_dir: Path) -> None:
    """A ``node`` and an ``npm`` on PATH; this npm fails every install, as when the registry
    is unreachable."""
    bin_dir.mkdir()
    for name in ("node", "npm"):
        tool = bin_dir / name
        tool.write_text("#!/bin/sh\necho 'npm ERR! network unreachable' >&2\nexit 1\n")
        tool.chmod(0o755)


@pytest.mark.parametrize("required", [False, True])
def test_without_node_and_npm(
    required: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # neither node nor npm on it
    if required:
        monkeypatch.setenv(REQUIRE_NPM, "1")
        with pytest.raises(pytest.fail.Exception, match=r"node and npm are needed.*must run"):
            install_npm_server(tmp_path / "cache")
    else:
        monkeypatch.delenv(REQUIRE_NPM, raising=False)
        with pytest.raises(pytest.skip.Exception, match="node and npm are needed"):
            install_npm_server(tmp_path / "cache")


@pytest.mark.parametrize("required", [False, True])
def test_when_npm_cannot_install(
    required: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    failing_tools(tmp_path / "bin")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    expected = "npm could not install @modelcontextprotocol/server-everything: npm ERR! network"
    if required:
        monkeypatch.setenv(REQUIRE_NPM, "1")
        with pytest.raises(pytest.fail.Exception, match=expected):
            install_npm_server(tmp_path / "cache")
    else:
        monkeypatch.delenv(REQUIRE_NPM, raising=False)
        with pytest.raises(pytest.skip.Exception, match=expected):
            install_npm_server(tmp_path / "cache")
