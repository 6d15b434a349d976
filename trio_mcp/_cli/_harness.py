"""The official MCP conformance harness (the npm package ``@modelcontextprotocol/conformance``)
and the Node it needs, installed with npm into a cache folder on first use.

Stdlib only (and blocking): the test suite's runner (``tests/conformance/run.py``) calls it
outside Trio, and ``trio-mcp conformance`` from a worker thread.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Final

__all__ = ["HARNESS_VERSION", "HarnessUnavailable", "default_home", "install_harness"]

#: The harness version run (pinned: scenarios and their counts change between versions).
HARNESS_VERSION: Final = "0.2.0-alpha.12"
#: The Node the harness needs (it needs 22 or later; npm installs it beside the harness).
NODE_PACKAGE: Final = "node@22"
#: Seconds npm may take to install both.
INSTALL_TIMEOUT: Final = 600


class HarnessUnavailable(Exception):
    """The harness cannot be installed (no npm, no registry, a failed install)."""


def default_home() -> Path:
    """``$TRIO_MCP_CONFORMANCE_HOME``, else ``~/.cache/trio-mcp-conformance``."""
    configured = os.environ.get("TRIO_MCP_CONFORMANCE_HOME")
    return Path(configured) if configured else Path.home() / ".cache" / "trio-mcp-conformance"


def install_harness(home: Path, version: str = HARNESS_VERSION) -> list[str]:
    """The command that runs the harness (``[node, entry point]``), installing the harness
    and Node into ``home`` first unless that version is there already. Blocks.

    Raises:
        HarnessUnavailable: npm is missing or the install failed (its output's tail says
            why).
    """
    harness = home / "node_modules" / "@modelcontextprotocol" / "conformance"
    node = home / "node_modules" / ".bin" / "node"
    installed = harness / "package.json"
    if (
        installed.exists()
        and json.loads(installed.read_text())["version"] == version
        and node.exists()
    ):
        return [str(node), str(harness / "dist" / "index.js")]
    npm = shutil.which("npm")
    if npm is None:
        raise HarnessUnavailable("npm is not installed (the harness is an npm package)")
    home.mkdir(parents=True, exist_ok=True)
    command = [
        npm,
        "install",
        "--no-audit",
        "--no-fund",
        "--prefix",
        str(home),
        NODE_PACKAGE,
        f"@modelcontextprotocol/conformance@{version}",
    ]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise HarnessUnavailable(f"npm install timed out after {INSTALL_TIMEOUT} s") from None
    if done.returncode != 0 or not node.exists():
        raise HarnessUnavailable(
            f"npm install failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        )
    return [str(node), str(harness / "dist" / "index.js")]
