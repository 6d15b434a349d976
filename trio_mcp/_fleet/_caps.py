"""How many sessions each caller holds across a fleet (:class:`FleetCaps`), so that the
per-principal cap holds when a client opens its sessions on different workers.

Each caller has one Redis set, ``<prefix>caps:<what>:<caller>``, of ``<worker> <session>``
members. Taking a slot is one Lua script: at the cap, the members of workers whose liveness
key is gone (see :mod:`._inbox`) are dropped first, so the sessions of a dead worker do not
hold the cap for ever, and then the slot is refused or added. Giving it back is one
``SREM``. The set expires :data:`KEPT` seconds after its last change.

A slot stays with its session when its worker ends, gracefully or not (the session's
record stays in Redis for another worker to take over): a worker that takes a session over
moves the slot to itself (:meth:`FleetCaps.move`), and the slots of a gone worker whose
sessions nobody took over lapse as above, when their caller reaches the cap.

The scripts name liveness keys they compute from the prefix: one Redis server, not a
cluster.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Final

import trio

if TYPE_CHECKING:
    import coredis

__all__ = ["CapsUnavailable", "FleetCaps"]

log = logging.getLogger("trio_mcp.fleet")

#: Seconds a caller's set is kept after its last change.
KEPT: Final = 86_400

# KEYS: the caller's set. ARGV: cap, member, the prefix of liveness keys, kept (s).
# 1: taken; 0: at the cap.
_TAKE: Final = """
local cap = tonumber(ARGV[1])
if redis.call('SCARD', KEYS[1]) >= cap then
  local alive = {}
  for _, member in ipairs(redis.call('SMEMBERS', KEYS[1])) do
    local worker = string.match(member, '^(%S+) ')
    if worker ~= nil and alive[worker] == nil then
      alive[worker] = redis.call('EXISTS', ARGV[3] .. worker)
    end
    if worker == nil or alive[worker] == 0 then redis.call('SREM', KEYS[1], member) end
  end
  if redis.call('SCARD', KEYS[1]) >= cap then return 0 end
end
redis.call('SADD', KEYS[1], ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 1
"""


# KEYS: the caller's set. ARGV: as _TAKE, then the member of the worker that held it.
# The slot moves (whatever the count: it was counted) or, if it lapsed, is taken again.
_MOVE: Final = (
    """
if redis.call('SREM', KEYS[1], ARGV[5]) == 1 then
  redis.call('SADD', KEYS[1], ARGV[2])
  redis.call('EXPIRE', KEYS[1], ARGV[4])
  return 1
end
"""
    + _TAKE
)


class CapsUnavailable(Exception):
    """The fleet's Redis did not answer (in time): the slot could not be counted."""


class FleetCaps:
    """At most ``cap`` of something (sessions) held by each caller across the fleet.

    Args:
        redis: the fleet's Redis client.
        prefix: the fleet's key prefix.
        worker_id: this worker's id (its inbox's: the liveness key that keeps its slots).
        what: what is counted, for keys and error messages ("sessions").
        cap: the most each caller may hold.
        timeout: the longest wait, in seconds, for one Redis answer (5).
    """

    def __init__(
        self,
        redis: coredis.Redis[bytes],
        *,
        prefix: str,
        worker_id: str,
        what: str,
        cap: int,
        timeout: float = 5.0,
    ) -> None:
        self._redis = redis
        self.prefix = prefix
        self.worker_id = worker_id
        self.what = what
        self.cap = cap
        self.timeout = timeout
        self._take: Any = redis.register_script(_TAKE)
        self._move: Any = redis.register_script(_MOVE)
        #: Slots whose giving back failed (Redis away): given back at the next take. At
        #: most the sessions this worker held when Redis went away (none is taken while
        #: Redis does not answer).
        self._owed: set[tuple[str, str]] = set()

    def _key(self, caller: str) -> str:
        return f"{self.prefix}caps:{self.what}:{caller}"

    async def take(self, caller: str, held: str) -> bool:
        """Count ``held`` (a session id) for ``caller``; ``False`` (nothing counted) at the
        cap. One round trip (more if earlier give-backs are owed), at most
        :attr:`timeout` seconds each, in the caller's cancel scope.

        Raises:
            CapsUnavailable: Redis did not answer in time, or failed.
        """
        return await self._run(self._take, caller, held)

    async def move(self, caller: str, held: str, previous_owner: str) -> bool:
        """Count ``held`` (a session this worker took over from ``previous_owner``) as this
        worker's: its slot moves here, whatever ``caller``'s count (it was counted when
        the session opened), or, if it lapsed meanwhile (see the module's text), is taken
        again, and ``False`` (nothing counted) at the cap. Round trips and errors as
        :meth:`take`."""
        return await self._run(self._move, caller, held, f"{previous_owner} {held}")

    async def _run(self, script: Any, caller: str, held: str, *extra: str) -> bool:
        try:
            with trio.fail_after(self.timeout):
                for owed in list(self._owed):
                    await self._redis.srem(self._key(owed[0]), [f"{self.worker_id} {owed[1]}"])
                    self._owed.discard(owed)
                answer = await script(
                    keys=[self._key(caller)],
                    args=[self.cap, f"{self.worker_id} {held}", f"{self.prefix}w:", KEPT, *extra],
                )
        except trio.TooSlowError as exc:
            raise CapsUnavailable(f"Redis did not answer within {self.timeout}s") from exc
        except Exception as exc:
            raise CapsUnavailable(f"Redis failed: {exc!r}") from exc
        return bool(answer == 1)

    async def give_back(self, caller: str, held: str) -> None:
        """Count ``held`` no longer. Shielded, at most :attr:`timeout` seconds; if Redis
        does not answer, it is given back at this worker's next :meth:`take` (or when
        this worker is gone)."""
        with trio.CancelScope(shield=True, deadline=trio.current_time() + self.timeout):
            try:
                await self._redis.srem(self._key(caller), [f"{self.worker_id} {held}"])
                return
            except Exception as exc:  # noqa: BLE001 - owed, given back later
                log.warning("cannot give a %s slot back to Redis (%r): later", self.what, exc)
        self._owed.add((caller, held))

    def refusal(self) -> str:
        """The error message for a caller at the cap."""
        return (
            f"Too Many Requests: at most {self.cap} {self.what} per client across the "
            "servers; try again later"
        )
