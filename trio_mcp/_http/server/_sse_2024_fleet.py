"""The HTTP+SSE sessions (2024-11-05) of a fleet: a session is held by the worker serving its
SSE stream (its *owner*), which records it in the fleet's session registry; a POST for it
that lands on another worker is forwarded whole to the owner (by the fleet's
:class:`~trio_mcp._fleet._forward.Forwarder`, as Streamable HTTP requests are), which
serves it as if it had been POSTed there, and its answer comes back the same way.

So the forwarding worker answers ``202`` only once the session took the message into its
queue, behind everything POSTed before (on any worker) and ahead of anything POSTed after:
one client's messages reach the session in the order it sent them. It answers ``404`` for
a session that is unknown, ended, or another principal's, or whose owner is gone before it
took the POST, and ``503`` with ``Retry-After`` while Redis does not answer, the owner's
inbox is full, or the owner went away with the POST. A session whose queue is full makes
its POSTs wait, wherever they landed, as it makes those POSTed to the owner wait.

The session counts among its caller's sessions across the fleet (:class:`FleetCaps`) while
its stream is open. The registry's record of a session is written when its stream opens,
written again every third of the registry's ``idle_timeout`` while it stays open (so that
it outlives an idle hour) and as soon as this worker finds that Redis lost its data (so that
it comes back within a second or so), and ended when the stream ends.
"""

from __future__ import annotations

import logging
from collections.abc import MutableMapping
from typing import TYPE_CHECKING, Any, Final

import trio

from ... import _jsonrpc as rpc
from ..._errors import ErrorCode
from ..._fleet._caps import CapsUnavailable
from ._exchange import HttpRequest
from ._session_registry import RedisSessionRegistry, SessionRecord, SessionState

if TYPE_CHECKING:
    from ..._fleet._caps import FleetCaps
    from ..._fleet._fleet import Fleet
    from ..._fleet._forward import Forwarder

__all__ = ["SseFleet", "SseFleetUnavailable"]

log = logging.getLogger("trio_mcp.http")

#: The ``Retry-After`` (seconds) of a request refused while the fleet's Redis is away.
RETRY_AFTER: Final = 5
#: Seconds a stream's end waits, shielded, to end its session in the registry.
END_TIMEOUT: Final = 5.0
#: Seconds a forwarded POST waits for the worker holding its session to answer it (its
#: session took it, or it was refused) before it is answered 503 with ``Retry-After``.
ANSWER_TIMEOUT: Final = 10.0
#: The protocol version of every session here.
VERSION: Final = "2024-11-05"


class SseFleetUnavailable(Exception):
    """The fleet's Redis does not answer: a session cannot be recorded or found."""


class SseFleet:
    """One worker's part of the fleet's HTTP+SSE sessions (see the module's text).

    Args:
        fleet: this worker's fleet.
        caps: the sessions each caller holds across the fleet.
        forwarder: hands a POST to the worker holding its session, and serves those
            other workers hand to this one.
        idle_timeout: seconds a record lives in Redis without being written again (3600).
    """

    def __init__(
        self,
        fleet: Fleet,
        caps: FleetCaps,
        forwarder: Forwarder,
        *,
        idle_timeout: float = 3600.0,
    ) -> None:
        self.inbox = fleet.inbox
        self.caps = caps
        self.registry = RedisSessionRegistry(
            fleet.redis, prefix=f"{fleet.state.prefix}sse:", idle_timeout=idle_timeout
        )
        self.forwarder = forwarder

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
        itself, and POSTs for it that other workers forward here get 404; the slot is
        given back later, see :meth:`FleetCaps.give_back`)."""
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
        """Answer a POST for ``session_id``, which this worker does not hold, as the worker
        that holds it answers it. Blocks for the registry's lookup and then until that
        worker answered (it took the message into the session, or refused it), or went
        away (checked every :data:`~trio_mcp._fleet._forward.LIVENESS_CHECK` seconds of
        silence), at most :data:`ANSWER_TIMEOUT` seconds (then ``503``), inside the request's
        cancel scope; each Redis wait is bounded."""
        try:
            state, record = await self.registry.lookup(session_id, principal or "")
        except Exception as exc:  # noqa: BLE001 - answered 503
            await _unavailable(http, f"the fleet's Redis does not answer ({type(exc).__name__})")
            return
        if state is not SessionState.LIVE or record is None or record.owner == self.inbox.worker_id:
            await http.respond_error(404, ErrorCode.INVALID_REQUEST, "Session not found")
            return
        message = rpc.parse(body)
        if isinstance(message, rpc.InvalidMessage) and message.reply is not None:
            await http.respond_message(message.reply, 400)
            return
        started = False

        async def send(message: MutableMapping[str, Any]) -> None:
            nonlocal started
            started = True
            await http.send(message)

        with trio.move_on_after(ANSWER_TIMEOUT) as waited:
            answered = await self.forwarder.forward(
                HttpRequest(http.scope, http.receive, send), body, record.owner, principal
            )
        if waited.cancelled_caught:
            # The owner did not answer in time (its session is flooded, or its answer was
            # lost): told that this client left, it does not deliver the message late.
            if not started:
                await _unavailable(http, "the worker holding this session did not answer in time")
            return
        if answered:
            return  # answered by the owner (or 503: it could not be reached)
        # Its owner is gone, and its stream with it: the session ended.
        with trio.move_on_after(self.registry.timeout):
            try:
                await self.registry.end(session_id)
            except Exception as exc:  # noqa: BLE001 - it expires by itself
                log.debug("cannot end HTTP+SSE session of a gone worker (%r)", exc)
        await http.respond_error(404, ErrorCode.INVALID_REQUEST, "Session not found")


async def _unavailable(http: HttpRequest, why: str) -> None:
    await http.respond_error(
        503,
        ErrorCode.INTERNAL_ERROR,
        f"Service Unavailable: {why}; try again later",
        data={"retryAfter": RETRY_AFTER, "reason": "unavailable"},
        headers=[(b"retry-after", b"%d" % RETRY_AFTER)],
    )
