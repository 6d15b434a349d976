"""Where a task waiting for an answer gets it, with the request's progress on the side."""

from __future__ import annotations

from collections import deque
from typing import Any

import trio

from .._errors import McpError

#: How many unread progress updates of one request wait for a slow consumer (an
#: ``async for`` over a :class:`~trio_mcp.session.Call`, or a slow ``on_progress``
#: callback); beyond that the oldest is dropped. The memory bound is this many
#: updates per request that asked for progress.
PROGRESS_BUFFER = 32


class Closed:
    """In a waiter: the answer will never come; ``error`` is raised instead. ``tell_peer``:
    the peer does not know (the session stopped running under the request, its nursery
    cancelled, while the stream may still work), so the caller still sends
    ``notifications/cancelled`` when it lets go of the request."""

    __slots__ = ("error", "tell_peer")

    def __init__(self, error: McpError, *, tell_peer: bool = False) -> None:
        self.error = error
        self.tell_peer = tell_peer


class Waiter:
    """A one-shot answer slot plus a bounded, lossy queue of progress updates.

    The session's receive loop never blocks on it: progress beyond
    :data:`PROGRESS_BUFFER` unread updates drops the oldest (progress is a
    hint; the latest matters), and the answer is never dropped.
    """

    __slots__ = ("_waiting", "answer", "dropped_progress", "progress")

    def __init__(self, *, progress: bool) -> None:
        # The tasks blocked in wait() (usually one: the caller). Not a ParkingLot: this is
        # the hot path of every request, and the lot's bookkeeping cost more than the wait.
        self._waiting: list[trio.lowlevel.Task] | None = None
        self.answer: Any = None
        self.progress: deque[Any] | None = deque(maxlen=PROGRESS_BUFFER) if progress else None
        self.dropped_progress = 0

    @property
    def answered(self) -> bool:
        return self.answer is not None

    def deliver(self, answer: Any) -> None:
        if self.answer is None:
            self.answer = answer
            self._wake()

    def push_progress(self, update: Any) -> None:
        if self.progress is None or self.answer is not None:
            self.dropped_progress += 1
            return
        if len(self.progress) == self.progress.maxlen:
            self.dropped_progress += 1
        self.progress.append(update)
        self._wake()

    def _wake(self) -> None:
        waiting = self._waiting
        if waiting:
            self._waiting = None
            for task in waiting:
                trio.lowlevel.reschedule(task)

    async def wait(self) -> None:
        """Block until the answer or a progress update is there (checkpoints only if it
        has to wait)."""
        while self.answer is None and not self.progress:
            task = trio.lowlevel.current_task()
            waiting = self._waiting
            if waiting is None:
                waiting = self._waiting = []
            waiting.append(task)

            def abort(
                _: object,
                waiting: list[trio.lowlevel.Task] = waiting,
                task: trio.lowlevel.Task = task,
            ) -> trio.lowlevel.Abort:
                waiting.remove(task)  # still blocked, so still listed: _wake never ran
                return trio.lowlevel.Abort.SUCCEEDED

            await trio.lowlevel.wait_task_rescheduled(abort)
