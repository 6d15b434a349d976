"""A module or command that needs an extra says which one when it is missing (issue 22):
``import trio_mcp.http`` and ``trio-mcp list-tools --url`` used to end in a bare
``ModuleNotFoundError: No module named 'httpx'``.

The missing packages are hidden by a finder at the front of ``sys.meta_path`` in a child
interpreter, which makes the import system answer exactly as if they were not installed;
a fresh virtual environment per extra would test the same at the cost of a pip install.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

HIDE = """
import sys
class Hide:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {hidden!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Hide())
"""


def run_without(hidden: set[str], code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", HIDE.format(hidden=hidden) + code],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )


HTTP = {"hypercorn", "httptools", "httpx", "httpx_sse", "trio_websocket"}


@pytest.mark.parametrize(
    ("module", "hidden", "extra"),
    [
        ("trio_mcp.http", HTTP, "http"),
        ("trio_mcp.websocket", HTTP, "http"),
        ("trio_mcp.auth", {"httpx", "joserfc", "cryptography"}, "auth"),
    ],
)
def test_importing_a_module_without_its_extra_names_the_extra(
    module: str, hidden: set[str], extra: str
) -> None:
    run = run_without(hidden, f"import {module}")
    assert run.returncode == 1
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith(f"trio_mcp._extras.MissingExtra: {module} needs the {extra!r} extra")
    assert last.endswith(f"pip install 'trio-mcp[{extra}]'")


def test_the_auth_module_needs_no_jose_package_to_import() -> None:
    # joserfc is imported when a DPoP proof or a JWT is made; the module itself needs httpx.
    run = run_without({"joserfc", "cryptography"}, "import trio_mcp.auth")
    assert run.returncode == 0, run.stderr


def test_the_command_line_names_the_extra_in_one_line() -> None:
    code = "from trio_mcp._cli import main; sys.exit(main(['list-tools', '--url', 'http://127.0.0.1:9/mcp']))"
    run = run_without(HTTP, code)
    assert run.returncode == 1, run.stderr
    assert run.stderr == (
        "trio-mcp: --url needs the 'http' extra, which is not installed (no module 'httpx', "
        "'httpx_sse'): pip install 'trio-mcp[http]'\n"
    )


def test_a_fleet_state_without_its_extra_names_the_extra() -> None:
    """``serve(..., state=...)`` without coredis: the error names the extra before any Redis
    is reached (the rest of the app imports nothing of Redis)."""
    code = """
import trio
from trio_mcp import Server
from trio_mcp.http import open_asgi_app

async def main():
    async with open_asgi_app(Server("s"), state="redis://127.0.0.1:1/0"):
        pass

trio.run(main)
"""
    run = run_without({"coredis"}, code)
    assert run.returncode == 1
    assert "needs the 'tasks-redis' extra" in run.stderr, run.stderr
    assert "pip install 'trio-mcp[tasks-redis]'" in run.stderr
