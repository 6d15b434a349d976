"""What a fuzzing run found: :class:`FuzzReport` (with its JSON summary), each
:class:`FuzzFailure` with its minimal reproduction, and the progress line shown while
it runs."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any, TextIO

import attrs
import orjson

from .._jsonrpc import Batch, InvalidMessage, Message, serialize
from ._invariants import CHECK_CLASSES, CheckClass, Invariant, Level
from ._steps import Send, Step, dump_steps, step_to_json

__all__ = ["FuzzFailure", "FuzzReport", "Progress"]


@attrs.frozen(kw_only=True)
class FuzzFailure:
    """One invariant that failed, with the shortest message sequence seen to fail it.

    Attributes:
        invariant: the name of the requirement (see ``trio-mcp fuzz --list-invariants``).
        level: ``"MUST"`` or ``"SHOULD"``.
        check_class: the class of check that found it (``"protocol"``, ``"http"``,
            ``"tools"``...; what ``--checks`` selects).
        cwe: the number of the CWE weakness it shows, where one fits.
        requirement: what the spec requires.
        source: where the spec says it.
        detail: what the server did.
        era: ``"modern"`` or ``"legacy"``: the era the reproduction speaks.
        steps: the reproduction: the steps to replay.
        received: what the server sent during the reproduction (for people).
        reproduced: whether replaying ``steps`` against a fresh server failed the same
            way (``None``: not checked).
        path: where the reproduction file was written, if it was.
        stderr_tail: the end of the server's stderr, when it is a process.
        rerun: for a fixed HTTP probe's or a security scan's finding (which has no
            ``steps``: it crosses connections or identities), what a replay runs again
            to see whether it still holds (see :mod:`._scan_replay`); its transcript is
            ``received``.
    """

    invariant: str
    level: Level
    requirement: str
    source: str
    detail: str
    era: str
    steps: tuple[Step, ...]
    check_class: CheckClass = "protocol"
    cwe: int | None = None
    received: tuple[dict[str, Any], ...] = ()
    reproduced: bool | None = None
    path: str | None = None
    stderr_tail: str | None = None
    rerun: dict[str, Any] | None = None

    @classmethod
    def from_invariant(
        cls,
        invariant: Invariant,
        *,
        detail: str,
        era: str,
        steps: tuple[Step, ...],
        received: tuple[dict[str, Any], ...] = (),
        reproduced: bool | None = None,
        path: str | None = None,
        stderr_tail: str | None = None,
        rerun: dict[str, Any] | None = None,
    ) -> FuzzFailure:
        """The failure of ``invariant``: its name, level, requirement, source, check
        class and CWE taken from it, the rest as given."""
        return cls(
            invariant=invariant.name,
            level=invariant.level,
            requirement=invariant.requirement,
            source=invariant.source,
            check_class=invariant.check_class,
            cwe=invariant.cwe,
            detail=detail,
            era=era,
            steps=steps,
            received=received,
            reproduced=reproduced,
            path=path,
            stderr_tail=stderr_tail,
            rerun=rerun,
        )

    @property
    def severity(self) -> str:
        """``"error"`` for a ``MUST``, ``"warning"`` for a ``SHOULD``."""
        return "error" if self.level == "MUST" else "warning"

    @property
    def labels(self) -> str:
        """The level, class and CWE as the summary shows them: ``MUST, http, CWE-346``."""
        cwe = f", CWE-{self.cwe}" if self.cwe is not None else ""
        return f"{self.level}, {self.check_class}{cwe}"

    @property
    def messages_sent(self) -> int:
        return sum(1 for step in self.steps if isinstance(step, Send))

    def header(self, transport: str, target: str, timing: dict[str, float]) -> dict[str, Any]:
        return {
            "transport": transport,
            "target": target,
            "era": self.era,
            "violation": {
                "invariant": self.invariant,
                "level": self.level,
                "class": self.check_class,
                "cwe": self.cwe,
                "requirement": self.requirement,
                "detail": self.detail,
            },
            **timing,
        }

    def reproduction(self, transport: str, target: str, timing: dict[str, float]) -> bytes:
        """The reproduction file (JSON lines; see :mod:`trio_mcp._fuzz._steps`). A
        probe's or a scan's has no steps: its header says what to run again
        (``"rerun"``) and its transcript follows as ``note`` lines, for people."""
        header = self.header(transport, target, timing)
        if self.rerun is None:
            return dump_steps(header, self.steps)
        notes = b"".join(orjson.dumps({"note": entry}) + b"\n" for entry in self.received)
        return dump_steps({**header, "rerun": self.rerun}, ()) + notes

    def to_json(self) -> dict[str, Any]:
        return {
            "invariant": self.invariant,
            "level": self.level,
            "severity": self.severity,
            "class": self.check_class,
            "cwe": self.cwe,
            "requirement": self.requirement,
            "source": self.source,
            "detail": self.detail,
            "era": self.era,
            "messagesSent": self.messages_sent,
            "reproduced": self.reproduced,
            "reproduction": self.path,
            "steps": [step_to_json(step) for step in self.steps],
            "received": list(self.received),
            "stderrTail": self.stderr_tail,
            "rerun": self.rerun,
        }


@attrs.frozen(kw_only=True)
class FuzzReport:
    """The outcome of :func:`~trio_mcp.fuzz.fuzz`.

    Attributes:
        target: the command or URL fuzzed.
        transport: ``"stdio"`` or ``"http"``.
        seed: the Hypothesis seed (pass it again to repeat the run).
        eras: the eras fuzzed (those the server speaks, or the one asked for).
        examples: Hypothesis examples run (including shrinking).
        steps: steps executed in all.
        rules: how often each rule ran.
        duration: seconds.
        stopped: why the run ended: ``"done"``, ``"time budget"`` or ``"stopped"``
            (asked to, with ``stop``: Ctrl-C on the command line).
        failures: failed requirements (``MUST``; and ``SHOULD`` with ``strict``).
        warnings: ``SHOULD`` requirements not met (when not ``strict``).
        notes: what limited the checks (no schemas, an era the server lacks...).
        checks: the check classes that ran (``--checks``).
    """

    target: str
    transport: str
    seed: int
    eras: tuple[str, ...]
    examples: int
    steps: int
    rules: dict[str, int]
    duration: float
    stopped: str
    failures: tuple[FuzzFailure, ...]
    warnings: tuple[FuzzFailure, ...] = ()
    notes: tuple[str, ...] = ()
    budget: dict[str, Any] = attrs.field(factory=dict)
    checks: tuple[CheckClass, ...] = CHECK_CLASSES

    @property
    def ok(self) -> bool:
        """Whether no invariant failed."""
        return not self.failures

    def to_json(self) -> dict[str, Any]:
        """The summary written by ``--report``."""
        return {
            "ok": self.ok,
            "target": self.target,
            "transport": self.transport,
            "seed": self.seed,
            "eras": list(self.eras),
            "examples": self.examples,
            "steps": self.steps,
            "rules": dict(sorted(self.rules.items())),
            "durationSeconds": round(self.duration, 3),
            "stopped": self.stopped,
            "checks": list(self.checks),
            "budget": self.budget,
            "failures": [f.to_json() for f in self.failures],
            "warnings": [w.to_json() for w in self.warnings],
            "notes": list(self.notes),
        }

    def summary(self) -> str:
        """A few lines for people: what ran, and every failure with its reproduction."""
        lines = [
            f"fuzzed {self.target} ({self.transport}, {'/'.join(self.eras) or 'no era'}): "
            f"{self.examples} examples, {self.steps} steps, {len(self.rules)} rules, "
            f"{self.duration:.1f} s, seed {self.seed}" + self._why_stopped()
        ]
        for note in self.notes:
            lines.append(f"note: {note}")
        for kind, items in (("FAILED", self.failures), ("warning", self.warnings)):
            for item in items:
                lines.append("")
                lines.append(f"{kind} {item.invariant} [{item.labels}, {item.era}]: {item.detail}")
                lines.append(f"  requirement: {item.requirement} ({item.source})")
                if not item.steps:
                    # A fixed probe's or a security scan's finding: no replayable steps
                    # (it crosses connections or identities); what was exchanged instead,
                    # and the file that runs the probe or scan again.
                    lines.append(f"  transcript: {len(item.received)} exchanges")
                    for exchange in item.received[:_SHOWN_EXCHANGES]:
                        lines.append("    " + _one_line_json(exchange))
                    if item.path and item.rerun is not None:
                        what = item.rerun.get("probe") or item.rerun.get("scan")
                        lines.append(f"  reproduction: {item.path} (runs {what} again)")
                    continue
                repro = f"  reproduction: {item.messages_sent} messages"
                if item.path:
                    repro += f" in {item.path}"
                if item.reproduced is not None:
                    repro += (
                        " (replayed: "
                        + ("reproduces" if item.reproduced else "did not reproduce")
                        + ")"
                    )
                lines.append(repro)
                if kind == "FAILED" or len(item.steps) < 12:
                    for step in item.steps:
                        lines.append("    " + _one_line(step))
        if self.ok:
            lines.append("")
            lines.append(
                "no invariant failed"
                + (f" ({len(self.warnings)} warnings)" if self.warnings else "")
            )
        return "\n".join(lines)

    def _why_stopped(self) -> str:
        if self.stopped == "done":
            return ""
        wanted = self.budget.get("maxExamples")
        reached = f"reached {self.examples}" + (f" of {wanted}" if wanted else "") + " examples"
        if self.stopped == "time budget":
            return f" (time budget spent: {reached})"
        return f" (stopped early: {reached})"


def _one_line(step: Step, limit: int = 160) -> str:
    text = orjson.dumps(step_to_json(step)).decode()
    if isinstance(step, Send):
        text = "→ " + text
    return text if len(text) <= limit else text[: limit - 1] + "…"


def received_json(item: Message | Batch | InvalidMessage) -> dict[str, Any]:
    """A received message as JSON for reports (invalid ones as their reason)."""
    if isinstance(item, Batch):
        return {"batch": [received_json(part) for part in item.items]}
    if isinstance(item, InvalidMessage):
        return {"invalid": item.reason}
    return serialize(item)


class Progress:
    """Counters the run updates, and a status line drawn from them.

    Written to by the fuzzing thread, read by the Trio task that draws it
    (plain integer updates: a torn read only shows a stale number).
    """

    def __init__(self, stream: TextIO | None = None, *, interval: float | None = None) -> None:
        self.stream = stream
        tty = stream is not None and stream.isatty()
        #: Seconds between two drawings: a line redrawn in place on a terminal, a new line
        #: every so often otherwise (a CI log).
        self.interval = interval if interval is not None else (0.2 if tty else 10.0)
        self.examples = 0
        self.steps = 0
        self.rules: Counter[str] = Counter()
        self.failed: set[str] = set()
        self.warned: set[str] = set()
        self.started = time.monotonic()
        self._last = 0.0

    def line(self) -> str:
        elapsed = time.monotonic() - self.started
        text = (
            f"fuzz: {self.examples} examples, {self.steps} steps, {len(self.rules)} rules covered, "
            f"{len(self.failed)} failed, {len(self.warned)} warnings, {elapsed:.0f} s"
        )
        if self.failed:
            text += " [" + ", ".join(sorted(self.failed)) + "]"
        return text

    def draw(self, *, final: bool = False) -> None:
        stream = self.stream
        if stream is None:
            return
        now = time.monotonic()
        if not final and now - self._last < self.interval:
            return
        self._last = now
        if stream.isatty():
            stream.write("\r\x1b[K" + self.line() + ("\n" if final else ""))
        else:
            stream.write(self.line() + "\n")
        stream.flush()


#: Exchanges of a transcript shown in the summary (the JSON report has them all).
_SHOWN_EXCHANGES = 8


def _one_line_json(value: Any) -> str:
    text = orjson.dumps(value, default=str).decode()
    return text if len(text) <= 200 else text[:197] + "..."
