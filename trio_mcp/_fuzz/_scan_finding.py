"""What a security scan (identities, cross-talk, leaks) found: a :class:`ScanFinding`, with
the :class:`Transcript` of the exchanges that show it.

The scans are not Hypothesis examples: each is a short fixed sequence, run once, across
identities or connections, so their findings carry a transcript for people, and name the
scan that found them: a replay runs that scan again (:mod:`._scan_replay`). A transcript
names identities, never their headers' values (tokens stay out of reports).
"""

from __future__ import annotations

import json
from typing import Any, Final

import attrs
import orjson

from ._invariants import INVARIANTS

__all__ = ["ScanFinding", "Transcript", "json_text", "short"]

#: The most entries a transcript keeps (the first ones: a scan's story is at its start).
MAX_TRANSCRIPT: Final = 40
_MAX_TEXT = 300


@attrs.frozen(kw_only=True)
class ScanFinding:
    """One invariant a scan saw broken.

    Attributes:
        invariant: its name (a key of :data:`~._invariants.INVARIANTS`).
        detail: what happened, for people.
        era: ``"modern"`` or ``"legacy"``.
        transcript: the exchanges that show it.
        scan: the scan that found it: ``"identities"``, ``"crosstalk"`` or ``"leaks"``
            (set by :func:`~._scan.run_scans`).
    """

    invariant: str
    detail: str
    era: str
    transcript: tuple[dict[str, Any], ...] = ()
    scan: str = ""

    def __attrs_post_init__(self) -> None:
        if self.invariant not in INVARIANTS:
            raise ValueError(f"unknown invariant {self.invariant!r}")


def json_text(value: Any) -> str:
    """``value`` as JSON text, whatever it holds (an integer past 64 bits, which orjson
    refuses, or something that is not JSON at all, as its ``repr``)."""
    try:
        return orjson.dumps(value, default=repr).decode()
    except TypeError:
        return json.dumps(value, default=repr, ensure_ascii=False)


def short(value: Any) -> Any:
    """``value``, or its JSON cut to a few hundred characters when it is longer."""
    text = json_text(value)
    return value if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 1] + "…"


@attrs.define
class Transcript:
    """The exchanges of one scan, as it goes (bounded by :data:`MAX_TRANSCRIPT`)."""

    entries: list[dict[str, Any]] = attrs.field(factory=list)

    def add(self, who: str, what: str, **facts: Any) -> None:
        """Record that ``who`` did ``what`` and got ``facts`` (status, answer...)."""
        if len(self.entries) < MAX_TRANSCRIPT:
            entry: dict[str, Any] = {"as": who, "sent": what}
            entry.update({key: short(value) for key, value in facts.items()})
            self.entries.append(entry)

    def finding(self, invariant: str, detail: str, era: str) -> ScanFinding:
        """A finding with the transcript so far."""
        return ScanFinding(
            invariant=invariant, detail=detail, era=era, transcript=tuple(self.entries)
        )
