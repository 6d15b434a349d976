"""Change notifications carried between the workers of a fleet: every change a worker
raises (a list changed, a resource was updated, a task changed status) is appended to one
Redis Stream, and every worker reads that stream and hands each change to its own
listeners, in the stream's order, each once.

A change goes *only* through Redis while Redis answers: the worker that raised it hears it
back like every other, so no listener gets it twice. While Redis does not answer (or the
queue to it is full), a change reaches this worker's listeners at once and no other's; the
reader catches up from where it stopped when Redis is back, so what others appended
meanwhile still arrives. The stream keeps the last ``changes_kept`` entries.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Final

import orjson
import trio
from coredis import PureToken

from .._server._subscriptions import Change, Hub

if TYPE_CHECKING:
    import coredis

__all__ = ["ChangeRelay"]

log = logging.getLogger("trio_mcp.fleet")

#: How long one XREAD waits for new entries before asking again.
READ_BLOCK_MS: Final = 5_000
#: Backoff between attempts while Redis does not answer.
BACKOFF_INITIAL: Final = 0.1
BACKOFF_MAX: Final = 5.0


class ChangeRelay:
    """The relay of one worker: :meth:`offer` is the hub's relay hook (never blocks);
    :meth:`run` carries changes to and from Redis until cancelled."""

    def __init__(
        self, redis: coredis.Redis[bytes], hub: Hub, *, prefix: str, kept: int, queue: int
    ) -> None:
        self._redis = redis
        self._hub = hub
        self._stream = f"{prefix}changes"
        self._kept = kept
        self._send, self._receive = trio.open_memory_channel[Change](queue)
        #: Whether the last exchange with Redis worked (changes go through it only then).
        self.connected = False
        #: Changes that reached only this worker's listeners (Redis away, queue full).
        self.local_only = 0
        #: Changes read from the stream and handed to this worker's listeners.
        self.delivered = 0

    def offer(self, change: Change) -> bool:
        """Take ``change`` for Redis; ``False`` when it cannot (the hub then delivers it
        here only)."""
        if not self.connected:
            self.local_only += 1
            return False
        try:
            self._send.send_nowait(change)
        except trio.WouldBlock:
            self.local_only += 1
            return False
        return True

    async def start(self) -> None:
        """Connect: note where the stream ends now (nothing before it is replayed).
        Blocks for one round trip; raises what Redis raised."""
        last = await self._redis.xrevrange(self._stream, "+", "-", count=1)
        self._last = last[0].identifier if last else "0-0"
        self.connected = True

    async def run(self) -> None:
        """Write offered changes and read everyone's, each in its own task, until
        cancelled. Redis errors are retried with backoff (logged once per outage)."""
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._write)
            nursery.start_soon(self._read)

    async def _write(self) -> None:
        async for change in self._receive:
            try:
                await self._redis.xadd(
                    self._stream,
                    {"c": orjson.dumps(change)},
                    trim_strategy=PureToken.MAXLEN,
                    threshold=self._kept,
                    trim_operator=PureToken.APPROXIMATELY,
                )
            except Exception as exc:  # noqa: BLE001 - Redis away: deliver here, go on
                self._hub.deliver(change)
                self.local_only += 1
                self._lost(exc)

    async def _read(self) -> None:
        delay = BACKOFF_INITIAL
        while True:
            try:
                found = await self._redis.xread(
                    {self._stream: self._last}, count=256, block=READ_BLOCK_MS
                )
            except Exception as exc:  # noqa: BLE001 - retried, reported once
                self._lost(exc)
                await trio.sleep(delay)
                delay = min(delay * 2, BACKOFF_MAX)
                continue
            if not self.connected:
                log.warning("the fleet's Redis answers again: changes cross workers again")
                self.connected = True
            delay = BACKOFF_INITIAL
            for entries in (found or {}).values():
                for entry in entries:
                    self._last = entry.identifier
                    change = _change_of(entry.field_values)
                    if change is not None:
                        self.delivered += 1
                        self._hub.deliver(change)

    def _lost(self, exc: BaseException) -> None:
        if self.connected:
            log.warning(
                "the fleet's Redis does not answer (%r): changes reach this worker's "
                "listeners only until it does",
                exc,
            )
        self.connected = False


def _change_of(fields: Any) -> Change | None:
    raw = fields.get(b"c", fields.get("c")) if hasattr(fields, "get") else None
    try:
        kind, what = orjson.loads(raw)  # type: ignore[arg-type]  # a TypeError if not bytes
    except (TypeError, ValueError, orjson.JSONDecodeError):
        log.warning("ignored a malformed change in the fleet's stream: %r", raw)
        return None
    if kind not in ("list_changed", "updated", "task") or not isinstance(what, str):
        log.warning("ignored a malformed change in the fleet's stream: %r", raw)
        return None
    return (kind, what)
