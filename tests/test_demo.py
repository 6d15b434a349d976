"""The README's demo runs and shows the whole conversation."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


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
    server = tmp_path / "server.py"
    server.write_text(
        BLOCKER
        + f"import runpy\nrunpy.run_path({str(ROOT / 'examples' / 'everything_server.py')!r}, "
        + "run_name='__main__')\n"
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
