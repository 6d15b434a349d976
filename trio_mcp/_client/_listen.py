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

from typing import TYPE_CHECKING, Literal

import attrs
import trio

from .._errors import McpError

if TYPE_CHECKING:
    # Only in annotations: every client routes changes through here, few subscribe.
    from .._types._subscriptions import SubscriptionFilter

__all__ = ["Change", "Listener"]

#: How many undelivered changes a listener keeps; beyond that duplicates are dropped.
BUFFER = 64


@attrs.frozen
class Change:
    """One change notification.

    ``kind`` is ``"tools"``, ``"prompts"`` or ``"resources"`` for a list change,
    ``"updated"`` for a resource update (then ``uri`` says which).
    """

    kind: Literal["tools", "prompts", "resources", "updated"]
    uri: str | None = None


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
