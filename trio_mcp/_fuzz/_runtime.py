"""The bridge between the fuzzing thread and Trio: :class:`Runtime` (what the state machine
reaches the target through, and where it reports) and :class:`Link` (one connection).

Every call from the thread into Trio goes through :meth:`Runtime.call` (which also
enforces the time budget, cancelling a call still running when it ends) or
:meth:`Runtime.call_sync`. Findings are kept as they happen, per invariant the few
shortest failing transcripts (:class:`Store`), whatever Hypothesis ends up raising.

An example's end waits for every answer still owed (calls left in flight, late answers
to cancelled requests). While nothing has failed, that wait happens in a Trio task of
its own (at most :data:`MAX_SETTLING` at once) as the next example starts, so that a
slow tool does not hold the run up; what it reveals is recorded all the same. Once
something failed, Hypothesis is shrinking and must see each example's whole outcome:
examples then end in the foreground.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import attrs
import trio

from . import _lazy
from ._checker import Finding
from ._connection import Connection, StdioConnection
from ._invariants import CHECK_CLASSES, CheckClass, Violation, violation
from ._opener import Opener
from ._probe import Catalogue
from ._report import Progress, received_json
from ._steps import Settle, Step

__all__ = ["BudgetExhausted", "Link", "Runtime", "Store"]

T = TypeVar("T")
_CANDIDATES = 3
#: The most ended examples whose owed answers are waited for in the background at once
#: (each holds its connection: a process, or an HTTP session).
MAX_SETTLING = 8


class BudgetExhausted(BaseException):
    """The time budget ran out (raised in the fuzzing thread; Hypothesis lets it through)."""


@attrs.define
class Candidate:
    finding: Finding
    era: str
    steps: tuple[Step, ...]
    received: tuple[dict[str, Any], ...]
    stderr_tail: str | None
    #: The index of the step that sent the message the finding points at.
    culprit: int | None = None

    @property
    def size(self) -> tuple[int, int]:
        return (sum(1 for s in self.steps if not isinstance(s, Settle)), len(str(self.steps)))


class Store:
    """The smallest failing transcripts seen, per invariant."""

    def __init__(self) -> None:
        self.candidates: dict[str, list[Candidate]] = {}

    def offer(self, candidate: Candidate) -> None:
        found = self.candidates.setdefault(candidate.finding.invariant.name, [])
        if any(c.steps == candidate.steps for c in found):
            return
        found.append(candidate)
        found.sort(key=lambda c: c.size)
        del found[_CANDIDATES:]


class Link:
    """The fuzzing thread's handle on one connection (every method blocks the thread on a
    call into Trio)."""

    def __init__(self, runtime: Runtime, connection: Connection, era: str) -> None:
        self.runtime = runtime
        self.connection = connection
        self.era = era
        #: The machine's state between examples, for a connection kept for the whole run.
        self.state: dict[str, Any] = {}

    @property
    def alive(self) -> bool:
        return self.connection.alive

    def step(self, step: Step) -> None:
        """Execute ``step``, then raise the first failed requirement it revealed."""
        self.runtime.call(self.connection.run, step)
        self.runtime.progress.steps += 1
        self.check()

    def check(self) -> None:
        findings = self.runtime.call_sync(self.connection.findings)
        if findings:
            self.runtime.record(self, findings)

    def progress_token_active(self, token: str | int) -> bool:
        """Whether a request still waiting for its answer carries ``token``: a client must
        not give two active requests one token (the server could not tell their progress
        apart), so the machine does not send it again until that request is answered."""
        return self.runtime.call_sync(self.connection.checker.progress_token_active, token)

    def answer(self, id: Any) -> Any:
        def get() -> Any:
            answer = self.connection.checker.answers.get(id)
            return answer if answer is not None and type(answer.id) is type(id) else None

        return self.runtime.call_sync(get)

    def cancelled_unanswered(self) -> bool:
        return bool(self.runtime.call_sync(self.connection.checker.cancelled_unanswered))

    def http_session_deleted(self) -> bool:
        """(HTTP) Whether the last ``DELETE`` ended the session (the server may refuse)."""

        def deleted() -> bool:
            return getattr(self.connection, "session_id", "") is None and bool(
                getattr(self.connection, "stale_sessions", ())
            )

        return self.runtime.call_sync(deleted)


class Runtime:
    """What the state machine reaches the target through, and where it reports.

    Created by :func:`~._runner.fuzz`; the machine class gets it as a class attribute.
    """

    def __init__(
        self,
        *,
        opener: Opener,
        catalogue: Catalogue,
        progress: Progress,
        strict: bool,
        per_run: bool,
        budget_end: float,
        shrink_budget: float,
        max_message_size: int,
        checks: frozenset[CheckClass] = frozenset(CHECK_CLASSES),
    ) -> None:
        self.opener = opener
        #: The check classes selected: findings of the others are not kept.
        self.checks = checks
        self.catalogue = catalogue
        self.eras = sorted(catalogue.eras)
        self.progress = progress
        self.strict = strict
        self.per_run = per_run
        self.budget_end = budget_end
        self.shrink_budget = shrink_budget
        self.max_message_size = max_message_size
        self.transport = opener.transport
        self.store = Store()
        self.warnings = Store()
        self.stopped = "done"
        #: Why the budget ran out early, when it was not time.
        self.stop_reason = "time budget"
        self.problems: list[str] = []
        #: per-run: the one connection of each era, kept for the whole run.
        self._shared: dict[str, Link] = {}
        self._open: set[Connection] = set()
        self._eof_checked = False
        self._settling = trio.Semaphore(MAX_SETTLING)
        self._settling_now = 0
        self._settled = trio.Event()
        self._call_scope: trio.CancelScope | None = None
        self._background: set[trio.CancelScope] = set()

    # -- calls into Trio (from the thread) --------------------------------------------------------

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run async ``fn`` in Trio, unless the time budget is spent; it is cancelled
        (and :exc:`BudgetExhausted` raised) if the budget runs out while it runs."""
        left = self.budget_end - time.monotonic()
        if left <= 0:
            raise self._exhausted()
        return trio.from_thread.run(self._within_budget, left, fn, *args)

    async def _within_budget(self, left: float, fn: Callable[..., Any], *args: Any) -> Any:
        with trio.move_on_after(left) as self._call_scope:
            return await fn(*args)
        raise self._exhausted()

    def _exhausted(self) -> BudgetExhausted:
        """The budget ran out: say so in the report now, where it is raised. Whether the
        exception comes back out of Hypothesis is not ours to decide: raised while it
        shrinks or replays, Hypothesis may report it as another failure, or as flaky, or
        end the run without it, and the run would then claim it was done."""
        self.stopped = self.stop_reason
        return BudgetExhausted()

    def stop(self) -> None:
        """(Trio) End the run now, keeping what it found: the call in progress is cancelled
        and the thread's next one raises :exc:`BudgetExhausted`."""
        self.stop_reason = "stopped"
        # Said here, not only when BudgetExhausted comes back out of Hypothesis: raised
        # while it shrinks, Hypothesis may take it for another bug and not re-raise it.
        self.stopped = "stopped"
        self.budget_end = -math.inf
        for scope in [self._call_scope, *self._background]:
            if scope is not None:
                scope.cancel()

    def call_sync(self, fn: Callable[..., T], *args: Any) -> T:
        return trio.from_thread.run_sync(fn, *args)

    # -- connections ------------------------------------------------------------------------------

    def open_link(self, era: str) -> Link:
        """(thread) A connection for a new example: fresh, or the run's shared one for
        ``era`` (per-run: one long-lived connection per era, so that a server speaking
        both eras is fuzzed in both)."""
        self.progress.examples += 1
        shared = self._shared.get(era)
        if self.per_run and shared is not None and shared.alive:
            return shared
        connection = self.call(self._open_connection, era)
        link = Link(self, connection, era)
        if self.per_run:
            self._shared[era] = link
        return link

    async def _open_connection(self, era: str) -> Connection:
        connection = await self.opener.open(era)
        set_tools = getattr(connection, "set_tools", None)
        if set_tools is not None:
            set_tools(self.catalogue.eras[era].tools)
        self._open.add(connection)
        return connection

    def settles_in_background(self, link: Link) -> bool:
        """(thread) Whether the answers ``link`` is still owed are to be waited for in the
        background once its example is over (:meth:`release_link`): yes while nothing
        has failed (Hypothesis is generating), unless the connection is kept for the
        next example."""
        return not self.store.candidates and not (
            self.per_run and self._shared.get(link.era) is link
        )

    def release_link(self, link: Link, *, settle: bool = False) -> None:
        """(thread) The example is over: close its connection (unless it is shared);
        with ``settle``, first wait for the answers it is still owed and judge them, in
        a task of the fuzzer's nursery. Blocks while :data:`MAX_SETTLING` examples are
        being settled already."""
        if self.per_run and self._shared.get(link.era) is link and link.alive:
            return
        if settle:
            trio.from_thread.run(self._settle_later, link)
        else:
            trio.from_thread.run(self._close_connection, link)

    async def _settle_later(self, link: Link) -> None:
        await self._settling.acquire()
        self._settling_now += 1
        self.opener.nursery.start_soon(self._settle_and_close, link)

    async def _settle_and_close(self, link: Link) -> None:
        try:
            # Not past the time budget: what is owed then is not overdue yet, and not judged.
            with trio.move_on_after(max(0.0, self.budget_end - time.monotonic())) as scope:
                self._background.add(scope)
                await link.connection.run(Settle())
            self._background.discard(scope)
            if not scope.cancelled_caught:
                findings = self.selected(link.connection.findings())
                if findings:
                    self._record_now(link, findings)
                    self._shrink_budget(findings)
            await self._close_connection(link)
        finally:
            self._settling.release()
            self._settling_now -= 1
            if not self._settling_now:
                self._settled.set()
                self._settled = trio.Event()

    async def _close_connection(self, link: Link) -> None:
        connection = link.connection
        self._open.discard(connection)
        if self._eof_checked or not isinstance(connection, StdioConnection):
            # Known to exit (or not) on end of input: close in the background.
            self.opener.nursery.start_soon(connection.aclose)
            await trio.lowlevel.checkpoint()
            return
        await connection.aclose()
        self._eof_checked = True
        if connection.exited_on_eof is False:
            connection.checker.fail(
                "exit-on-stdin-eof",
                f"the server was still running {self.opener.timing.shutdown_grace:g} s after "
                "its stdin closed, and had to be terminated",
                connection._seq,
            )
            self._record_now(link, connection.checker.take_findings())

    async def close_all(self) -> None:
        """(Trio) Wait for the examples being settled in the background (each bounded by
        the deadline), then close every connection still open (the shared one,
        abandoned ones)."""
        while self._settling_now:
            await self._settled.wait()
        for connection in list(self._open):
            self._open.discard(connection)
            await connection.aclose()

    # -- findings ---------------------------------------------------------------------------------

    def _candidate(self, link: Link, finding: Finding, *, truncate: bool) -> Candidate:
        connection = link.connection
        steps = list(connection.steps)
        if truncate and steps and not isinstance(steps[-1], Settle):
            steps.append(Settle())
        tail = connection.stderr_tail if isinstance(connection, StdioConnection) else None
        return Candidate(
            finding=finding,
            era=link.era,
            steps=tuple(steps),
            received=tuple(received_json(item) for _, item in connection.received[-60:]),
            stderr_tail=tail,
            culprit=connection.culprit(finding.seq),
        )

    def selected(self, findings: Sequence[Finding]) -> list[Finding]:
        """The findings of the selected check classes."""
        return [f for f in findings if f.invariant.check_class in self.checks]

    def _record_now(self, link: Link, findings: Sequence[Finding]) -> None:
        for finding in self.selected(findings):
            failing = finding.invariant.level == "MUST" or self.strict
            store = self.store if failing else self.warnings
            (self.progress.failed if failing else self.progress.warned).add(finding.invariant.name)
            store.offer(self._candidate(link, finding, truncate=True))

    def record(self, link: Link, findings: Sequence[Finding]) -> None:
        """(thread) Keep the findings; raise the first failing one for Hypothesis to shrink."""
        findings = self.selected(findings)
        self.call_sync(self._record_now, link, findings)
        self._shrink_budget(findings)
        for finding in findings:
            if finding.invariant.level == "MUST" or self.strict:
                raise violation(finding.invariant.name, finding.detail)

    def _shrink_budget(self, findings: Sequence[Finding]) -> None:
        """From the first failure on, shrinking gets ``shrink_budget`` seconds more."""
        if any(f.invariant.level == "MUST" or self.strict for f in findings):
            self.budget_end = min(self.budget_end, time.monotonic() + self.shrink_budget)

    # -- the thread -------------------------------------------------------------------------------

    def run_test(self, test: Callable[[], None]) -> None:
        """(thread) Run the Hypothesis test; what it found is in the stores."""
        try:
            test()
        except BudgetExhausted:
            self.stopped = self.stop_reason
        except BaseExceptionGroup as group:
            self._classify(group)
        except _lazy.HypothesisException as exc:
            self._hypothesis_problem(exc)
        except Exception as exc:  # noqa: BLE001 - sorted below; anything unexpected re-raised
            self._classify(exc)

    def _hypothesis_problem(self, exc: BaseException) -> None:
        if isinstance(exc, _lazy.Flaky | _lazy.FlakyStrategyDefinition):
            note = (
                "the server did not behave the same way when Hypothesis ran an example "
                "again (its answers depend on timing or on what came before), so shrinking "
                "stopped early there; every reproduction was still replayed on its own"
            )
        else:
            note = f"Hypothesis: {type(exc).__name__}: {str(exc)[:300]}"
        if note not in self.problems:
            self.problems.append(note)

    def _classify(self, exc: BaseException) -> None:
        """Sort what the Hypothesis run raised: violations (already recorded), the budget,
        Hypothesis's own complaints (notes); anything else is a bug here, and re-raised."""
        if isinstance(exc, _lazy.Flaky | _lazy.HypothesisException):
            self._hypothesis_problem(exc)
        if isinstance(exc, BaseExceptionGroup):
            for inner in exc.exceptions:
                self._classify(inner)
            return
        if isinstance(exc, BudgetExhausted):
            self.stopped = self.stop_reason
        elif not isinstance(exc, Violation | _lazy.Flaky | _lazy.HypothesisException):
            raise exc
