"""The security scans a fuzz run makes after its examples: identities (two or more
principals, nothing crossing between them), cross-talk (many clients at once, every answer
and notification reaching its own request) and leaks (a burst of requests with
cancellations: all answered, memory and open streams given back).

Each scan is a fixed sequence of exchanges, bounded by the run's deadline per exchange;
:func:`run_scans` blocks until they are done, and cancelling it cancels the exchange (and
any process) in flight. Their findings become failures (``MUST``) or warnings
(``SHOULD``) of the report like the examples' findings, with a transcript, and the name
of the scan that a replay runs again (:mod:`._scan_replay`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from ._crosstalk import scan_crosstalk
from ._identities import Identity
from ._identity_scan import scan_identities
from ._leaks import scan_leaks
from ._probe import Catalogue
from ._scan_finding import ScanFinding
from ._settings import FuzzSettings
from ._target import HttpTarget, Target
from ._wire import Wire, scan_client

__all__ = ["run_scans"]


async def run_scans(
    target: Target, settings: FuzzSettings, catalogue: Catalogue
) -> tuple[list[ScanFinding], list[str]]:
    """Run the scans ``settings`` asks for against ``target`` (whose eras ``catalogue``
    describes); returns their findings and notes on what could not be checked."""
    findings: list[ScanFinding] = []
    notes: list[str] = []
    identities: Sequence[Identity] = settings.identities
    if isinstance(target, HttpTarget):
        async with scan_client(settings.deadline) as client:
            wires = {
                era: Wire(client, target.url, era, entry.version, window=settings.deadline)
                for era, entry in catalogue.eras.items()
            }
            if len(identities) >= 2:
                found, said = await scan_identities(
                    wires,
                    _with_shared(identities, target.headers),
                    catalogue,
                    state_ttl=settings.state_ttl,
                )
                findings += _named(found, "identities")
                notes += said
            base = dict(target.headers)
            if settings.crosstalk_clients > 0:
                found, said = await scan_crosstalk(
                    wires, base, catalogue, clients=settings.crosstalk_clients
                )
                findings += _named(found, "crosstalk")
                notes += said
            if settings.leak_requests > 0:
                found, said = await scan_leaks(
                    target, settings, catalogue, wires=wires, headers=base
                )
                findings += _named(found, "leaks")
                notes += said
    else:
        if len(identities) >= 2:
            notes.append("identities: a stdio server has one principal: nothing to cross")
        if settings.crosstalk_clients > 0:
            notes.append("cross-talk: a stdio server has one client: see the leaks scan")
        if settings.leak_requests > 0:
            found, said = await scan_leaks(target, settings, catalogue, wires={}, headers={})
            findings += _named(found, "leaks")
            notes += said
    return findings, list(dict.fromkeys(notes))  # (each intruder may say the same)


def _named(findings: Sequence[ScanFinding], scan: str) -> list[ScanFinding]:
    return [attrs.evolve(finding, scan=scan) for finding in findings]


def _with_shared(identities: Sequence[Identity], headers: Mapping[str, str]) -> list[Identity]:
    """Each identity with the target's own headers too (``--header``), except any that
    some identity sets: the target's headers hold the first identity's by now, and
    another identity must never send those."""
    personal = {name.lower() for identity in identities for name in identity.headers}
    shared = {name: value for name, value in headers.items() if name.lower() not in personal}
    return [
        attrs.evolve(identity, headers={**shared, **identity.headers}) for identity in identities
    ]
