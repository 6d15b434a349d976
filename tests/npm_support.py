"""The npm reference server (``@modelcontextprotocol/server-everything``), installed once
for the interop tests (the ``npm_server_everything`` fixture is in tests/conftest.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import NoReturn

import attrs
import pytest

#: The npm reference server, at the version these tests were written against.
NPM_PACKAGE = "@modelcontextprotocol/server-everything"
NPM_VERSION = "2026.8.31"
#: Where it is installed (and reused across runs): ``npm install --prefix`` this folder.
NPM_CACHE = Path(os.environ.get("TRIO_MCP_NPM_CACHE", Path.home() / ".cache" / "trio-mcp-npm"))
#: Set to 1 (CI does) to make a missing node, npm or package a failure instead of a skip.
REQUIRE_NPM = "TRIO_MCP_REQUIRE_NPM"


@attrs.frozen
class NpmServer:
    """How to run the installed npm server over stdio."""

    #: With this machine's node, directly (one process).
    node_command: list[str]
    #: Through ``npm exec``, as MCP hosts usually start it (npm, then node under it).
    npm_exec_command: list[str]
    version: str


def _installed_version(package_dir: Path) -> str | None:
    try:
        return json.loads((package_dir / "package.json").read_text())["version"]  # type: ignore[no-any-return]
    except (OSError, ValueError, KeyError):
        return None


def _unavailable(reason: str) -> NoReturn:
    """Skip the test that needs the npm server, or fail it where it is required."""
    if os.environ.get(REQUIRE_NPM) == "1":
        pytest.fail(f"{reason} ({REQUIRE_NPM}=1: the npm interop tests must run)")
    pytest.skip(reason)


def install_npm_server(cache: Path) -> NpmServer:
    """Install the npm server into ``cache`` unless it is there already, and say how to run it.

    Skips the tests that use it (and only them) when node or npm is missing or the
    registry cannot be reached; with ``TRIO_MCP_REQUIRE_NPM=1`` fails them instead.
    """
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        _unavailable("node and npm are needed for the npm reference server")
    package_dir = cache / "node_modules" / "@modelcontextprotocol" / "server-everything"
    if _installed_version(package_dir) != NPM_VERSION:
        cache.mkdir(parents=True, exist_ok=True)
        try:
            subprocess.run(
                [
                    npm,
                    "install",
                    "--prefix",
                    str(cache),
                    "--no-audit",
                    "--no-fund",
                    "--loglevel=error",
                    f"{NPM_PACKAGE}@{NPM_VERSION}",
                ],
                check=True,
                capture_output=True,
                text=True,
                timeout=300,
            )
        except subprocess.CalledProcessError as exc:
            _unavailable(f"npm could not install {NPM_PACKAGE}: {exc.stderr.strip()[-500:]}")
        except subprocess.TimeoutExpired:
            _unavailable(f"npm could not install {NPM_PACKAGE} within 300 s")
    manifest = json.loads((package_dir / "package.json").read_text())
    entry = package_dir / manifest["bin"]["mcp-server-everything"]
    return NpmServer(
        node_command=[node, str(entry), "stdio"],
        npm_exec_command=[
            npm,
            "exec",
            "--offline",
            "--prefix",
            str(cache),
            "--",
            "mcp-server-everything",
            "stdio",
        ],
        version=manifest["version"],
    )
