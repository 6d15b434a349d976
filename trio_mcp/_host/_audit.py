"""Audit: one structured event for every tool call, refusal, consent decision, restart
and tool definition change of a host.

Events carry names, decisions and reasons, never arguments, results, roots' contents,
sampling messages or headers (which may carry secrets). The host keeps the last
``DEFAULT_AUDIT_BUFFER`` events in memory: an application that does not read them loses
the oldest (counted in :attr:`Audit.dropped`); the host never waits for a reader.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from typing import Literal

import attrs
import trio

from ._pinning import shown

__all__ = ["DEFAULT_AUDIT_BUFFER", "Audit", "AuditEvent", "AuditKind"]

#: How many audit events a host keeps for its reader by default.
DEFAULT_AUDIT_BUFFER = 1024

AuditKind = Literal[
    "call",  # a tool call was sent (outcome "ok", "error" or "failed")
    "refused",  # a tool call, read or server request was refused (by policy or consent)
    "consent",  # a consent hook decided ("allow", "deny", "rewrite")
    "restart",  # a server is being restarted
    "tool_changed",  # a tool's definition differs from the approved one
    "tool_added",  # a tool appeared after its server's tools were first listed
    "tool_refused",  # a tool listed blocked by policy, twice, too long, too deep or badly named
    "tool_approved",  # a changed or added tool was approved
]


@attrs.frozen(kw_only=True)
class AuditEvent:
    """One thing the host did or refused. ``time`` is :func:`trio.current_time`."""

    time: float
    kind: AuditKind
    server: str
    #: The tool (the server's name for it), method or URI concerned, if any.
    subject: str | None = None
    #: ``"allow"``, ``"deny"``, ``"rewrite"``, ``"ok"``, ``"error"``, ``"failed"``...
    outcome: str | None = None
    #: Why, in words safe to log (never the request's content).
    reason: str | None = None


class Audit:
    """The bounded record of a host's audit events.

    Read it with ``async for event in host.audit`` (blocks until the next event; ends
    when the host closes), or give ``open_host(on_audit=...)`` a callback called
    synchronously with each event (it must not block; exceptions are logged and
    ignored).
    """

    def __init__(
        self,
        maxlen: int = DEFAULT_AUDIT_BUFFER,
        callback: Callable[[AuditEvent], None] | None = None,
    ) -> None:
        self._events: deque[AuditEvent] = deque(maxlen=maxlen)
        self._callback = callback
        self._arrived = trio.Event()
        self._closed = False
        #: Events lost because the buffer was full when they came.
        self.dropped = 0

    def record(
        self,
        kind: AuditKind,
        server: str,
        subject: str | None = None,
        outcome: str | None = None,
        reason: str | None = None,
    ) -> AuditEvent:
        """Record an event; never blocks. A subject longer than 200 characters is cut (a
        server's tool names are the server's to choose), marked with its length."""
        event = AuditEvent(
            time=trio.current_time(),
            kind=kind,
            server=server,
            subject=None if subject is None else shown(subject),
            outcome=outcome,
            reason=reason,
        )
        if len(self._events) == self._events.maxlen:
            self.dropped += 1
        self._events.append(event)
        self._arrived.set()
        if self._callback is not None:
            try:
                self._callback(event)
            except Exception:  # the application's bug must not stop the host
                logging.getLogger("trio_mcp.host").exception("audit callback failed")
        return event

    def pending(self) -> list[AuditEvent]:
        """Take every buffered event at once (never blocks)."""
        events = list(self._events)
        self._events.clear()
        return events

    def _close(self) -> None:
        self._closed = True
        self._arrived.set()

    def __aiter__(self) -> Audit:
        return self

    async def __anext__(self) -> AuditEvent:
        """Block until an event comes (or the host closes: then stop)."""
        await trio.lowlevel.checkpoint()
        while not self._events:
            if self._closed:
                raise StopAsyncIteration
            if self._arrived.is_set():
                self._arrived = trio.Event()
            await self._arrived.wait()
        return self._events.popleft()
