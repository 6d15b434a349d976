"""Change notifications as an async iterator owned by an ``async with`` block.

Modern servers (2026-07-28) deliver them on a ``subscriptions/listen``
request whose lifetime is the block; legacy servers send list changes on
their own and resource updates after ``resources/subscribe``. Either way
the caller writes::

    async with client.listen(tools=True, resources=["file:///log"]) as changes:
        async for change in changes:
            ...
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Literal

import attrs
import trio

from .._errors import ConnectionClosed, McpError
from .._session._engine import Session
from .._types._converter import converter_for
from .._util import open_nursery_unwrapped
from .._versions import MODERN_VERSIONS
from . import _lazy

if TYPE_CHECKING:
    # Only in annotations: every client routes changes through here, few subscribe.
    from .._types._subscriptions import SubscriptionFilter

__all__ = ["Change", "Listener", "Subscriptions"]

log = logging.getLogger("trio_mcp.client")

#: How many undelivered changes a listener keeps; beyond that duplicates are dropped.
BUFFER = 64


@attrs.frozen
class Change:
    """One change notification.

    ``kind`` is ``"tools"``, ``"prompts"`` or ``"resources"`` for a list change,
    ``"updated"`` for a resource update (then ``uri`` says which), ``"task"`` for a task's
    new status (then ``task_id`` and ``status`` say which and what).
    """

    kind: Literal["tools", "prompts", "resources", "updated", "task"]
    uri: str | None = None
    task_id: str | None = None
    status: str | None = None


class Listener:
    """What :meth:`Client.listen` yields: iterate it for changes.

    Attributes:
        acknowledged: (modern era) what the server agreed to send.
        ended: whether the subscription ended (the server answered, refused, or the
            connection closed); iteration then stops, it does not raise.
        error: the error that ended it, if it did not end gracefully: in either era a
            :exc:`~trio_mcp.ConnectionClosed` when the connection closed; in the
            modern era also the server's error answer.
    """

    def __init__(self, wanted: SubscriptionFilter) -> None:
        self.wanted = wanted
        self.acknowledged: SubscriptionFilter | None = None
        self.ended = False
        self.error: McpError | None = None
        self.dropped = 0
        self._acked = trio.Event()
        self._send, self._receive = trio.open_memory_channel[Change](BUFFER)

    def wants(self, change: Change) -> bool:
        active = self.acknowledged or self.wanted
        if change.kind == "updated":
            return change.uri in (active.resource_subscriptions or ())
        if change.kind == "task":
            return change.task_id in (active.task_ids or ())
        flag = {
            "tools": active.tools_list_changed,
            "prompts": active.prompts_list_changed,
            "resources": active.resources_list_changed,
        }[change.kind]
        return bool(flag)

    def deliver(self, change: Change) -> None:
        try:
            self._send.send_nowait(change)
        except trio.WouldBlock:
            self.dropped += 1
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass

    def acknowledge(self, agreed: SubscriptionFilter) -> None:
        self.acknowledged = agreed
        self._acked.set()

    def end(self) -> None:
        self.ended = True
        self._acked.set()
        self._send.close()

    async def wait_acknowledged(self) -> None:
        await self._acked.wait()

    def __aiter__(self) -> Listener:
        return self

    async def __anext__(self) -> Change:
        try:
            return await self._receive.receive()
        except (trio.EndOfChannel, trio.ClosedResourceError):
            raise StopAsyncIteration from None

    def close(self) -> None:
        self._send.close()
        self._receive.close()


#: Sends one ``resources/subscribe`` or ``resources/unsubscribe`` (method, URI) and waits
#: for the answer.
SendSubscribe = Callable[[str, str], Awaitable[object]]


class Subscriptions:
    """A client's listeners: the changes its notification handler reads are routed here,
    and :meth:`listen` runs :meth:`Client.listen <trio_mcp.Client.listen>` in either era.

    A subscription ends in order: the notifications that came before the end (the answer
    to ``subscriptions/listen``, or the end of the server's input) are delivered first. They
    may still wait in the session's notification queue, which an answer does not pass
    through; so the notification handler counts what it finished (:meth:`handled_one`), and
    an ending listener waits for the count to pass what the session held at its end
    (:meth:`Session.notifications_pending <trio_mcp.session.Session.notifications_pending>`).
    """

    def __init__(self) -> None:
        #: Legacy-era listeners: every change goes to each that wants it.
        self._unaddressed: set[Listener] = set()
        #: Modern-era listeners, by the id of their ``subscriptions/listen`` request.
        self._by_id: dict[Any, Listener] = {}
        self._handled = 0
        self._progress = trio.lowlevel.ParkingLot()
        #: Set when the server's input ends (``connect_client`` wires it to the session).
        self.input_ended = trio.Event()

    # -- fed by the notification handler ------------------------------------------------------

    def route(self, change: Change, subscription: Any) -> None:
        """Deliver ``change`` to the listener of ``subscription`` (modern era), or to every
        listener that wants it (``None``: the legacy era's unaddressed changes)."""
        if subscription is not None:
            listener = self._by_id.get(subscription)
            if listener is not None and listener.wants(change):
                listener.deliver(change)
            return
        for listener in list(self._unaddressed):
            if listener.wants(change):
                listener.deliver(change)

    def acknowledge(self, subscription: Any, agreed: SubscriptionFilter) -> None:
        listener = self._by_id.get(subscription)
        if listener is not None:
            listener.acknowledge(agreed)

    def handled_one(self) -> None:
        """The notification handler finished one notification (whatever it was)."""
        self._handled += 1
        self._progress.unpark_all()

    # -- listening ----------------------------------------------------------------------------

    @asynccontextmanager
    async def listen(
        self,
        session: Session,
        *,
        tools: bool,
        prompts: bool,
        resources: bool,
        resource_uris: Sequence[str],
        send_subscribe: SendSubscribe,
        task_ids: Sequence[str] = (),
        meta: dict[str, Any] | None = None,
    ) -> AsyncIterator[Listener]:
        """See :meth:`Client.listen <trio_mcp.Client.listen>`; ``send_subscribe`` sends the
        initialize era's ``resources/subscribe`` and ``resources/unsubscribe``; ``meta`` is
        the modern request's ``_meta`` (the tasks extension declared, with ``task_ids``)."""
        wanted = _lazy.SubscriptionFilter(
            tools_list_changed=tools or None,
            prompts_list_changed=prompts or None,
            resources_list_changed=resources or None,
            resource_subscriptions=list(resource_uris) or None,
            task_ids=list(task_ids) or None,
        )
        listener = Listener(wanted)
        try:
            if session.connection.version in MODERN_VERSIONS:
                async with self._listen_modern(session, listener, meta):
                    yield listener
            else:
                async with self._listen_legacy(session, listener, resource_uris, send_subscribe):
                    yield listener
        finally:
            self._unaddressed.discard(listener)
            self._by_id = {k: v for k, v in self._by_id.items() if v is not listener}
            listener.close()

    @asynccontextmanager
    async def _listen_modern(
        self, session: Session, listener: Listener, meta: dict[str, Any] | None
    ) -> AsyncIterator[None]:
        """One ``subscriptions/listen`` request, open for the block."""
        conn = session.connection
        assert conn.version is not None
        params: dict[str, Any] = {
            "notifications": converter_for(conn.version).unstructure(listener.wanted)
        }
        if meta:
            params["_meta"] = meta
        session.check_open()
        pending, message = conn.send_request("subscriptions/listen", params)
        # Registered before sending: the acknowledgement may be routed while the send is
        # still returning.
        self._by_id[pending.id] = listener
        async with session.track(pending, message) as call, open_nursery_unwrapped() as nursery:

            async def await_end() -> None:
                try:
                    await call.result()
                except McpError as exc:
                    log.debug("subscription %r ended: %s", pending.id, exc)
                    listener.error = exc
                await self._end_in_order(session, listener)

            nursery.start_soon(await_end)
            await listener.wait_acknowledged()
            if listener.acknowledged is None and listener.error is not None:
                raise listener.error
            yield
            nursery.cancel_scope.cancel()

    @asynccontextmanager
    async def _listen_legacy(
        self,
        session: Session,
        listener: Listener,
        uris: Sequence[str],
        send_subscribe: SendSubscribe,
    ) -> AsyncIterator[None]:
        """List changes arrive unasked; each URI is subscribed to for the block."""
        session.check_open()
        self._unaddressed.add(listener)
        subscribed = []
        try:
            async with open_nursery_unwrapped() as nursery:
                # No request ends with the connection, as in the modern era: this does,
                # behind the notifications that came first.
                nursery.start_soon(self._end_with_connection, session, listener)
                for uri in uris:
                    await send_subscribe("resources/subscribe", uri)
                    subscribed.append(uri)
                listener.acknowledge(listener.wanted)
                yield
                nursery.cancel_scope.cancel()
        finally:
            with trio.CancelScope(shield=True), trio.move_on_after(session.cancel_send_timeout):
                for uri in subscribed:
                    try:
                        await send_subscribe("resources/unsubscribe", uri)
                    except McpError:
                        break

    async def _end_with_connection(self, session: Session, listener: Listener) -> None:
        """Block until no more notifications can come (the server's input ended, or the
        session finished: closed by us, or its transport failed); then end ``listener``."""
        await _unless_finished(session, self.input_ended.wait)
        try:
            session.check_open()
        except ConnectionClosed as exc:
            listener.error = exc
        else:  # pragma: no cover - ended means closed
            listener.error = ConnectionClosed("the connection closed")
        await self._end_in_order(session, listener)

    async def _end_in_order(self, session: Session, listener: Listener) -> None:
        """End ``listener`` once the notifications the session holds now are handled (see
        the class docstring), or once the session finished (it handles no more).

        Blocks until then, unless cancelled first (the listener's block ended)."""
        target = self._handled + session.notifications_pending()

        async def handled() -> None:
            while self._handled < target:
                await self._progress.park()

        if self._handled < target:
            await _unless_finished(session, handled)
        else:
            await trio.lowlevel.checkpoint()
        listener.end()


async def _unless_finished(session: Session, wait: Callable[[], Awaitable[object]]) -> None:
    """Block until ``wait()`` returns or ``session`` finishes, whichever comes first."""
    async with trio.open_nursery() as nursery:

        async def finished() -> None:
            await session.wait_finished()
            nursery.cancel_scope.cancel()

        nursery.start_soon(finished)
        await wait()
        nursery.cancel_scope.cancel()
