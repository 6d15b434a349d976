"""Replaying a reproduction file against a server, and judging it again."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import attrs
import trio

from .._util import open_nursery_unwrapped
from ._checker import Finding
from ._connection import Connection, Timing
from ._identities import Identity
from ._opener import Opener
from ._report import received_json
from ._scan_replay import replay_rerun
from ._steps import Settle, Step, load_steps
from ._target import Target
from ._validate import Validator, spec_dir_from_environment

__all__ = ["ReplayResult", "replay_reproduction", "replay_steps"]


@attrs.frozen(kw_only=True)
class ReplayResult:
    """What a replay saw.

    Attributes:
        header: the reproduction's header (what failed when it was recorded).
        findings: every invariant that failed in the replay, in order.
        received: what the server sent, as JSON, in order (a probe's or scan's: its
            new transcript).
        reproduced: whether the recorded invariant failed again.
    """

    header: dict[str, Any]
    findings: tuple[Finding, ...]
    received: tuple[dict[str, Any], ...]
    reproduced: bool

    @property
    def invariants(self) -> list[str]:
        return [finding.invariant.name for finding in self.findings]


async def replay_steps(
    opener: Opener, era: str, steps: Sequence[Step]
) -> tuple[list[Finding], Connection]:
    """Run ``steps`` on a fresh connection in ``era`` and return every finding.

    Blocks for as long as the steps take (each wait bounded by the deadline),
    then closes the connection (on stdio: the shutdown ladder).
    """
    connection = await opener.open(era)
    findings: list[Finding] = []
    try:
        for step in steps:
            await connection.run(step)
            findings.extend(connection.findings())
        if not steps or not isinstance(steps[-1], Settle):
            await connection.run(Settle())
            findings.extend(connection.findings())
    finally:
        await connection.aclose()
        findings.extend(connection.findings())
    return findings, connection


async def replay_reproduction(
    reproduction: bytes | str | os.PathLike[str],
    target: Target,
    *,
    deadline: float | None = None,
    spec_dir: str | os.PathLike[str] | None = None,
    max_message_size: int = 1 << 20,
    identities: Sequence[Identity] = (),
) -> ReplayResult:
    """Replay a reproduction (the file's bytes, or its path) against ``target``.

    The deadline and cancellation wait recorded in the file are used unless
    ``deadline`` is given. Blocks until the replay is over and the server
    (on stdio) has been shut down.

    The reproduction of a fixed HTTP probe's or a security scan's finding has no steps:
    the probe or scan it names runs again (:mod:`._scan_replay`), as ``identities``
    when it crosses identities (given again: their headers are never recorded).

    Raises:
        ValueError: not a reproduction file; or a scan's that needs identities not
            given (named), or a server that was not reached.
    """
    data = (
        reproduction
        if isinstance(reproduction, bytes)
        else await trio.Path(reproduction).read_bytes()
    )
    header, steps = load_steps(data)
    timing = Timing(
        deadline=deadline if deadline is not None else float(header.get("deadline", 5.0)),
        cancel_wait=float(header.get("cancel_wait", 0.5)),
        shutdown_grace=float(header.get("shutdown_grace", 1.0)),
        startup=float(header.get("startup", 10.0)),
    )
    validator = Validator(spec_dir if spec_dir is not None else spec_dir_from_environment())
    wanted = (header.get("violation") or {}).get("invariant")
    if "rerun" in header:
        findings, transcript = await replay_rerun(
            header,
            target,
            timing=timing,
            validator=validator,
            max_message_size=max_message_size,
            identities=identities,
        )
        return ReplayResult(
            header=header,
            findings=tuple(findings),
            received=transcript,
            reproduced=wanted is not None and any(f.invariant.name == wanted for f in findings),
        )
    async with open_nursery_unwrapped() as nursery:
        opener = Opener(target, nursery, validator, timing, max_message_size)
        findings, connection = await replay_steps(opener, str(header.get("era", "legacy")), steps)
    return ReplayResult(
        header=header,
        findings=tuple(findings),
        received=tuple(received_json(item) for _, item in connection.received),
        reproduced=wanted is not None and any(f.invariant.name == wanted for f in findings),
    )
