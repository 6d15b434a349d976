"""What a served app runs to be one worker of a fleet (:func:`open_fleet`): the Redis client,
the ``requestState`` keys kept fresh, the change relay, the worker's inbox. Every wait on
Redis here is retried with backoff and reported once per outage; a worker never stops
serving because Redis does not answer."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Final

import trio

from .._server._internals import ServerInternals
from ._caps import FleetCaps
from ._inbox import Inbox
from ._keys import FleetKeys, read_keys
from ._relay import BACKOFF_INITIAL, BACKOFF_MAX, ChangeRelay
from ._state import RedisState

if TYPE_CHECKING:
    import coredis

    from .._server._server import Server

__all__ = ["Fleet", "open_fleet"]

log = logging.getLogger("trio_mcp.fleet")

#: How long a worker waits for Redis at start-up before serving without it for now.
START_TIMEOUT: Final = 5.0


class Fleet:
    """One worker's part of the fleet while :func:`open_fleet` runs.

    Attributes:
        state: the shared state's configuration.
        relay: the change relay (its counters say what crossed and what did not).
        keys: the ``requestState`` keys last read (``None`` before the first read).
        inbox: this worker's inbox (its id, and the way to send to another worker's).
    """

    def __init__(self, server: Server, state: RedisState, redis: coredis.Redis[bytes]) -> None:
        self.server = server
        self._internals = ServerInternals(server)
        self.state = state
        self._redis = redis
        self.relay = ChangeRelay(
            redis,
            self._internals.hub,
            prefix=state.prefix,
            kept=state.changes_kept,
            queue=state.relay_queue,
        )
        self.inbox = Inbox(
            redis,
            prefix=state.prefix,
            size=state.inbox_size,
            worker_ttl=state.worker_ttl,
            refresh=min(1.0, state.worker_ttl / 3),
        )
        self.keys: FleetKeys | None = None
        self._keys_reachable = True

    @property
    def redis(self) -> coredis.Redis[bytes]:
        """The fleet's Redis client (owned by :func:`open_fleet`), for the parts of the app
        that keep their state there (the initialize era's sessions and events)."""
        return self._redis

    def caps(self, what: str, cap: int) -> FleetCaps:
        """A count of ``what`` (``"sessions"``) each caller holds across the fleet, at most
        ``cap``; this worker's slots are freed with it if it dies."""
        return FleetCaps(
            self._redis,
            prefix=self.state.prefix,
            worker_id=self.inbox.worker_id,
            what=what,
            cap=cap,
        )

    async def refresh_keys(self) -> None:
        """Read the keys once and seal and open with them (unless the server was given its
        own ``secret``). Blocks for one round trip; raises what Redis raised."""
        keys = await read_keys(
            self._redis,
            self.state.prefix,
            key_refresh=self.state.key_refresh,
            state_ttl=self._internals.request_state_ttl,
            seed=self.keys.current if self.keys is not None else None,
        )
        self.keys = keys
        self._internals.use_fleet_keys(keys.current, keys.accepted[1:])

    async def _keep_keys(self) -> None:
        delay = BACKOFF_INITIAL
        while True:
            try:
                await self.refresh_keys()
            except Exception as exc:  # noqa: BLE001 - retried, reported once
                if self._keys_reachable:
                    log.warning(
                        "cannot read the fleet's requestState keys (%r): sealing with the "
                        "last ones read until Redis answers",
                        exc,
                    )
                self._keys_reachable = False
                await trio.sleep(delay)
                delay = min(delay * 2, BACKOFF_MAX)
                continue
            if not self._keys_reachable:
                log.warning("the fleet's requestState keys are read again")
            self._keys_reachable = True
            delay = BACKOFF_INITIAL
            await trio.sleep(self.state.key_refresh)

    async def _relay_changes(self) -> None:
        delay = BACKOFF_INITIAL
        while True:
            try:
                await self.relay.start()
            except Exception as exc:  # noqa: BLE001 - retried, reported once
                self.relay._lost(exc)
                await trio.sleep(delay)
                delay = min(delay * 2, BACKOFF_MAX)
                continue
            await self.relay.run()


@asynccontextmanager
async def open_fleet(server: Server, state: RedisState) -> AsyncIterator[Fleet]:
    """Be one worker of the fleet that shares ``state`` for the block: the keys are read,
    the relay connected and the worker announced alive (waiting at most
    :data:`START_TIMEOUT` seconds for Redis, then serving without it until it answers),
    then kept up in this block's own nursery, which leaving cancels."""
    from coredis import Redis

    redis: coredis.Redis[bytes] = Redis.from_url(state.url)
    async with redis, trio.open_nursery() as nursery:
        fleet = Fleet(server, state, redis)
        with trio.move_on_after(START_TIMEOUT):
            try:
                await fleet.refresh_keys()
                await fleet.relay.start()
                await fleet.inbox.announce()
            except Exception as exc:  # noqa: BLE001 - served without Redis until it answers
                log.warning("the fleet's Redis does not answer at start-up (%r)", exc)
        nursery.start_soon(fleet._keep_keys)
        nursery.start_soon(fleet.relay.run if fleet.relay.connected else fleet._relay_changes)
        nursery.start_soon(fleet.inbox.run)
        hub = ServerInternals(server).hub
        hub.relay = fleet.relay.offer
        try:
            yield fleet
        finally:
            hub.relay = None
            nursery.cancel_scope.cancel()
