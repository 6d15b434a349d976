"""What the fuzzer loads only when a run starts: Hypothesis (the ``testing`` extra) and the
state machine built on it, the security scans (on httpx), and ``jsonschema`` to check
answers against the spec's schemas. The ``trio-mcp`` command imports the runner for its
options and errors, and the pytest plugin loads with every pytest session: neither should
pay for (or need) these before a run (see "What importing loads" in
``docs/reference/layout.md``). Code here writes ``_lazy.Name``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import on_first_use

# What __getattr__ below loads on first use: on_first_use reads these statements.
# isort: off
if TYPE_CHECKING:
    import jsonschema  # type: ignore[import-untyped]
    from hypothesis import HealthCheck, Phase, Verbosity, seed, settings
    from hypothesis.errors import Flaky, FlakyStrategyDefinition, HypothesisException
    from hypothesis.stateful import get_state_machine_test
    from ._http import HttpConnection
    from ._machine import ServerMachine, machine_for
    from ._runner import fuzz
    from ._scan import run_scans
    from ._scan_http import scan_http
    from ._settings import FuzzSettings
# isort: on

if not TYPE_CHECKING:
    __getattr__ = on_first_use(globals())
