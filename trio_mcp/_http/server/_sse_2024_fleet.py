"""The HTTP+SSE sessions (2024-11-05) of a fleet: a session is held by the worker serving its
SSE stream (its *owner*), which records it in the fleet's session registry; a POST for it
that lands on another worker is handed to the owner through the owner's inbox, and the
owner delivers it as if it had been POSTed there.

The forwarding worker finds the owner and appends to its inbox in one Lua script (one
round trip; it names the owner's keys it computes from the fleet's prefix: one Redis
server, not a cluster). The owner puts a forwarded message in its session's queue of
forwarded messages without waiting (see ``SseTransport._deliver_forwarded``), and once the
session took it, behind everything POSTed before (on any worker), tells the forwarding
worker so through that worker's inbox (:data:`ACK`; one round trip on the owner). Only then
does the forwarding worker answer ``202``: a later POST, wherever it lands, cannot overtake
it, so one client's messages reach its session in the order it sent them.

It answers ``404`` for a session that is unknown, ended (also when the owner finds it
ended), another principal's, or whose owner is gone, and ``503`` with ``Retry-After`` (and
a JSON-RPC error whose data says when) while Redis does not answer, the owner's inbox is
full, the session's queue of forwarded messages is full (its client floods it: no other
session waits for it), or the owner's word does not come within :data:`ANSWER_TIMEOUT`.

The session counts among its caller's sessions across the fleet (:class:`FleetCaps`) while
its stream is open. The registry's record of a session is written when its stream opens,
written again every third of the registry's ``idle_timeout`` while it stays open (so that
it outlives an idle hour) and as soon as this worker finds that Redis lost its data (so that
it comes back within a second or so), and ended when the stream ends.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias

import orjson
import trio

from ... import _jsonrpc as rpc
from ..._errors import ErrorCode
from ..._fleet._caps import CapsUnavailable
from ..._fleet._inbox import INBOX_KEPT, SEND_LUA, InboxUnavailable
from ..._transports._stream import Received
from ._session_registry import RedisSessionRegistry, SessionRecord

if TYPE_CHECKING:
    from ..._fleet._caps import FleetCaps
    from ..._fleet._fleet import Fleet
    from ._exchange import HttpRequest

__all__ = ["SseFleet", "SseFleetUnavailable"]

log = logging.getLogger("trio_mcp.http")

#: The inbox kind of a POST forwarded to the worker holding its session.
KIND: Final = "sse-2024.post"
#: The ``Retry-After`` (seconds) of a request refused while the fleet's Redis is away.
RETRY_AFTER: Final = 5
#: Seconds a stream's end waits, shielded, to end its session in the registry.
END_TIMEOUT: Final = 5.0
#: The inbox kind of the owner's word on a forwarded POST, to the worker it reached.
ACK: Final = "sse-2024.ack"
#: Seconds a forwarded POST waits for the owner's word (its session took it, or refused
#: it) before it is answered 503 with ``Retry-After``.
ANSWER_TIMEOUT: Final = 10.0
#: The ``Retry-After`` (seconds) of a POST refused because its session was busy.
BUSY_RETRY_AFTER: Final = 1
#: The protocol version of every session here.
VERSION: Final = "2024-11-05"

# KEYS: the session's live record. ARGV: the principal (as recorded), this
# worker's id, the prefix of liveness keys, of inboxes, the inbox size, kind, payload, the
# inbox kept (s). 1: appended to the owner's inbox; 0: the owner is gone; -1: its inbox is
# full; -2: no such live session of this principal's held by another worker (or it ended).
_FORWARD: Final = (
    SEND_LUA
    + """
local data = redis.call('GET', KEYS[1])
if not data then return -2 end
local record = cjson.decode(data)
local owner = record['owner']
if record['principal'] ~= ARGV[1] or type(owner) ~= 'string' or owner == ARGV[2] then
  return -2
end
return send(ARGV[3] .. owner, ARGV[4] .. owner, ARGV[5], ARGV[6], ARGV[7], ARGV[8])
"""
)

#: Where the owner's word on a forwarded message goes: the worker it reached, and the id
#: that worker gave it.
Reply: TypeAlias = tuple[str, str]
#: The owner's word: the session took the message, its queue was full, it is not there.
Outcome: TypeAlias = Literal["taken", "busy", "gone"]
#: Hands a forwarded message to the session it is for: ``(session, principal, message,
#: reply)``; the callee answers ``reply`` (see :meth:`SseFleet.answer`) once it is settled.
Deliver = Callable[[str, str | None, Received, Reply], Awaitable[None]]


class SseFleetUnavailable(Exception):
    """The fleet's Redis does not answer: a session cannot be recorded or found."""


class SseFleet:
    """One worker's part of the fleet's HTTP+SSE sessions (see the module's text).

    Args:
        fleet: this worker's fleet.
        caps: the sessions each caller holds across the fleet.
        deliver: hands a message forwarded to this worker to its session.
        idle_timeout: seconds a record lives in Redis without being written again (3600).
    """

    def __init__(
        self, fleet: Fleet, caps: FleetCaps, deliver: Deliver, *, idle_timeout: float = 3600.0
    ) -> None:
        self.inbox = fleet.inbox
        self.caps = caps
        self.registry = RedisSessionRegistry(
            fleet.redis, prefix=f"{fleet.state.prefix}sse:", idle_timeout=idle_timeout
        )
        self._deliver = deliver
        self._forward: Any = fleet.redis.register_script(_FORWARD)
        #: Messages forwarded here for a session that had ended meanwhile.
        self.unclaimed = 0
        #: id of a forwarded POST -> where the owner's word on it goes
        self._waiting: dict[str, trio.MemorySendChannel[Outcome]] = {}
        self.inbox.on(KIND, self._received)
        self.inbox.on(ACK, self._acked)

    def _record(self, session_id: str, principal: str | None) -> SessionRecord:
        return SessionRecord(
            session_id=session_id,
            protocol_version=VERSION,
            principal=principal or "",
            owner=self.inbox.worker_id,
        )

    async def hold(self, session_id: str, principal: str | None, caller: str) -> bool:
        """Count ``session_id`` among ``caller``'s sessions across the fleet and record that
        this worker holds it; ``False`` (nothing done) if ``caller`` holds its cap of
        sessions already. Two round trips (each at most a timeout of 5 s).

        Raises:
            SseFleetUnavailable: Redis did not answer (nothing is held).
        """
        try:
            if not await self.caps.take(caller, session_id):
                return False
        except CapsUnavailable as exc:
            raise SseFleetUnavailable(str(exc)) from exc
        try:
            await self.registry.register(self._record(session_id, principal))
        except Exception as exc:
            await self.caps.give_back(caller, session_id)
            raise SseFleetUnavailable(repr(exc)) from exc
        return True

    async def keep(self, session_id: str, principal: str | None) -> None:
        """Write the record again every third of the registry's ``idle_timeout``, and at
        once when Redis had forgotten this worker (it lost its data), until cancelled (a
        failure is logged; the next round tries again)."""
        record = self._record(session_id, principal)
        while True:
            with trio.move_on_after(self.registry.idle_timeout / 3):
                await self.inbox.wait_rejoined()
            try:
                await self.registry.register(record)
            except Exception as exc:  # noqa: BLE001 - tried again at the next round
                log.warning("cannot record HTTP+SSE session %s... (%r)", session_id[:6], exc)

    async def release(self, session_id: str, caller: str) -> None:
        """End ``session_id`` everywhere and give ``caller``'s slot back. Shielded, at most
        :data:`END_TIMEOUT` seconds each; a failure is logged (the record then expires by
        itself, and POSTs for it that reach this worker are dropped as unclaimed; the slot
        is given back later, see :meth:`FleetCaps.give_back`)."""
        await self.caps.give_back(caller, session_id)
        with trio.CancelScope(shield=True, deadline=trio.current_time() + END_TIMEOUT):
            try:
                await self.registry.end(session_id)
                return
            except Exception as exc:  # noqa: BLE001 - logged; the record expires
                log.warning("cannot end HTTP+SSE session %s... (%r)", session_id[:6], exc)
                return
        log.warning("cannot end HTTP+SSE session %s... in time", session_id[:6])

    async def forward(
        self, http: HttpRequest, session_id: str, principal: str | None, body: bytes
    ) -> None:
        """Answer a POST for ``session_id``, which this worker does not hold, by handing
        it to the worker that does. Blocks for one Redis round trip (the record's look-up
        and the append to its owner's inbox are one script), at most the registry's
        timeout, and then for the owner's word, at most :data:`ANSWER_TIMEOUT` seconds,
        inside the request's cancel scope."""
        message = rpc.parse(body)
        if isinstance(message, rpc.InvalidMessage) and message.reply is not None:
            await http.respond_message(message.reply, 400)
            return
        inbox = self.inbox
        cid = secrets.token_urlsafe(12)
        head = orjson.dumps([session_id, principal, inbox.worker_id, cid])
        word, waiting = trio.open_memory_channel[Outcome](1)
        self._waiting[cid] = word
        try:
            await self._forward_and_wait(http, session_id, principal, body, head, waiting)
        finally:
            del self._waiting[cid]

    async def _forward_and_wait(
        self,
        http: HttpRequest,
        session_id: str,
        principal: str | None,
        body: bytes,
        head: bytes,
        waiting: trio.MemoryReceiveChannel[Outcome],
    ) -> None:
        inbox = self.inbox
        try:
            with trio.fail_after(self.registry.timeout):
                answer = await self._forward(
                    keys=[f"{self.registry.prefix}live:{session_id}"],
                    args=[
                        principal or "",
                        inbox.worker_id,
                        inbox.live_prefix,
                        inbox.inbox_prefix,
                        inbox.size,
                        KIND,
                        head + b"\n" + body,
                        INBOX_KEPT,
                    ],
                )
        except Exception as exc:  # noqa: BLE001 - answered 503
            await _unavailable(http, f"the fleet's Redis does not answer ({type(exc).__name__})")
            return
        if answer == -1:
            await _unavailable(http, "the worker holding this session is busy")
            return
        if answer == 0:
            # Its owner is gone, and its stream with it: the session ended.
            with trio.move_on_after(self.registry.timeout):
                try:
                    await self.registry.end(session_id)
                except Exception as exc:  # noqa: BLE001 - it expires by itself
                    log.debug("cannot end HTTP+SSE session of a gone worker (%r)", exc)
        if answer != 1:
            await http.respond_error(404, ErrorCode.INVALID_REQUEST, "Session not found")
            return
        outcome: Outcome | None = None
        with trio.move_on_after(ANSWER_TIMEOUT):
            outcome = await waiting.receive()
        if outcome == "taken":
            await http.respond(202, b"Accepted", content_type=b"text/plain")
        elif outcome == "gone":
            await http.respond_error(404, ErrorCode.INVALID_REQUEST, "Session not found")
        elif outcome == "busy":
            await http.respond_error(
                503,
                ErrorCode.INTERNAL_ERROR,
                "Service Unavailable: the session is busy (its client sends faster than it "
                "reads); try again later",
                data={"retryAfter": BUSY_RETRY_AFTER, "reason": "busy"},
                headers=[(b"retry-after", b"%d" % BUSY_RETRY_AFTER)],
            )
        else:
            await _unavailable(http, "the worker holding this session did not answer in time")

    async def answer(self, reply: Reply, outcome: Outcome) -> None:
        """Tell the worker a forwarded message came from (``reply``) what became of it.
        One round trip, at most the inbox's timeout; a failure is logged (that worker
        then answers 503 when its wait ends)."""
        origin, cid = reply
        try:
            await self.inbox.send(origin, ACK, orjson.dumps([cid, outcome]))
        except InboxUnavailable as exc:
            log.warning("cannot answer a forwarded HTTP+SSE message (%s)", exc)

    async def _acked(self, payload: bytes) -> None:
        await trio.lowlevel.checkpoint()
        try:
            cid, outcome = orjson.loads(payload)
        except (orjson.JSONDecodeError, ValueError, TypeError):
            log.warning("ignored a malformed answer to a forwarded HTTP+SSE message")
            return
        word = self._waiting.get(cid) if isinstance(cid, str) else None
        if word is not None and outcome in ("taken", "busy", "gone"):
            try:
                word.send_nowait(outcome)
            except (trio.WouldBlock, trio.BrokenResourceError):
                pass  # answered already, or no longer waited for

    async def _received(self, payload: bytes) -> None:
        head, _, body = payload.partition(b"\n")
        try:
            session_id, principal, origin, cid = orjson.loads(head)
        except (orjson.JSONDecodeError, ValueError, TypeError):
            log.warning("ignored a malformed forwarded HTTP+SSE message")
            return
        if not (
            isinstance(session_id, str)
            and isinstance(principal, str | None)
            and isinstance(origin, str)
            and isinstance(cid, str)
        ):
            log.warning("ignored a malformed forwarded HTTP+SSE message")
            return
        await self._deliver(session_id, principal, rpc.parse(body), (origin, cid))


async def _unavailable(http: HttpRequest, why: str) -> None:
    await http.respond_error(
        503,
        ErrorCode.INTERNAL_ERROR,
        f"Service Unavailable: {why}; try again later",
        data={"retryAfter": RETRY_AFTER, "reason": "unavailable"},
        headers=[(b"retry-after", b"%d" % RETRY_AFTER)],
    )
