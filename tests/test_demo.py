"""The README's demo runs and shows the whole conversation."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import NoReturn

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: Set to 1 (CI does) to make a wheel that cannot be built or installed for want of the
#: package index a failure instead of a skip.
REQUIRE_WHEEL = "TRIO_MCP_REQUIRE_WHEEL"


@pytest.mark.parametrize("args", [[], ["--modern"]])
def test_memory_demo(args: list[str]) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "memory_demo.py"), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert "== connected: modern era, protocol 2026-07-28" in out
    assert "== greet says: Hello, Trio!" in out
    assert "== progress 3/3" in out
    assert "== count_to returned: {'result': 3}" in out
    assert '"method":"notifications/cancelled"' in out


# What only the extras (http, testing, fuzz, test) bring: the README's demo installs none.
EXTRAS_ONLY = (
    "httpx", "httpx_sse", "hypercorn", "trio_websocket", "wsproto", "h11", "h2",
    "hypothesis", "mcp", "pytest", "anyio", "starlette", "pydantic",
)  # fmt: skip
BLOCKER = f"""
import sys
class _Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {EXTRAS_ONLY!r}:
            raise ImportError(f"{{name}} comes with an extra, not with 'pip install trio-mcp'")
        return None
sys.meta_path.insert(0, _Blocker())
"""


def test_the_readme_demo_needs_only_the_base_install(tmp_path: Path) -> None:
    """`pip install -e . && trio-mcp demo` installs no extra: the demo, and the everything
    server it starts, must import nothing that only an extra brings."""
    server = tmp_path / "server.py"  # the server the package ships, behind the same blocker
    server.write_text(
        BLOCKER
        + "import runpy\nrunpy.run_module('trio_mcp._everything_server', run_name='__main__', alter_sys=True)\n"
    )
    client = BLOCKER + (
        "import sys\nfrom trio_mcp._cli import main\n"
        f"sys.exit(main(['demo', '--server', {str(server)!r}]))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", client],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert run.stdout.rstrip().endswith("Done.")
    assert "Progress notifications" in run.stdout  # the tour went through long_task


def test_the_shipped_server_is_the_example() -> None:
    """`trio-mcp demo` runs the copy in the package; examples/ holds the one people read."""
    shipped = (ROOT / "trio_mcp" / "_everything_server.py").read_text()
    assert shipped == (ROOT / "examples" / "everything_server.py").read_text(), (
        "examples/everything_server.py and trio_mcp/_everything_server.py differ: "
        "change both (the package's copy is what `trio-mcp demo` runs)"
    )


#: What pip says when the package index cannot be reached (the only reason to skip below).
OFFLINE = re.compile(
    r"NewConnectionError|Temporary failure in name resolution|Network is unreachable"
    r"|No matching distribution found|Could not find a version that satisfies|ProxyError"
    r"|Max retries exceeded|timed out",
    re.IGNORECASE,
)


def _pip(*args: str) -> None:
    """Run pip; skip (fail where REQUIRE_WHEEL=1) if the index cannot be reached, fail
    on any other error."""
    run = subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if run.returncode == 0:
        return
    output = run.stdout[-3000:] + run.stderr[-3000:]
    if OFFLINE.search(output):
        _offline(f"pip {args[0]} could not reach the package index: {output[-500:]}")
    pytest.fail(f"pip {' '.join(args)} failed:\n{output}")


def _offline(reason: str) -> NoReturn:
    if os.environ.get(REQUIRE_WHEEL) == "1":
        pytest.fail(f"{reason} ({REQUIRE_WHEEL}=1: the wheel test must run)")
    pytest.skip(reason)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_demo_runs_from_a_built_wheel_anywhere(tmp_path: Path) -> None:
    """`pip install trio-mcp && trio-mcp demo`, as a user does it: the wheel (not the
    source tree) in a fresh virtual environment, run from a directory that has no
    examples/ and no trio_mcp/ beside it."""
    dist = tmp_path / "dist"
    _pip("wheel", "--no-deps", "--quiet", "--wheel-dir", str(dist), str(ROOT))
    (wheel,) = dist.glob("trio_mcp-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    _pip("--python", str(python), "install", "--quiet", str(wheel))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    installed = subprocess.run(
        [str(python), "-c", "import trio_mcp; print(trio_mcp.__file__)"],
        capture_output=True,
        text=True,
        cwd=elsewhere,
        env=env,
        timeout=60,
    )
    assert Path(installed.stdout.strip()).is_relative_to(venv), installed  # not the source tree
    run = subprocess.run(
        [str(venv / "bin" / "trio-mcp"), "demo"],
        capture_output=True,
        text=True,
        cwd=elsewhere,
        env=env,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    for line in ("  -> Hello from trio-mcp!", "    progress 3/3", "  -> A demo answer.", "Done."):
        assert line in run.stdout, (line, run.stdout)
