"""The pytest plugin: a fixture that fuzzes your server inside your own test suite.

Installing trio_mcp registers it with pytest (a ``pytest11`` entry point), so the
fixture is there in every test suite; then::

    from trio_mcp.fuzz import StdioTarget

    async def test_my_server_survives_fuzzing(mcp_fuzz):
        await mcp_fuzz(StdioTarget(command=["python", "my_server.py"]), max_examples=50)

The awaited call fails the test (showing each failure and its minimal
reproduction, written under the test's ``tmp_path``) when a requirement
failed, and returns the :class:`~trio_mcp.fuzz.FuzzReport` otherwise.
Runs are deterministic: the seed is derived from the test's id unless
``--mcp-fuzz-seed`` says otherwise. ``--mcp-fuzz-examples`` and
``--mcp-fuzz-time-budget`` override every call's budget (for a long run
in a nightly job, say).
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, Unpack

import attrs
import pytest

from . import _lazy

if TYPE_CHECKING:
    import trio

    from ._report import FuzzReport
    from ._settings import FuzzOptions, FuzzSettings
    from ._target import Target

# Loaded into every pytest run where trio_mcp is installed: import nothing of the fuzzer
# (nor Hypothesis, httpx, jsonschema: the ``fuzz`` extra) until a test uses the fixture.

__all__ = ["Fuzzer", "mcp_fuzz", "pytest_addoption"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mcp-fuzz", "trio_mcp fuzzing")
    group.addoption(
        "--mcp-fuzz-seed",
        default=None,
        help="seed for every mcp_fuzz run: an integer, or 'random' (default: from the test id)",
    )
    group.addoption(
        "--mcp-fuzz-examples", type=int, default=None, help="override max_examples everywhere"
    )
    group.addoption(
        "--mcp-fuzz-time-budget",
        type=float,
        default=None,
        help="override time_budget (seconds) everywhere",
    )


class Fuzzer:
    """What the :func:`mcp_fuzz` fixture gives a test: await it to fuzz a target."""

    def __init__(self, config: pytest.Config, nodeid: str, directory: Path) -> None:
        self._config = config
        self._nodeid = nodeid
        self._directory = directory
        #: The reports of the runs so far, in order.
        self.reports: list[FuzzReport] = []

    async def __call__(
        self,
        target: Target,
        settings: FuzzSettings | None = None,
        *,
        check: bool = True,
        progress: TextIO | None = None,
        stop: trio.Event | None = None,
        **options: Unpack[FuzzOptions],
    ) -> FuzzReport:
        """Fuzz ``target`` (arguments as :func:`~trio_mcp.fuzz.fuzz`'s: a
        :class:`~trio_mcp.fuzz.FuzzSettings` and single settings by name) and, with
        ``check``, fail the test if a requirement failed.

        Blocks for the run (bounded by its budgets); cancelling it stops the run
        and shuts down every server process it started.
        """
        run = attrs.evolve(settings or _lazy.FuzzSettings(), **options)
        seed = self._config.getoption("mcp_fuzz_seed")
        if seed is None:
            if run.seed is None:
                run = attrs.evolve(run, seed=zlib.crc32(self._nodeid.encode()))
        elif seed != "random":
            run = attrs.evolve(run, seed=int(seed))
        examples = self._config.getoption("mcp_fuzz_examples")
        if examples is not None:
            run = attrs.evolve(run, max_examples=examples)
        budget = self._config.getoption("mcp_fuzz_time_budget")
        if budget is not None:
            run = attrs.evolve(run, time_budget=budget)
        if run.reproduction_dir is None:
            run = attrs.evolve(
                run, reproduction_dir=self._directory / f"run-{len(self.reports) + 1}"
            )
        report = await _lazy.fuzz(target, run, progress=progress, stop=stop)
        self.reports.append(report)
        if check and not report.ok:
            pytest.fail(report.summary(), pytrace=False)
        return report


@pytest.fixture
def mcp_fuzz(request: pytest.FixtureRequest, tmp_path: Path) -> Fuzzer:
    """An awaitable fuzzer for MCP servers; see :class:`Fuzzer`."""
    return Fuzzer(request.config, request.node.nodeid, tmp_path / "mcp-fuzz")
