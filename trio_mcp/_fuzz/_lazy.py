"""What the fuzzer loads only when a run starts: Hypothesis (the ``testing`` extra) and the
state machine built on it, and ``jsonschema`` to check answers against the spec's schemas. The
``trio-mcp`` command imports the runner for its options and errors, and the pytest plugin
loads with every pytest session: neither should pay for (or need) these before a run (see
"What importing loads" in ``docs/reference/layout.md``). Code here writes ``_lazy.Name``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import on_first_use

if TYPE_CHECKING:
    import jsonschema as jsonschema  # type: ignore[import-untyped]
    from hypothesis import (
        HealthCheck as HealthCheck,
        Phase as Phase,
        Verbosity as Verbosity,
        seed as seed,
        settings as settings,
    )
    from hypothesis.errors import (
        Flaky as Flaky,
        FlakyStrategyDefinition as FlakyStrategyDefinition,
        HypothesisException as HypothesisException,
    )
    from hypothesis.stateful import get_state_machine_test as get_state_machine_test

    from ._machine import ServerMachine as ServerMachine
    from ._runner import fuzz as fuzz

if not TYPE_CHECKING:
    __getattr__ = on_first_use(
        globals(),
        {
            "jsonschema": (),
            "hypothesis": ("HealthCheck", "Phase", "Verbosity", "seed", "settings"),
            "hypothesis.errors": ("Flaky", "FlakyStrategyDefinition", "HypothesisException"),
            "hypothesis.stateful": ("get_state_machine_test",),
            "._machine": ("ServerMachine",),
            "._runner": ("fuzz",),
        },
    )
