"""Whether ids a server issues one after another (task ids) could be guessed from each
other: :func:`guessable_ids`, a heuristic on a few samples (sequence, then entropy)."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from typing import Final

__all__ = ["MIN_ID_BITS", "guessable_ids"]

#: Estimated bits of entropy below which an id is guessable.
MIN_ID_BITS: Final = 64

_DIGITS = re.compile(r"\d+")


def guessable_ids(ids: Sequence[str]) -> str | None:
    """Why ids issued one after another are guessable, or ``None`` when they look random:
    numbers that follow each other (``task-7``, ``task-8``), or fewer than
    :data:`MIN_ID_BITS` bits of entropy once what they share is set aside (estimated from
    their length and the kinds of characters they use)."""
    if len(ids) >= 2:
        numbers = [_DIGITS.findall(i) for i in ids]
        shape = [_DIGITS.sub("#", i) for i in ids]
        if len(set(shape)) == 1 and numbers[0]:
            for position in range(len(numbers[0])):
                values = [int(n[position]) for n in numbers]
                steps = {b - a for a, b in itertools.pairwise(values)}
                if len(steps) == 1 and 0 < abs(next(iter(steps))) <= 16:
                    return f"sequential (each {next(iter(steps)):+d} from the one before)"
    for task_id in ids:
        bits = _entropy_bits(task_id, ids)
        if bits < MIN_ID_BITS:
            return f"about {bits:.0f} bits of entropy (fewer than {MIN_ID_BITS})"
    return None


def _entropy_bits(task_id: str, ids: Sequence[str]) -> float:
    """Bits an id could hold: its characters that differ from the others' (a common
    prefix and suffix set aside), times log2 of the alphabet they are drawn from."""
    prefix = _common_prefix(ids)
    suffix = _common_prefix([i[::-1] for i in ids]) if len(ids) > 1 else 0
    core = task_id[prefix : len(task_id) - suffix if suffix else None]
    if len(ids) > 1 and not core:
        return 0.0
    core = core if core else task_id
    alphabet = 0
    if any(c.isdigit() for c in core):
        alphabet += 10
    if any(c.islower() for c in core):
        alphabet += 26
    if any(c.isupper() for c in core):
        alphabet += 26
    if any(not c.isalnum() for c in core):
        alphabet += 4
    if set(core.lower()) <= set("0123456789abcdef-"):
        alphabet = min(alphabet, 16)
    hexdigits = sum(1 for c in core if c != "-")
    return hexdigits * math.log2(max(alphabet, 2))


def _common_prefix(ids: Sequence[str]) -> int:
    if len(ids) < 2:
        return 0
    first, last = min(ids), max(ids)
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return n
