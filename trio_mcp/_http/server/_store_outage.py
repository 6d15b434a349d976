"""What a session does while its event store fails (a fleet's Redis restarted or out of
reach): it goes on. An event is still written to the client that is connected, without an
id (it cannot be resumed: nothing kept it); a stream that cannot be discarded is left to
the store's bounds. Each outage of a store is logged once when it begins and once when it
ends; a resumption (``Last-Event-ID``) meanwhile gets 503 with ``Retry-After``.
"""

from __future__ import annotations

import logging
import weakref
from typing import Final

from ._event_store import EventStore, Replay

__all__ = [
    "STORE_RETRY_AFTER",
    "StoreUnavailable",
    "append",
    "discard",
    "discard_session",
    "replay_after",
]

log = logging.getLogger("trio_mcp.http")

#: Seconds a client resuming while the event store fails is told to wait.
STORE_RETRY_AFTER: Final = 2

#: The stores failing now (each outage logged once).
_failing: weakref.WeakSet[EventStore] = weakref.WeakSet()


class StoreUnavailable(Exception):
    """The event store failed: the request that needed it gets 503."""


def _failed(store: EventStore, what: str, exc: BaseException) -> None:
    if store not in _failing:
        _failing.add(store)
        log.warning(
            "the event store fails (%s: %r): events go to connected clients without ids "
            "(not resumable) until it answers",
            what,
            exc,
        )


def _answered(store: EventStore) -> None:
    if store in _failing:
        _failing.discard(store)
        log.warning("the event store answers again: events are resumable again")


async def append(store: EventStore, stream_id: str, data: bytes, *, session: str) -> str | None:
    """``store.append(...)``, or ``None`` when the store fails (logged)."""
    try:
        event_id = await store.append(stream_id, data, session=session)
    except Exception as exc:  # noqa: BLE001 - the stream goes on without resumability
        _failed(store, "append", exc)
        return None
    _answered(store)
    return event_id


async def discard(store: EventStore, stream_id: str) -> None:
    """``store.discard(...)``; a failure is logged (the store's bounds evict it later)."""
    try:
        await store.discard(stream_id)
    except Exception as exc:  # noqa: BLE001 - left to the store's bounds
        _failed(store, "discard", exc)


async def discard_session(store: EventStore, session: str) -> None:
    """``store.discard_session(...)``; a failure is logged (left to the store's bounds)."""
    try:
        await store.discard_session(session)
    except Exception as exc:  # noqa: BLE001 - left to the store's bounds
        _failed(store, "discard", exc)


async def replay_after(store: EventStore, event_id: str) -> Replay | None:
    """``store.replay_after(...)``.

    Raises:
        StoreUnavailable: the store failed (logged).
    """
    try:
        replay = await store.replay_after(event_id)
    except Exception as exc:
        _failed(store, "replay", exc)
        raise StoreUnavailable from exc
    _answered(store)
    return replay
