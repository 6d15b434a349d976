"""Replaying a fixed HTTP probe's or a security scan's finding: what to run again (the
``"rerun"`` of a reproduction's header), and running it.

A probe (:mod:`._scan_http`) or a scan (identities, cross-talk, leaks: :mod:`._scan`)
crosses connections, identities or timing, which a list of steps cannot say; so its
reproduction file records *which* probe or scan found it, with the sizes and counts it
ran with, and a replay runs that one probe or scan again against the target and says
whether the recorded invariant fails again. Identities are recorded by name only (their
headers hold tokens, which never reach a file): a replay is given them again.

:func:`replay_rerun` blocks for the one probe or scan (each exchange bounded by the
deadline); cancelling it cancels the exchange (and any process) in flight.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from .._util import open_nursery_unwrapped
from . import _lazy
from ._checker import Finding
from ._connection import Timing
from ._identities import Identity
from ._invariants import INVARIANTS
from ._opener import Opener
from ._probe import Catalogue, probe_era
from ._settings import FuzzSettings
from ._target import HttpTarget, Target
from ._validate import Validator

__all__ = ["probe_rerun", "replay_rerun", "scan_rerun"]

_SCANS = ("identities", "crosstalk", "leaks")


def probe_rerun(probe: str, run: FuzzSettings) -> dict[str, Any]:
    """What a replay of the fixed HTTP probe ``probe`` runs again, with ``run``'s sizes."""
    return {"probe": probe, "maxBody": run.max_body, "bodyMemoryBound": run.body_memory_bound}


def scan_rerun(scan: str, run: FuzzSettings) -> dict[str, Any]:
    """What a replay of the security scan ``scan`` runs again, with ``run``'s counts and
    the names (never the headers) of its identities."""
    return {
        "scan": scan,
        "identities": [identity.name for identity in run.identities],
        "crosstalkClients": run.crosstalk_clients,
        "leakRequests": run.leak_requests,
        "leakMemoryBound": run.leak_memory_bound,
        "stateTtl": run.state_ttl,
    }


def _int(rerun: dict[str, Any], key: str) -> int:
    value = rerun.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"the reproduction's rerun.{key} is not a count: {value!r}")
    return value


def _seconds(value: object) -> float | None:
    if value is None:
        return None
    if not isinstance(value, int | float) or isinstance(value, bool) or not 0 < value <= 3600:
        raise ValueError(f"the reproduction's rerun.stateTtl is not a time: {value!r}")
    return float(value)


async def replay_rerun(
    header: dict[str, Any],
    target: Target,
    *,
    timing: Timing,
    validator: Validator,
    max_message_size: int,
    identities: Sequence[Identity] = (),
) -> tuple[list[Finding], tuple[dict[str, Any], ...]]:
    """Run the probe or scan that ``header["rerun"]`` names against ``target`` again;
    returns every invariant it saw fail (as findings) and the new transcript.

    Raises:
        ValueError: the rerun is malformed, needs an HTTP target, or needs identities
            that ``identities`` does not give (named); or the target was not reached.
    """
    rerun = header.get("rerun")
    if not isinstance(rerun, dict):
        raise ValueError("the reproduction's rerun is not a JSON object")  # noqa: TRY004 - a format error
    era = str(header.get("era", "modern"))
    if "probe" in rerun:
        return await _probe_again(rerun, target, era, timing.deadline)
    scan = rerun.get("scan")
    if scan not in _SCANS:
        raise ValueError(f"the reproduction's rerun names no probe or scan: {rerun!r}")
    chosen = _identities(rerun, identities) if scan == "identities" else ()
    settings = FuzzSettings(
        deadline=timing.deadline,
        startup_timeout=timing.startup,
        identities=chosen,
        crosstalk_clients=_int(rerun, "crosstalkClients") if scan == "crosstalk" else 0,
        leak_requests=_int(rerun, "leakRequests") if scan == "leaks" else 0,
        leak_memory_bound=_int(rerun, "leakMemoryBound"),
        state_ttl=_seconds(rerun.get("stateTtl")),
    )
    if isinstance(target, HttpTarget) and chosen:
        # As a run does: the catalogue is probed as the first identity.
        target = attrs.evolve(target, headers={**target.headers, **chosen[0].headers})
    async with open_nursery_unwrapped() as nursery:
        opener = Opener(target, nursery, validator, timing, max_message_size)
        probed = await probe_era(opener.open, era, None)
        if probed.catalogue is None:
            raise ValueError(f"the server does not speak the {era} era: {probed.why_not}")
        catalogue = Catalogue(eras={era: probed.catalogue})
        found, notes = await _lazy.run_scans(target, settings, catalogue)
        nursery.cancel_scope.cancel()
    findings = [Finding(INVARIANTS[f.invariant], f.detail, 0) for f in found]
    said = tuple({"note": note} for note in notes)  # (what could not be checked, if any)
    return findings, said + tuple(entry for f in found for entry in f.transcript)


async def _probe_again(
    rerun: dict[str, Any], target: Target, era: str, deadline: float
) -> tuple[list[Finding], tuple[dict[str, Any], ...]]:
    if not isinstance(target, HttpTarget):
        raise ValueError("this reproduction is of an HTTP probe: replay it with --url")  # noqa: TRY004
    probe = rerun.get("probe")
    if not isinstance(probe, str):
        raise ValueError(f"the reproduction's rerun.probe is not a name: {probe!r}")  # noqa: TRY004
    found, notes, reached = await _lazy.scan_http(
        target,
        eras=(era,),
        deadline=deadline,
        max_body=_int(rerun, "maxBody"),
        memory_bound=_int(rerun, "bodyMemoryBound"),
        probes=(probe,),
    )
    if not reached:
        raise ValueError("; ".join(notes) or "the server was not reached")
    findings = [Finding(f.invariant, f.detail, 0) for f in found]
    return findings, tuple({"probe": f.probe, "detail": f.detail} for f in found)


def _identities(rerun: dict[str, Any], given: Sequence[Identity]) -> tuple[Identity, ...]:
    """The identities the rerun names, from ``given``, in the recorded order."""
    names = rerun.get("identities")
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise ValueError(f"the reproduction's rerun.identities is not a list of names: {names!r}")
    by_name = {identity.name: identity for identity in given}
    missing = [name for name in names if name not in by_name]
    if missing or len(names) < 2:
        raise ValueError(
            f"this reproduction acts as the identities {', '.join(map(repr, names))}: give "
            f"{', '.join(map(repr, missing or names))} again with --identity or --identities "
            "(their headers are never written to a file)"
        )
    return tuple(by_name[name] for name in names)
