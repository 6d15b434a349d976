"""The connection lifecycle as tables.

Theory of operation
-------------------

A connection is in one *phase*. Legacy revisions move through a handshake;
modern revisions have none, so a connection that carries modern requests
just sits in ``MODERN``::

    client: NEW --send initialize--> INITIALIZING --receive result--> OPERATING
    server: NEW --receive initialize--> INITIALIZING --receive initialized--> OPERATING
    either: NEW --modern request--> MODERN
    any phase --close--> CLOSED

A failed ``initialize`` (an error answer) puts a client back in ``NEW``, so
it may try again or fall back. ``TRANSITIONS`` is the whole state machine:
an event that has no row is a protocol violation.

Which messages may flow in each phase are two more tables: ``SENDABLE`` (what
we may send) and ``ACCEPTED`` (what we take from the peer), each keyed by
(role, phase). ``ANY`` stands for every method of the negotiated revision.
Before initialization only the handshake and ``ping`` flow (and a server may
log); a closed connection carries nothing. We are strict in what we send and
lenient in what we accept: a server that answered ``initialize`` serves a
client that forgot ``notifications/initialized``.

:func:`mermaid` draws both tables for the docs, so the picture never drifts
from the code.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Final, Literal, TypeAlias

Side: TypeAlias = Literal["client", "server"]


class Phase(enum.Enum):
    # Members are singletons compared by identity: hash them the same way, in C (Enum's
    # own __hash__ is Python code, run on every look-up of the tables below).
    __hash__ = object.__hash__

    NEW = "new"
    INITIALIZING = "initializing"
    OPERATING = "operating"
    MODERN = "modern"
    CLOSED = "closed"


class Event(enum.Enum):
    __hash__ = object.__hash__  # as Phase's

    SEND_INITIALIZE = "send initialize"
    RECEIVE_INITIALIZE_RESULT = "receive initialize result"
    RECEIVE_INITIALIZE_ERROR = "receive initialize error"
    RECEIVE_INITIALIZE = "receive initialize"
    RECEIVE_INITIALIZED = "receive initialized"
    MODERN_REQUEST = "modern request"
    CLOSE = "close"


TRANSITIONS: Final[Mapping[tuple[Side, Phase, Event], Phase]] = {
    ("client", Phase.NEW, Event.SEND_INITIALIZE): Phase.INITIALIZING,
    ("client", Phase.INITIALIZING, Event.RECEIVE_INITIALIZE_RESULT): Phase.OPERATING,
    ("client", Phase.INITIALIZING, Event.RECEIVE_INITIALIZE_ERROR): Phase.NEW,
    ("client", Phase.NEW, Event.MODERN_REQUEST): Phase.MODERN,
    ("client", Phase.MODERN, Event.MODERN_REQUEST): Phase.MODERN,
    ("server", Phase.NEW, Event.RECEIVE_INITIALIZE): Phase.INITIALIZING,
    ("server", Phase.INITIALIZING, Event.RECEIVE_INITIALIZED): Phase.OPERATING,
    ("server", Phase.NEW, Event.MODERN_REQUEST): Phase.MODERN,
    ("server", Phase.MODERN, Event.MODERN_REQUEST): Phase.MODERN,
    **{
        (role, phase, Event.CLOSE): Phase.CLOSED for role in ("client", "server") for phase in Phase
    },
}

ANY: Final = "*"

_HANDSHAKE: Final = frozenset({"initialize", "ping", "server/discover", "notifications/cancelled"})

SENDABLE: Final[Mapping[tuple[Side, Phase], frozenset[str]]] = {
    ("client", Phase.NEW): _HANDSHAKE,
    ("client", Phase.INITIALIZING): frozenset({"ping", "notifications/cancelled"}),
    ("client", Phase.OPERATING): frozenset({ANY}),
    ("client", Phase.MODERN): frozenset({ANY}),
    ("client", Phase.CLOSED): frozenset(),
    ("server", Phase.NEW): frozenset({"ping", "notifications/message"}),
    ("server", Phase.INITIALIZING): frozenset(
        {"ping", "notifications/message", "notifications/progress"}
    ),
    ("server", Phase.OPERATING): frozenset({ANY}),
    ("server", Phase.MODERN): frozenset({ANY}),
    ("server", Phase.CLOSED): frozenset(),
}

ACCEPTED: Final[Mapping[tuple[Side, Phase], frozenset[str]]] = {
    ("client", Phase.NEW): frozenset({"ping"}),
    ("client", Phase.INITIALIZING): frozenset({"ping"}),
    ("client", Phase.OPERATING): frozenset({ANY}),
    ("client", Phase.MODERN): frozenset({ANY}),
    ("client", Phase.CLOSED): frozenset(),
    ("server", Phase.NEW): _HANDSHAKE,
    ("server", Phase.INITIALIZING): frozenset({ANY}),
    ("server", Phase.OPERATING): frozenset({ANY}),
    ("server", Phase.MODERN): frozenset({ANY}),
    ("server", Phase.CLOSED): frozenset(),
}


def next_phase(role: Side, phase: Phase, event: Event) -> Phase | None:
    """The phase after ``event``, or ``None`` when the event is not allowed."""
    return TRANSITIONS.get((role, phase, event))


def may_send(role: Side, phase: Phase, method: str) -> bool:
    """Whether ``role`` may send ``method`` (request or notification) in ``phase``."""
    allowed = SENDABLE[(role, phase)]
    return ANY in allowed or method in allowed


def accepts(role: Side, phase: Phase, method: str) -> bool:
    """Whether ``role`` takes request ``method`` from its peer in ``phase``."""
    allowed = ACCEPTED[(role, phase)]
    return ANY in allowed or method in allowed


def mermaid(role: Side) -> str:
    """A Mermaid state diagram of ``role``'s lifecycle, drawn from the tables."""
    lines = ["stateDiagram-v2", "    [*] --> new"]
    for (r, before, event), after in TRANSITIONS.items():
        if r != role or event is Event.CLOSE or before is Phase.CLOSED:
            continue
        lines.append(f"    {before.value} --> {after.value}: {event.value}")
    lines.append("    operating --> closed: close")
    lines.append("    modern --> closed: close")
    lines.append("    closed --> [*]")
    return "\n".join(lines)
