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
puts them together.
"""

from __future__ import annotations

from ._rules_features import FeatureRules
from ._rules_http import HttpRules
from ._rules_jsonrpc import JsonRpcRules
from ._rules_lifecycle import LifecycleRules
from ._rules_tasks import TaskRules

__all__ = ["ServerMachine"]


class ServerMachine(LifecycleRules, FeatureRules, TaskRules, JsonRpcRules, HttpRules):
    """Every rule, for one connection per example. A subclass binds ``runtime`` per run."""
