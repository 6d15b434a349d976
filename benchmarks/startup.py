"""Start-up cost: what ``import trio_mcp`` and the ``trio-mcp`` command cost a program before
it does anything, and what two choices in the models save.

Each figure is the median of ``--runs`` fresh interpreters:

- ``importtime``: the cumulative time ``python -X importtime`` reports for ``trio_mcp``;
- ``import wall``: the wall time of ``python -c "import trio_mcp"``, interpreter start
  included, seen from this process;
- ``--help wall``: the wall time of ``trio-mcp --help``.

Several ``--tree`` checkouts (their root folders) are measured interleaved, run by run, so
a before/after comparison sees the same machine load:

    python benchmarks/startup.py [--runs 20] [--tree .] [--tree /tmp/main]
    python benchmarks/startup.py --models

``--models`` measures, in this interpreter, why the models are written as they are:
creating an attrs class with generated ``__eq__``/``__hash__``/``__repr__`` against one that
inherits them (``Model`` in ``trio_mcp/_types/_base.py``), and against a plain slotted
class (the protocol events in ``trio_mcp/_protocol/_events.py``).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _env(tree: Path) -> dict[str, str]:
    # PYTHONPATH comes before the editable install's path, and the working folder (first
    # on sys.path for -c) is an empty one: the tree named is the one imported.
    return {**os.environ, "PYTHONPATH": str(tree)}


def importtime_us(tree: Path, cwd: str) -> float:
    run = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import trio_mcp"],
        env=_env(tree),
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    for line in run.stderr.splitlines():
        match = re.match(r"import time:\s+\d+ \|\s+(\d+) \| trio_mcp$", line)
        if match:
            return float(match.group(1))
    raise RuntimeError(f"no trio_mcp line in:\n{run.stderr}")


def wall_ms(command: list[str], tree: Path, cwd: str) -> float:
    start = time.perf_counter()
    subprocess.run(command, env=_env(tree), cwd=cwd, capture_output=True, check=True)
    return (time.perf_counter() - start) * 1e3


def measure(trees: list[Path], runs: int) -> None:
    script = shutil.which("trio-mcp") or str(Path(sys.executable).parent / "trio-mcp")
    figures: dict[Path, dict[str, list[float]]] = {
        tree: {"importtime ms": [], "import wall ms": [], "--help wall ms": []} for tree in trees
    }
    with tempfile.TemporaryDirectory() as cwd:
        for _ in range(runs):
            for tree in trees:
                got = figures[tree]
                got["importtime ms"].append(importtime_us(tree, cwd) / 1e3)
                got["import wall ms"].append(
                    wall_ms([sys.executable, "-c", "import trio_mcp"], tree, cwd)
                )
                got["--help wall ms"].append(wall_ms([script, "--help"], tree, cwd))
    print(f"medians of {runs} runs")
    print(f"  {'tree':40}" + "".join(f"{name:>16}" for name in figures[trees[0]]))
    for tree, got in figures.items():
        cells = "".join(f"{statistics.median(values):16.1f}" for values in got.values())
        print(f"  {str(tree)[-40:]:40}{cells}")


def models(n: int = 200) -> None:
    import attrs

    def make(kind: str, i: int) -> type:
        namespace = {"__annotations__": {"a": "int", "b": "str | None"}}
        if kind == "plain":
            return type(f"P{i}", (), {"__slots__": ("a", "b")})
        if kind == "generated":
            return attrs.define(type(f"G{i}", (), namespace))
        return attrs.define(repr=False, eq=False)(type(f"S{i}", (), namespace))

    for kind, what in (
        ("generated", "attrs class, generated __eq__/__hash__/__repr__"),
        ("shared", "attrs class, methods shared from a base"),
        ("plain", "plain slotted class"),
    ):
        start = time.perf_counter()
        for i in range(n):
            make(kind, i)
        print(f"  {(time.perf_counter() - start) / n * 1e6:8.1f} µs  {what}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--tree", type=Path, action="append", help="a checkout's root folder")
    parser.add_argument("--models", action="store_true", help="time creating model classes")
    args = parser.parse_args()
    if args.models:
        models()
        return
    measure([tree.resolve() for tree in args.tree or [HERE.parent]], args.runs)


if __name__ == "__main__":
    main()
