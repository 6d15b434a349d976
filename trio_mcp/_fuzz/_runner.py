"""Running the state machine against a target: :func:`fuzz`.

Theory of operation
-------------------

Hypothesis is synchronous, so it runs in one worker thread started with
:func:`trio.to_thread.run_sync` from the task that called
:func:`fuzz`; that task waits for it (drawing the progress line) and
nothing outlives the call. Each rule's I/O is a :func:`trio.from_thread.run`
call back into Trio, where the connections, their reader tasks and the
child processes live, in a nursery that :func:`fuzz` owns.

Cancelling :func:`fuzz` reaches the thread at its next call into
Trio, as :exc:`trio.Cancelled`, which Hypothesis lets through: the run ends
at once and its findings are abandoned. The time budget and the ``stop``
event end it at the same point, with a
:class:`~._runtime.BudgetExhausted` instead, and what was found is kept.
The bridge itself (:class:`~._runtime.Runtime`, :class:`~._runtime.Link`)
is in :mod:`._runtime`; the rules are in :mod:`._machine`.

Failures are not taken from Hypothesis's final exception but recorded as
they happen: for each invariant, the few shortest failing transcripts. The
shrinker keeps feeding that record smaller examples, and a run cut short
by its budget still reports the smallest seen. At the end each is replayed
on a fresh connection to check that it reproduces.
"""

from __future__ import annotations

import fnmatch
import importlib
import random
import time
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any, TextIO, Unpack

import attrs
import trio

from .._util import open_nursery_unwrapped
from .._versions import LEGACY_VERSIONS, MODERN_VERSIONS, era_of
from . import _lazy
from ._checker import Finding
from ._connection import Timing
from ._invariants import CHECK_CLASSES, INVARIANTS, parse_checks
from ._minimize import culprit_alone, minimize
from ._opener import Opener
from ._probe import Catalogue, EraCatalogue, probe_era
from ._replay import replay_steps
from ._report import FuzzFailure, FuzzReport, Progress
from ._runtime import Candidate, Runtime, Store
from ._scan_finding import ScanFinding
from ._scan_replay import probe_rerun, scan_rerun
from ._settings import DEFAULT_TIME_BUDGET, FuzzOptions, FuzzSettings
from ._steps import Settle, Step
from ._target import HttpTarget, StdioTarget, Target
from ._tool_namespace import list_tool_names, namespace_collisions
from ._validate import Validator, spec_dir_from_environment

__all__ = [
    "DEFAULT_TIME_BUDGET",
    "FuzzError",
    "FuzzOptions",
    "FuzzSettings",
    "fuzz",
    "write_reproductions",
]

#: Findings that count even while probing an era the server turns out not to speak.
_ALWAYS_WRONG = frozenset({"server-alive", "valid-jsonrpc-only"})


class FuzzError(Exception):
    """The run could not start: the target speaks neither era, or cannot be started."""


def _settings(max_examples: int, max_steps: int) -> Any:
    return _lazy.settings(
        max_examples=max_examples,
        stateful_step_count=max_steps,
        deadline=None,
        database=None,
        derandomize=False,
        suppress_health_check=list(_lazy.HealthCheck),
        report_multiple_bugs=True,
        phases=(_lazy.Phase.explicit, _lazy.Phase.generate, _lazy.Phase.shrink),
        print_blob=False,
        verbosity=_lazy.Verbosity.quiet,
    )


async def _probe(
    opener: Opener, protocol_version: str | None, notes: list[str], *, relist_tools: bool
) -> tuple[Catalogue, list[tuple[str, list[Finding], list[Step]]]]:
    if protocol_version is not None:
        if protocol_version not in LEGACY_VERSIONS + MODERN_VERSIONS:
            raise FuzzError(
                f"unknown protocol version {protocol_version!r}; choose one of "
                + ", ".join(MODERN_VERSIONS + LEGACY_VERSIONS)
            )
        eras: list[str] = [era_of(protocol_version)]
    else:
        eras = ["modern", "legacy"]
    found: dict[str, EraCatalogue] = {}
    probe_findings: list[tuple[str, list[Finding], list[Step]]] = []
    for era in eras:
        result = await probe_era(opener.open, era, protocol_version, relist_tools=relist_tools)
        if result.catalogue is not None:
            found[era] = result.catalogue
            if result.findings:
                probe_findings.append((era, result.findings, result.steps))
        else:
            notes.append(f"not fuzzing the {era} era: {result.why_not}")
            # Probing an era the server may not speak: only what no server may ever do
            # counts (unless that era was asked for).
            kept = [
                f
                for f in result.findings
                if protocol_version is not None or f.invariant.name in _ALWAYS_WRONG
            ]
            if kept:
                probe_findings.append((era, kept, result.steps))
    return Catalogue(eras=found, notes=tuple(notes)), probe_findings


async def fuzz(
    target: Target,
    settings: FuzzSettings | None = None,
    *,
    progress: TextIO | None = None,
    stop: trio.Event | None = None,
    **options: Unpack[FuzzOptions],
) -> FuzzReport:
    """Fuzz an MCP server with Hypothesis state machines and report what failed.

    First probes the target (``server/discover`` and the ``initialize``
    handshake, on fresh connections) to learn the eras it speaks and what it
    offers, then runs up to ``max_examples`` examples of up to ``max_steps``
    steps each, shrinking whatever fails, then replays each reproduction on
    a fresh connection to check that it reproduces.

    Requests are not all waited for one at a time: tool calls are left in flight while
    the example goes on (each still owed an answer within ``deadline``), and while
    nothing has failed, the answers an example is owed when it ends are waited for in
    the background as the next one runs.

    Only the check classes of ``checks`` run (``protocol``: the state machine's protocol
    rules; ``http``: its HTTP rules and the fixed probes of :mod:`._scan_http`;
    ``tools``: the probe lists the tools twice and judges what they show), and only their
    findings are reported.

    Blocks until the run is over: at most about ``time_budget`` seconds from the call
    (probes included; a step still running then is cancelled), plus the answers
    examples ending then are owed (at most ``deadline``), the closing of connections
    (the stdio shutdown ladder) and, when something failed, ``minimize_budget`` seconds
    of replays. A run cut short by its budget is not a failure: ``report.stopped`` is
    ``"time budget"`` and ``report.examples`` says how far it got. The security scans
    the settings ask for (``identities``, ``crosstalk_clients``, ``leak_requests``) run
    after the examples, unless the run was stopped: a few seconds against a small server,
    each exchange bounded by ``deadline``. Cancelling it stops
    the run at once; every process it started is shut down before the cancellation
    propagates.

    Example::

        report = await fuzz(StdioTarget(command=["python", "server.py"]), seed=1)
        assert report.ok, report.summary()

    Args:
        target: a :class:`StdioTarget` or :class:`HttpTarget`.
        settings: the run's :class:`FuzzSettings` (budgets, deadlines, what to call,
            where to write reproductions); by default ``FuzzSettings()``.
        options: override single settings by name (``seed=1``, ``max_examples=50``;
            :class:`FuzzOptions`): ``fuzz(target, max_examples=50)`` is
            ``fuzz(target, FuzzSettings(max_examples=50))``.
        progress: where to draw the progress line (``None``: nowhere).
        stop: set it to end the run early but gracefully: no new examples, and the
            failures found so far are reported (``report.stopped == "stopped"``).
            Cancelling :func:`fuzz` instead abandons them.

    Raises:
        FuzzError: the target speaks neither era (nothing could be fuzzed), or a
            package the fuzzer needs is missing.
        FileNotFoundError, PermissionError: the command cannot be started.
    """
    started = time.monotonic()
    run = attrs.evolve(settings or FuzzSettings(), **options)
    _require("hypothesis", "the fuzzer")
    if isinstance(target, HttpTarget):
        _require("httpx", "fuzzing over HTTP")
    seed = run.seed if run.seed is not None else random.SystemRandom().randrange(2**32)
    max_examples, max_steps, deadline = run.max_examples, run.max_steps, run.deadline
    max_message_size, time_budget = run.max_message_size, run.time_budget
    if max_examples < 1 or max_steps < 1 or deadline <= 0 or max_message_size < 64:
        raise ValueError(
            "max_examples and max_steps must be positive, deadline above 0, "
            "max_message_size at least 64"
        )
    if run.max_body < 1024:
        raise ValueError(f"max_body must be at least 1024 bytes, not {run.max_body!r}")
    if run.state_ttl is not None and not 0 < run.state_ttl <= 3600:
        raise ValueError(f"state_ttl must be above 0 and at most 3600 s, not {run.state_ttl!r}")
    checks = parse_checks(run.checks)
    timing = Timing(deadline=deadline, cancel_wait=run.cancel_wait, startup=run.startup_timeout)
    validator = Validator(run.spec_dir if run.spec_dir is not None else spec_dir_from_environment())
    notes: list[str] = []
    schemas = validator.schema_versions()
    if not validator.jsonschema:
        notes.append("jsonschema is not installed: results checked with trio_mcp's models only")
    elif not schemas:
        notes.append(
            "no official schemas (spec_dir / TRIO_MCP_SPEC_DIR): results checked with "
            "trio_mcp's models only"
        )
    if isinstance(target, HttpTarget) and run.identities:
        # The examples speak as the first identity (the scans as each in turn).
        target = attrs.evolve(target, headers={**target.headers, **run.identities[0].headers})
    per_run = isinstance(target, StdioTarget) and target.process == "per-run"
    ticker = Progress(progress, interval=run.progress_interval)
    async with open_nursery_unwrapped() as nursery:
        opener = Opener(target, nursery, validator, timing, max_message_size)
        catalogue, probe_findings = await _probe(
            opener, run.protocol_version, notes, relist_tools="tools" in checks
        )
        listed = _tool_names(catalogue)  # (all it lists: the tools not called too)
        catalogue = _callable_tools(catalogue, run.skip_tools, run.call_risky_tools, notes)
        scanned: list[FuzzFailure] = []
        reached = False
        if "http" in checks and isinstance(target, HttpTarget):
            left = max(0.0, started + time_budget - time.monotonic())
            with trio.move_on_after(left) as scan_scope:
                scanned, reached = await _scan_http(target, catalogue, run, notes)
            if scan_scope.cancelled_caught:
                notes.append("the http probes were cut short by the time budget")
        runtime = Runtime(
            opener=opener,
            catalogue=catalogue,
            progress=ticker,
            strict=run.strict,
            per_run=per_run,
            budget_end=started + time_budget,
            shrink_budget=run.shrink_budget,
            max_message_size=max_message_size,
            checks=checks,
        )
        for era, findings, steps in probe_findings:
            for finding in runtime.selected(findings):
                failing = finding.invariant.level == "MUST" or run.strict
                store = runtime.store if failing else runtime.warnings
                store.offer(Candidate(finding, era, (*steps, Settle()), (), None))
        selected = any(runtime.selected(findings) for _, findings, _ in probe_findings)
        if not catalogue.eras and not selected and not reached:
            raise FuzzError(
                f"{target.describe()} answered neither server/discover nor initialize: "
                + "; ".join(notes)
            )
        machine = _lazy.machine_for(checks, opener.transport)
        if catalogue.eras and machine is not None:
            await _run_machine(runtime, machine, max_examples, max_steps, seed, ticker, stop)
        await runtime.close_all()
        scan_findings: list[ScanFinding] = []
        # The scans of the classes --checks selected (each runs only when asked for).
        scans = attrs.evolve(
            run,
            identities=run.identities if "identity" in checks else (),
            crosstalk_clients=run.crosstalk_clients if "crosstalk" in checks else 0,
            leak_requests=run.leak_requests if "leaks" in checks else 0,
        )
        asked = scans.identities or scans.crosstalk_clients > 0 or scans.leak_requests > 0
        if asked and catalogue.eras and runtime.stopped != "stopped":  # (not after a Ctrl-C)
            scan_findings, scan_notes = await _lazy.run_scans(target, scans, catalogue)
            notes.extend(scan_notes)
        if "tools" in checks and run.other_servers and runtime.stopped != "stopped":
            others = {k: v for k, v in run.other_servers.items() if k != run.server_name}
            scanned += await _across_servers(
                {run.server_name: listed}, others, timing, validator, notes
            )
        ticker.draw(final=True)
        failures = await _finish(
            runtime.store, opener, verify=run.verify, budget=run.minimize_budget
        )
        warnings = await _finish(runtime.warnings, opener, verify=False, budget=0)
        # One failure per invariant, as everywhere in a report: a scan's finding of one the
        # examples already failed (with a shrunk, replayable reproduction) adds nothing.
        reproduced = {failure.invariant for failure in (*failures, *warnings)}
        for found in scan_findings:
            if found.invariant in reproduced:
                continue
            failure = _scan_failure(found, scans)
            (failures if failure.level == "MUST" or run.strict else warnings).append(failure)
    for probed in scanned:
        (failures if probed.level == "MUST" or run.strict else warnings).append(probed)
    notes.extend(runtime.problems)
    report = FuzzReport(
        target=target.describe(),
        transport=opener.transport,
        seed=seed,
        eras=tuple(sorted(catalogue.eras)),
        examples=ticker.examples,
        steps=ticker.steps,
        rules=dict(ticker.rules),
        duration=time.monotonic() - started,
        stopped=runtime.stopped,
        failures=tuple(failures),
        warnings=tuple(warnings),
        notes=tuple(notes),
        checks=tuple(c for c in CHECK_CLASSES if c in checks),
        budget={
            "maxExamples": max_examples,
            "maxSteps": max_steps,
            "timeBudgetSeconds": time_budget,
            "shrinkBudgetSeconds": run.shrink_budget,
            "minimizeBudgetSeconds": run.minimize_budget,
            "deadlineSeconds": deadline,
            "cancelWaitSeconds": run.cancel_wait,
            "startupTimeoutSeconds": run.startup_timeout,
            "maxMessageSize": max_message_size,
            "skipTools": list(run.skip_tools),
            "callRiskyTools": run.call_risky_tools,
            "schemas": schemas,
            "maxBody": run.max_body,
        },
    )
    if run.reproduction_dir is not None:
        report = await write_reproductions(report, Path(run.reproduction_dir))
    return report


def _require(module: str, what: str) -> None:
    try:
        importlib.import_module(module)
    except ImportError:
        raise FuzzError(
            f"{what} needs the {module!r} package: pip install 'trio-mcp[fuzz]'"
        ) from None


async def _scan_http(
    target: HttpTarget, catalogue: Catalogue, run: FuzzSettings, notes: list[str]
) -> tuple[list[FuzzFailure], bool]:
    """The ``http`` class's fixed probes (:mod:`._scan_http`), as failures whose
    reproduction runs their probe again, and whether they reached the server."""
    findings, scan_notes, reached = await _lazy.scan_http(
        target,
        eras=tuple(sorted(catalogue.eras)),
        deadline=run.deadline,
        max_body=run.max_body,
        memory_bound=run.body_memory_bound,
    )
    notes.extend(scan_notes)
    failures = [
        FuzzFailure.from_invariant(
            found.invariant,
            detail=found.detail,
            era=found.era,
            steps=(),
            rerun=probe_rerun(found.probe, run),
        )
        for found in findings
    ]
    return failures, reached


def _tool_names(catalogue: Catalogue) -> list[str]:
    """The names of the tools the server lists (in its modern era, else its legacy one)."""
    for era in ("modern", "legacy"):
        if era in catalogue.eras:
            return [str(tool.get("name")) for tool in catalogue.eras[era].tools]
    return []


async def _across_servers(
    listed: dict[str, list[str]],
    others: Mapping[str, Target],
    timing: Timing,
    validator: Validator,
    notes: list[str],
) -> list[FuzzFailure]:
    """The ``tools`` class across a host's servers (:mod:`._tool_namespace`): the other
    servers' tools are listed, and every problem with the names together is one failure
    (its ``received`` lists them all, and each server's names)."""
    more, said = await list_tool_names(others, timing=timing, validator=validator)
    notes.extend(said)
    listings = {**listed, **more}
    problems = namespace_collisions(listings)
    if not problems:
        return []
    extra = f" (and {len(problems) - 1} more: see the report)" if len(problems) > 1 else ""
    received: tuple[dict[str, Any], ...] = (
        *({"problem": problem} for problem in problems),
        *({"server": name, "tools": names} for name, names in listings.items()),
    )
    return [
        FuzzFailure.from_invariant(
            INVARIANTS["tool-names-distinct-across-servers"],
            detail=problems[0] + extra,
            era="modern" if "modern" in listed else "legacy",
            steps=(),
            received=received,
        )
    ]


def _callable_tools(
    catalogue: Catalogue, skip: Sequence[str], risky: bool, notes: list[str]
) -> Catalogue:
    """The catalogue without the tools the fuzzer must not call."""
    skipped: dict[str, str] = {}
    eras = {}
    for era, entry in catalogue.eras.items():
        kept = []
        for tool in entry.tools:
            name = str(tool["name"])
            annotations = tool.get("annotations")
            annotations = annotations if isinstance(annotations, dict) else {}
            if any(fnmatch.fnmatchcase(name, pattern) for pattern in skip):
                skipped[name] = "skipped on request"
            elif not risky and annotations.get("openWorldHint") is True:
                skipped[name] = "openWorldHint: true"
            elif not risky and annotations.get("destructiveHint") is True:
                skipped[name] = "destructiveHint: true"
            else:
                kept.append(tool)
        eras[era] = attrs.evolve(entry, tools=tuple(kept))
    for name, why in sorted(skipped.items()):
        notes.append(f"not calling tool {name!r} ({why})")
    return attrs.evolve(catalogue, eras=eras)


async def _run_machine(
    runtime: Runtime,
    machine_class: type[Any],
    max_examples: int,
    max_steps: int,
    seed: int,
    ticker: Progress,
    stop: trio.Event | None,
) -> None:
    machine = type("FuzzedServer", (machine_class,), {"runtime": runtime})
    test = _lazy.seed(seed)(
        _lazy.get_state_machine_test(machine, settings=_settings(max_examples, max_steps))
    )
    done = trio.Event()

    async def in_thread() -> None:
        try:
            await trio.to_thread.run_sync(runtime.run_test, test)
        finally:
            done.set()

    async def stop_when_asked(stop: trio.Event) -> None:
        await stop.wait()
        runtime.stop()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(in_thread)
        if stop is not None:
            nursery.start_soon(stop_when_asked, stop)
        while not done.is_set():
            ticker.draw()
            with trio.move_on_after(ticker.interval):
                await done.wait()
        nursery.cancel_scope.cancel()


async def _finish(
    store: Store, opener: Opener, *, verify: bool, budget: float
) -> list[FuzzFailure]:
    """Each invariant's failure: the shortest candidate that fails again on a fresh
    connection, made shorter still (:func:`~._minimize.minimize`), within ``budget``
    seconds in all. The send that broke the invariant is replayed alone first
    (:func:`~._minimize.culprit_alone`): the usual shortest reproduction, and one that
    does not depend on the steps before it behaving the same way twice."""
    failures = []
    deadline = trio.current_time() + budget
    for name, candidates in store.candidates.items():

        async def fails(steps: Sequence[Step], era: str, name: str = name) -> bool:
            findings, _ = await replay_steps(opener, era, steps)
            return any(f.invariant.name == name for f in findings)

        chosen = candidates[0]
        steps: Sequence[Step] = chosen.steps
        reproduced: bool | None = None
        if verify:
            for candidate in candidates:
                if trio.current_time() >= deadline:
                    break
                alone = await culprit_alone(
                    candidate.steps,
                    partial(fails, era=candidate.era),
                    culprit=candidate.culprit,
                    deadline=deadline,
                )
                if alone is not None:
                    chosen, steps, reproduced = candidate, alone, True
                    break
                reproduced = False
                with trio.move_on_at(deadline):
                    reproduced = await fails(candidate.steps, candidate.era)
                if reproduced:
                    chosen = candidate
                    steps = await minimize(
                        candidate.steps,
                        partial(fails, era=candidate.era),
                        culprit=None,  # alone, it was just tried
                        deadline=deadline,
                    )
                    break
        failures.append(
            FuzzFailure.from_invariant(
                INVARIANTS[name],
                detail=chosen.finding.detail,
                era=chosen.era,
                steps=tuple(steps),
                received=chosen.received,
                reproduced=reproduced,
                stderr_tail=chosen.stderr_tail,
            )
        )
    failures.sort(key=lambda f: (f.level != "MUST", f.invariant))
    return failures


def _scan_failure(found: ScanFinding, run: FuzzSettings) -> FuzzFailure:
    """A security scan's finding as a failure: a scan crosses identities and connections,
    which steps cannot say, so its reproduction runs the scan again (its transcript is
    kept for people)."""
    return FuzzFailure.from_invariant(
        INVARIANTS[found.invariant],
        detail=found.detail,
        era=found.era,
        steps=(),
        received=found.transcript,
        rerun=scan_rerun(found.scan, run),
    )


async def write_reproductions(report: FuzzReport, directory: Path) -> FuzzReport:
    """Write each failure's reproduction to ``directory/<invariant>.jsonl`` (creating the
    directory); returns the report with the paths filled in."""
    await trio.Path(directory).mkdir(parents=True, exist_ok=True)
    timing = {
        "deadline": report.budget.get("deadlineSeconds", 5.0),
        "cancel_wait": report.budget.get("cancelWaitSeconds", 0.5),
        "startup": report.budget.get("startupTimeoutSeconds", 10.0),
        "shutdown_grace": 1.0,
    }
    written = []
    for failure in report.failures:
        if not failure.steps and failure.rerun is None:  # (nothing to replay)
            written.append(failure)
            continue
        path = directory / f"{failure.invariant}.jsonl"
        await trio.Path(path).write_bytes(
            failure.reproduction(report.transport, report.target, timing)
        )
        written.append(attrs.evolve(failure, path=str(path)))
    return attrs.evolve(report, failures=tuple(written))
