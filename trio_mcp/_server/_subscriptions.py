"""Fan-out of change notifications to whoever subscribed: legacy sessions (list changes,
``resources/subscribe``) and modern ``subscriptions/listen`` streams.

Publishing never blocks: each subscriber has a small bounded queue. Change
notifications are idempotent hints ("the list changed", "this task changed": the task's
state is read when the notification is sent), so when a slow subscriber's queue is
full, another identical hint is already pending and the new one is dropped (and counted).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Literal, TypeAlias

import attrs
import trio

__all__ = ["Change", "Hub", "Subscriber"]

ListKind: TypeAlias = Literal["tools", "prompts", "resources"]
#: ("list_changed", kind), ("updated", uri) or ("task", task id)
Change: TypeAlias = tuple[str, str]

QUEUE = 16


@attrs.define(eq=False)
class Subscriber:
    tools: bool
    prompts: bool
    resources: bool
    uris: set[str]
    send: trio.MemorySendChannel[Change]
    receive: trio.MemoryReceiveChannel[Change]
    #: Tasks whose status changes are wanted (the tasks extension).
    task_ids: set[str] = attrs.Factory(set)
    dropped: int = 0

    def wants(self, change: Change) -> bool:
        kind, what = change
        if kind == "updated":
            return what in self.uris
        if kind == "task":
            return what in self.task_ids
        return bool(getattr(self, what))

    def offer(self, change: Change) -> None:
        try:
            self.send.send_nowait(change)
        except trio.WouldBlock:
            self.dropped += 1
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass


class Hub:
    """Who wants which changes.

    ``relay``, when set (a fleet's, see :mod:`trio_mcp._fleet._relay`), takes each change
    published here to every worker, this one included, which hands it to :meth:`deliver`;
    when it returns ``False`` (it cannot take it now) the change is delivered here only.
    """

    def __init__(self) -> None:
        self._subscribers: set[Subscriber] = set()
        self.closed = False
        self.relay: Callable[[Change], bool] | None = None

    @contextmanager
    def subscribe(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        uris: set[str] | None = None,
        task_ids: set[str] | None = None,
    ) -> Iterator[Subscriber]:
        """A subscriber for the ``with`` block; iterate ``subscriber.receive`` for changes.
        The iteration ends when the hub closes (a graceful end)."""
        send, receive = trio.open_memory_channel[Change](QUEUE)
        subscriber = Subscriber(
            tools, prompts, resources, set(uris or ()), send, receive, set(task_ids or ())
        )
        if self.closed:
            send.close()
        self._subscribers.add(subscriber)
        try:
            yield subscriber
        finally:
            self._subscribers.discard(subscriber)
            send.close()
            receive.close()

    def publish(self, change: Change) -> None:
        """Tell every subscriber that wants it (through the relay, when one is set).
        Never blocks."""
        if self.relay is not None and self.relay(change):
            return
        self.deliver(change)

    def deliver(self, change: Change) -> None:
        """Tell this process's subscribers that want it. Never blocks."""
        for subscriber in list(self._subscribers):
            if subscriber.wants(change):
                subscriber.offer(change)

    def close(self) -> None:
        """End every subscription gracefully (server shutdown)."""
        self.closed = True
        for subscriber in list(self._subscribers):
            subscriber.send.close()

    @property
    def count(self) -> int:
        return len(self._subscribers)
