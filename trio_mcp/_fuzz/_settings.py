"""How a fuzz run goes: :class:`FuzzSettings`, one object to keep, share and adjust, and
:class:`FuzzOptions`, the same settings as the keyword arguments of
:func:`~trio_mcp.fuzz.fuzz` (typed, so that a misspelt one is an error your type
checker reports)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Final, TypedDict

import attrs

from ._identities import Identity
from ._invariants import CHECK_CLASSES

__all__ = [
    "DEFAULT_CROSSTALK_CLIENTS",
    "DEFAULT_LEAK_MEMORY_BOUND",
    "DEFAULT_LEAK_REQUESTS",
    "DEFAULT_MAX_BODY",
    "DEFAULT_TIME_BUDGET",
    "FuzzOptions",
    "FuzzSettings",
]

#: Seconds a run may take by default (probes, examples and shrinking): long enough for a
#: hundred examples against most servers, short enough for a CI job. A run that reaches it
#: ends normally, saying how many examples it reached.
DEFAULT_TIME_BUDGET: Final = 120.0
#: The largest request body the HTTP checks send to probe a server's body limit (16 MiB):
#: a server that reads, parses and answers one this big sets no limit of its own.
DEFAULT_MAX_BODY: Final = 16 * 1024 * 1024
#: Clients the cross-talk scan of ``trio-mcp fuzz`` runs at once.
DEFAULT_CROSSTALK_CLIENTS: Final = 20
#: Requests the leaks scan of ``trio-mcp fuzz`` has in flight at once.
DEFAULT_LEAK_REQUESTS: Final = 100
#: Bytes a server's memory may grow by over the leaks scan (after a warm-up burst).
DEFAULT_LEAK_MEMORY_BOUND: Final = 32 * 1024 * 1024


@attrs.frozen(kw_only=True)
class FuzzSettings:
    """The settings of a fuzz run, for :func:`~trio_mcp.fuzz.fuzz`
    (``fuzz(target, settings)``); its keyword arguments override them one by one
    (``fuzz(target, settings, seed=1)``). Change one with :func:`attrs.evolve`.

    Attributes:
        protocol_version: fuzz only this version (and its era); by default every
            era the server speaks.
        max_examples: Hypothesis examples to generate (shrinking runs more).
        max_steps: rules per example.
        seed: the Hypothesis seed; a run with the same seed sends the same things
            (chosen at random, and reported, when not given).
        deadline: seconds within which every request must be answered.
        cancel_wait: seconds to watch for a late answer to a cancelled request.
        startup_timeout: stdio: extra seconds for the first answers of a fresh process
            (an interpreter starting, ``npx`` fetching a package).
        time_budget: seconds for the whole run (probes, examples, shrinking); default
            :data:`DEFAULT_TIME_BUDGET` (120); ``math.inf`` for no limit.
        shrink_budget: once something fails, seconds left for shrinking (and for
            finding other failures) before the run stops.
        minimize_budget: seconds for replaying the failures at the end, to check
            that they reproduce and to cut them down message by message.
        max_message_size: the largest message sent, in bytes.
        spec_dir: a directory of ``schema-<version>.json`` files to validate
            results against (default: ``$TRIO_MCP_SPEC_DIR``; without it our
            own models check results).
        strict: treat ``SHOULD`` requirements as failures too.
        skip_tools: names (or ``fnmatch`` patterns) of tools never to call.
        call_risky_tools: also call the tools that declare ``openWorldHint: true``
            (they may reach out beyond the server: fetch URLs, send mail) or
            ``destructiveHint: true``; by default the fuzzer lists them but never
            calls them.
        verify: replay each reproduction to check that it reproduces (and
            minimize it); without, reproductions are as Hypothesis left them.
        reproduction_dir: write each failure's reproduction there as
            ``<invariant>.jsonl``.
        progress_interval: seconds between two progress lines (default: 0.2 on a
            terminal, where the line is redrawn in place; 10 otherwise).
        checks: the check classes to run (``"protocol"``, ``"http"``, ``"tools"``...;
            see :data:`~trio_mcp.fuzz.CHECK_CLASSES`): only their rules run, only their
            findings are reported. Default: every class.
        max_body: the largest request body (bytes) the ``http`` checks send when they
            probe the server's body limit; default :data:`DEFAULT_MAX_BODY` (16 MiB).
        identities: (HTTP) the principals to act as; with two or more, the identity
            scan checks that none reaches another's sessions, streams or tasks. The
            first one's headers go with every request of the examples too.
        crosstalk_clients: (HTTP) clients the cross-talk scan runs at once (0: no
            scan; ``trio-mcp fuzz`` runs it with :data:`DEFAULT_CROSSTALK_CLIENTS`).
        leak_requests: requests the leaks scan has in flight at once, a third of them
            cancelled (0: no scan; ``trio-mcp fuzz`` runs it with
            :data:`DEFAULT_LEAK_REQUESTS`).
        leak_memory_bound: bytes the server's memory (RSS) may grow by over the leaks
            scan's bursts before it is a finding (a local server: stdio, or an HTTP one
            whose process is found by its port).
    """

    protocol_version: str | None = None
    max_examples: int = 100
    max_steps: int = 20
    seed: int | None = None
    deadline: float = 5.0
    cancel_wait: float = 0.5
    startup_timeout: float = 10.0
    time_budget: float = DEFAULT_TIME_BUDGET
    shrink_budget: float = 60.0
    minimize_budget: float = 60.0
    max_message_size: int = 1 << 20
    spec_dir: str | os.PathLike[str] | None = None
    strict: bool = False
    skip_tools: Sequence[str] = ()
    call_risky_tools: bool = False
    verify: bool = True
    reproduction_dir: str | os.PathLike[str] | None = None
    progress_interval: float | None = None
    checks: Sequence[str] = CHECK_CLASSES
    max_body: int = DEFAULT_MAX_BODY
    identities: Sequence[Identity] = ()
    crosstalk_clients: int = 0
    leak_requests: int = 0
    leak_memory_bound: int = DEFAULT_LEAK_MEMORY_BOUND


class FuzzOptions(TypedDict, total=False):
    """:class:`FuzzSettings` as keyword arguments of :func:`~trio_mcp.fuzz.fuzz` and
    of the ``mcp_fuzz`` pytest fixture (see :class:`FuzzSettings` for what each means
    and its default)."""

    protocol_version: str | None
    max_examples: int
    max_steps: int
    seed: int | None
    deadline: float
    cancel_wait: float
    startup_timeout: float
    time_budget: float
    shrink_budget: float
    minimize_budget: float
    max_message_size: int
    spec_dir: str | os.PathLike[str] | None
    strict: bool
    skip_tools: Sequence[str]
    call_risky_tools: bool
    verify: bool
    reproduction_dir: str | os.PathLike[str] | None
    progress_interval: float | None
    checks: Sequence[str]
    max_body: int
    identities: Sequence[Identity]
    crosstalk_clients: int
    leak_requests: int
    leak_memory_bound: int
