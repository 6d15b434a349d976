"""Making a failing transcript short: delta debugging over the messages sent.

Hypothesis shrinks the choices that produced a failing example; this pass
shrinks the example's actual messages, by replaying subsets of them against
fresh connections (Zeller's *ddmin*, removing complements). It first tries
the one message the failure points at (after the ``initialize`` handshake,
if there was one): a hang, say, usually needs nothing else.

The unit is a :class:`~._steps.Send`; the steps that belong to it (an
:class:`~._steps.Await` of its id, a :class:`~._steps.Sleep` after it) come
and go with it, and the final :class:`~._steps.Settle` always stays.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import orjson
import trio

from .._types._base import RequestId
from ._steps import Await, Disconnect, Send, Settle, Sleep, Step

__all__ = ["minimize"]

Test = Callable[[Sequence[Step]], Awaitable[bool]]


def _ids(step: Send) -> list[RequestId]:
    try:
        value = orjson.loads(step.data)
    except orjson.JSONDecodeError:
        return []
    items = value if isinstance(value, list) else [value]
    found: list[RequestId] = []
    for item in items:
        if isinstance(item, dict) and "method" in item and type(item.get("id")) in (str, int):
            found.append(item["id"])
    return found


def _assemble(steps: Sequence[Step], kept: set[int]) -> list[Step]:
    """The steps with only the sends in ``kept`` (indices into ``steps``), and what belongs
    to them."""
    ids: list[RequestId] = []
    for index in kept:
        step = steps[index]
        assert isinstance(step, Send)
        ids.extend(_ids(step))
    keyed = {(type(i), i) for i in ids}
    out: list[Step] = []
    last_send_kept = True
    for index, step in enumerate(steps):
        if isinstance(step, Send):
            last_send_kept = index in kept
            if last_send_kept:
                out.append(step)
        elif isinstance(step, Await):
            wanted = tuple(i for i in step.ids if (type(i), i) in keyed)
            if wanted:
                out.append(Await(wanted))
        elif isinstance(step, Sleep):
            if last_send_kept:
                out.append(step)
        elif isinstance(step, Disconnect):
            if (type(step.id), step.id) in keyed:
                out.append(step)
        else:
            out.append(step)
    if not out or not isinstance(out[-1], Settle):
        out.append(Settle())
    return out


def _handshake(steps: Sequence[Step]) -> list[int]:
    """The indices of the ``initialize`` request and the ``initialized`` notification that
    open a legacy transcript, if it opens that way."""
    found: list[int] = []
    for index, step in enumerate(steps):
        if not isinstance(step, Send):
            continue
        try:
            value = orjson.loads(step.data)
        except orjson.JSONDecodeError:
            break
        method = value.get("method") if isinstance(value, dict) else None
        if method == "initialize" and not found:
            found.append(index)
        elif method == "notifications/initialized" and found:
            found.append(index)
            break
        elif found:
            break
    return found


async def culprit_alone(
    steps: Sequence[Step], fails: Test, *, culprit: int | None, deadline: float
) -> list[Step] | None:
    """``steps`` cut down to the send that broke the invariant (after the handshake, if
    it needs one), if that fails on its own by ``deadline`` (Trio time); else None.

    Tried before the whole transcript is replayed: the steps before the culprit may not
    behave the same way a second time (timing, a slow tool), and a replay that goes
    wrong there never reaches the culprit.
    """
    sends = [i for i, step in enumerate(steps) if isinstance(step, Send)]
    if culprit is None or culprit not in sends:
        return None
    handshake = _handshake(steps)
    for prelude in ([], handshake) if handshake else ([],):
        kept = {*prelude, culprit}
        if len(kept) < len(sends) and trio.current_time() < deadline:
            with trio.move_on_at(deadline):
                if await fails(_assemble(steps, kept)):
                    return _assemble(steps, kept)
    return None


async def minimize(
    steps: Sequence[Step], fails: Test, *, culprit: int | None, deadline: float
) -> list[Step]:
    """The shortest variant of ``steps`` found (by ``deadline``, Trio time) for which
    ``fails`` still returns true; ``steps`` itself is assumed to fail.

    Blocks for as many replays as it takes, at most until ``deadline`` (a
    replay under way then is cancelled and counts as not failing).
    """
    sends = [i for i, step in enumerate(steps) if isinstance(step, Send)]
    best = list(steps)

    async def attempt(kept: set[int]) -> bool:
        if trio.current_time() >= deadline:
            return False
        with trio.move_on_at(deadline):
            return await fails(_assemble(steps, kept))
        return False

    alone = await culprit_alone(steps, fails, culprit=culprit, deadline=deadline)
    if alone is not None:
        return alone
    units = list(sends)
    chunks = 2
    while len(units) >= 2 and trio.current_time() < deadline:
        size = max(1, len(units) // chunks)
        pieces = [units[i : i + size] for i in range(0, len(units), size)]
        for piece in pieces:
            rest = [u for u in units if u not in piece]
            if rest and await attempt(set(rest)):
                units = rest
                chunks = max(chunks - 1, 2)
                best = _assemble(steps, set(units))
                break
        else:
            if chunks >= len(units):
                break
            chunks = min(len(units), chunks * 2)
    if len(units) == 1 and len(sends) > 1:
        best = _assemble(steps, set(units))
    return best
