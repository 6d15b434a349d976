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


def models() -> None:
    """Rebuild, in this interpreter, every model and event class ``import trio_mcp`` creates,
    three ways, and print what creating them costs in all."""
    import attrs

    import trio_mcp
    from trio_mcp._protocol import _events
    from trio_mcp._types._base import Model

    loaded = [
        cls
        for module in list(sys.modules.values())
        if getattr(module, "__name__", "").startswith("trio_mcp._types.")
        for cls in vars(module).values()
        if isinstance(cls, type)
        and issubclass(cls, Model)
        and attrs.has(cls)
        and cls.__module__ == module.__name__
    ]
    events = [
        cls
        for cls in vars(_events).values()
        if isinstance(cls, type) and issubclass(cls, _events._Event) and cls is not _events._Event
    ]

    def build(classes: list[type], how: str) -> float:
        start = time.perf_counter()
        for cls in classes:
            names = [a.name for a in attrs.fields(cls)] if attrs.has(cls) else cls.__slots__
            if how == "plain":
                type(cls.__name__, (), {"__slots__": tuple(names)})
                continue
            fields = {name: attrs.field(default=None) for name in names}
            shared = how == "shared"
            attrs.make_class(
                cls.__name__, fields, frozen=True, kw_only=True, repr=not shared, eq=not shared
            )
        return (time.perf_counter() - start) * 1e3

    print(f"import {trio_mcp.__name__} creates {len(loaded)} models, {len(events)} events")
    for classes, what in ((loaded, "the models"), (events, "the protocol events")):
        for how, label in (
            ("generated", "attrs, generated __eq__/__hash__/__repr__"),
            ("shared", "attrs, methods shared from a base (as Model does)"),
            ("plain", "plain slotted classes (as the events are)"),
        ):
            total = statistics.median(build(classes, how) for _ in range(5))
            print(f"  {what:20} {label:52} {total:7.2f} ms")


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
