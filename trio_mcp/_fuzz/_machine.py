"""The Hypothesis state machine that drives a server.

Each example opens a fresh connection (a new process, or a new HTTP session)
in one era, then runs rules: the lifecycle (``initialize``/``initialized`` or
``server/discover`` and per-request envelopes, with good, bad and garbage
versions), every list/read/get/call the server advertises (arguments drawn
from each tool's own ``inputSchema``, valid and not), pagination cursors,
cancellation at random moments, progress tokens, bursts of requests in
flight, duplicate and exotic ids, stray responses, malformed input and
unknown methods; tasks (when the server offers the extension): created,
polled, cancelled and answered; over HTTP also headers, sessions and streams. After every
step the checker's findings are collected; a failed ``MUST`` raises, and
Hypothesis shrinks the example.

The rules live in one module per theme, as mixins of
:class:`~._machine_base.MachineBase` (which has the plumbing); this class
puts them together; :func:`machine_for` keeps the themes of the check classes a run
selects (``--checks``).
"""

from __future__ import annotations

from collections.abc import Set

from hypothesis.stateful import precondition, rule

from ._invariants import CheckClass
from ._machine_base import MachineBase, counted
from ._rules_features import FeatureRules
from ._rules_http import HttpRules
from ._rules_jsonrpc import JsonRpcRules
from ._rules_lifecycle import LifecycleRules
from ._rules_tasks import TaskRules

__all__ = ["ServerMachine", "machine_for"]


class ServerMachine(LifecycleRules, FeatureRules, TaskRules, JsonRpcRules, HttpRules):
    """Every rule, for one connection per example. A subclass binds ``runtime`` per run."""


#: The rules of each check class the state machine serves (the other classes' checks are
#: scans of their own, run before it).
_PROTOCOL_RULES: tuple[type[MachineBase], ...] = (
    LifecycleRules,
    FeatureRules,
    TaskRules,
    JsonRpcRules,
)


class _HttpAlone(HttpRules):
    """The HTTP rules without the protocol's: a legacy example that did not start with
    the handshake does it here (in the whole machine the lifecycle rules do), so that
    some rule can always run."""

    @precondition(
        lambda self: self.link is not None and self.era == "legacy" and self.phase == "new"
    )
    @rule()
    @counted
    def http_handshake(self) -> None:
        self.handshake()


def machine_for(checks: Set[CheckClass], transport: str) -> type[MachineBase] | None:
    """The state machine with the rules of ``checks`` alone (:class:`ServerMachine` for
    ``protocol`` and ``http`` together), or ``None`` when none of its rules is selected
    (or can run: the ``http`` rules over stdio)."""
    if "protocol" in checks and "http" in checks:
        return ServerMachine
    if "protocol" in checks:
        return type("ProtocolMachine", _PROTOCOL_RULES, {})
    if "http" in checks and transport == "http":
        return _HttpAlone
    return None
