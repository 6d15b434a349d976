"""Who reads the peer's messages, and how a caller waits for its answer.

By default (``handback_delay=0``) the session's receive loop reads every message, at
once: when ``trio.testing.wait_all_tasks_blocked()`` returns, everything that had
arrived has been handled. A client may opt in to the *handover*
(``handback_delay > 0``; :data:`HANDBACK_DELAY` is a good value): after the loop
delivers an answer and no other request of ours is waiting, it parks for up to
``handback_delay``, and a caller that waits for an answer meanwhile reads the stream
itself. That caller delivers every answer it reads (to whichever caller it is for) and
hands anything else to the loop, in order, stopping there; once it has its own answer
it stops too, and wakes the loop at once if anyone else is waiting. A sequential caller
then passes through Trio's scheduler once per call instead of twice; the price is that
a message nobody asked for may wait up to ``handback_delay`` to be read. A server's
loop never parks: its input is mostly requests, which must not wait.
"""

from __future__ import annotations

import logging
import math
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, Final

import trio

from .. import _jsonrpc as rpc
from .._protocol._connection import Connection
from .._protocol._events import Dropped, ResponseReceived
from .._transports._stream import MessageStream, Received
from ._waiter import Waiter

log = logging.getLogger("trio_mcp.session")

#: The delay to opt in to the handover with, ``Session(handback_delay=HANDBACK_DELAY)``
#: (seconds; the default is 0, no handover): how long a client's receive loop leaves the
#: reading to the caller whose answer it has just delivered, so at most how long, after a
#: call, a message nobody asked for waits to be read. Not shorter: the caller that reads
#: waits in the kernel with the loop's deadline as its timeout, and a timeout shorter than
#: the kernel's tick costs more to arm than the scheduler pass the handover saves.
HANDBACK_DELAY: Final = 0.01

#: ``await process(message, handlers)``: what the session does with a message that is not
#: an answer (handler tasks start in ``handlers``).
Process = Callable[[rpc.Message | rpc.InvalidMessage, trio.Nursery], Awaitable[None]]
#: ``await process_batch(batch, handlers)``: the same for a JSON-RPC batch.
ProcessBatch = Callable[[rpc.Batch, trio.Nursery], Awaitable[None]]


class Reader:
    """Reads the stream for a session: its receive loop, and the callers it hands over to.

    Args:
        stream: what to read.
        connection: takes each answer read, and says which request it answers.
        waiters: our requests waiting for answers, by request id (the session's table,
            shared with the code that sends them).
        process: handles any other message; ``process_batch`` a JSON-RPC batch.
        handback_delay: above 0, a client's loop hands the reading over for that long
            (not negative).
    """

    __slots__ = (
        "_connection",
        "_handback_delay",
        "_hands_over",
        "_park_scope",
        "_process",
        "_process_batch",
        "_stash",
        "_stream",
        "_waiters",
        "broken",
        "caller_reading",
    )

    def __init__(
        self,
        stream: MessageStream,
        connection: Connection,
        waiters: dict[Any, Waiter],
        process: Process,
        process_batch: ProcessBatch,
        *,
        handback_delay: float,
    ) -> None:
        self._stream = stream
        self._connection = connection
        self._waiters = waiters
        self._process = process
        self._process_batch = process_batch
        self._handback_delay = handback_delay
        self._hands_over = connection.role == "client" and handback_delay > 0
        #: Why the input broke (the stream raised :exc:`trio.BrokenResourceError`, for
        #: instance :exc:`~trio_mcp.transports.MessageTooLarge`), once it has.
        self.broken: trio.BrokenResourceError | None = None
        #: Whether a caller reads now (the loop is parked in _park_scope meanwhile).
        self.caller_reading = False
        self._park_scope: trio.CancelScope | None = None
        #: What a reading caller read but is not its to handle (anything but an answer),
        #: for the receive loop, in order, before anything it reads itself; ``None``: the
        #: caller found the input at its end.
        self._stash: deque[Received | None] = deque()

    async def receive_loop(self, handlers: trio.Nursery) -> None:
        """Read and act on the peer's messages until its input ends (returns then)."""
        stream = self._stream
        process = self._process
        receive_nowait = stream.receive_nowait
        stash = self._stash
        while True:
            while self.caller_reading:
                await self._park(math.inf)
            if stash:
                item = stash.popleft()
                if item is None:
                    break
            else:
                try:
                    item = await stream.receive()
                except (trio.EndOfChannel, trio.ClosedResourceError):
                    break
                except trio.BrokenResourceError as exc:
                    self.broken = exc
                    break
            answered = False
            while True:
                match item:
                    case rpc.ResultResponse() | rpc.ErrorResponse():
                        # The answer to one of our requests: handed over without a coroutine
                        # of its own (it never waits), the commonest message a client reads.
                        self.take_response(item)
                        answered = True
                    case rpc.Batch():
                        await self._process_batch(item, handlers)
                    case _:
                        await process(item, handlers)
                if stash:
                    break  # what a caller left comes before what is still in the stream
                # Take what already arrived with it before yielding, so the handlers of a
                # burst start together and their answers leave in one write.
                try:
                    item = receive_nowait()
                except trio.WouldBlock:
                    break
            if answered and self._hands_over and not stash and not self.anyone_waiting():
                # The caller just answered is likely to send its next request at once:
                # let it read the answer itself, unless it has not come back within
                # handback_delay.
                await self._park(trio.current_time() + self._handback_delay)

    def take_response(self, message: rpc.ResultResponse | rpc.ErrorResponse) -> None:
        """Give an answer to the caller waiting for it (if any still is)."""
        event = self._connection.receive(message)
        if type(event) is ResponseReceived:
            waiter = self._waiters.get(event.request.id)
            if waiter is not None:
                waiter.deliver(event.response)
        else:
            assert type(event) is Dropped
            log.debug("dropped: %s", event.reason)

    def anyone_waiting(self) -> bool:
        """Whether a request of ours still waits for its answer."""
        waiters = self._waiters
        if len(waiters) == 1:  # the usual case: the caller that was just answered
            (waiter,) = waiters.values()
            return waiter.answer is None
        return any(waiter.answer is None for waiter in waiters.values())

    async def wait_for(self, waiter: Waiter) -> None:
        """Block until ``waiter`` has its answer or a progress update: every request of
        ours waits this way. Reads for itself while the loop is parked and nobody else
        reads; otherwise wakes the loop to read. Cancelling it loses nothing."""
        while waiter.answer is None and not waiter.progress:
            if self._park_scope is not None and not self.caller_reading and not self._stash:
                await self._read_as_caller(waiter)
            else:
                self.wake()
                await waiter.wait()

    def wake(self) -> None:
        """Have the receive loop read, if it is parked and no caller reads."""
        scope = self._park_scope
        if scope is not None and not self.caller_reading:
            scope.cancel()

    async def _park(self, deadline: float) -> None:
        """Let callers read: until ``deadline``, or until a caller stops reading with
        others still waiting, or leaves something in the stash."""
        with trio.CancelScope(deadline=deadline) as scope:
            self._park_scope = scope
            try:
                await trio.sleep_forever()
            finally:
                self._park_scope = None

    async def _read_as_caller(self, waiter: Waiter) -> None:
        """Read for the receive loop, while it is parked, until ``waiter`` has its answer.

        Answers (to anyone) are delivered here; anything else goes to the stash and the
        loop is woken to handle it, and this stops reading, so that what follows is
        handled after it. The receive is cancellable without loss (a
        :class:`~trio_mcp.transports.MessageStream` guarantees it); whatever way this
        ends, the reading goes back to the loop, at once if someone else waits.
        """
        stream = self._stream
        self.caller_reading = True
        try:
            while True:
                if waiter.answer is not None:
                    return
                try:
                    item = await stream.receive()
                except (trio.EndOfChannel, trio.ClosedResourceError):
                    self._stash.append(None)  # the loop ends the session's input
                    return
                except trio.BrokenResourceError as exc:
                    self.broken = exc
                    self._stash.append(None)
                    return
                while True:
                    match item:
                        case rpc.ResultResponse() | rpc.ErrorResponse():
                            self.take_response(item)
                        case _:
                            self._stash.append(item)
                            return
                    if waiter.answered:
                        # Done. What else is already buffered is read by the next reader,
                        # at the latest the loop, as if it had come just after.
                        break
                    try:
                        item = stream.receive_nowait()
                    except trio.WouldBlock:
                        break
        finally:
            self.caller_reading = False
            scope = self._park_scope
            if scope is not None:
                if self._stash or self.anyone_waiting():
                    scope.cancel()
                else:
                    # The loop reads within handback_delay from now. Its deadline is set
                    # afresh only when it is not between half of that and that (moving
                    # a deadline is work for Trio's deadline heap, at every call else).
                    now = trio.current_time()
                    delay = self._handback_delay
                    deadline = scope.deadline
                    if deadline < now + delay / 2 or deadline > now + delay:
                        scope.deadline = now + delay
