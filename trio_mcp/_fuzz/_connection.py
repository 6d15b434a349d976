"""One connection to the server under test, on the Trio side: it executes steps, feeds
the checker everything that goes out and comes in, and answers what a client owes.

:class:`Connection` is transport-neutral; :class:`StdioConnection` runs a
child process through :func:`~trio_mcp.transports.connect_process_stream`
(so it gets the shutdown ladder), and the HTTP connection lives in
:mod:`._http`. Every task a connection starts runs in the nursery it was
given, and ends when the connection is closed or that nursery is cancelled.
"""

from __future__ import annotations

import abc
import signal
from collections.abc import Sequence

import attrs
import trio

from .. import _jsonrpc as rpc
from .._transports._process import ProcessMessageStream, connect_process_stream
from .._types._base import RequestId
from ._checker import Checker, Finding
from ._steps import Await, Disconnect, Send, Settle, Sleep, Step

__all__ = ["Connection", "StdioConnection", "Timing"]

#: The longest a :class:`~._steps.Sleep` step may wait, whatever the file says.
MAX_SLEEP = 5.0
_OWED_BUFFER = 16


@attrs.frozen(kw_only=True)
class Timing:
    """How long a connection waits.

    Attributes:
        deadline: seconds within which every request must be answered.
        cancel_wait: after the last cancellation, how long to watch for a late answer
            to a cancelled request.
        shutdown_grace: stdio: seconds for each step of the shutdown ladder.
        startup: stdio: extra seconds for the requests sent before a fresh process has
            said anything (while it starts).
    """

    deadline: float = 5.0
    startup: float = 10.0
    cancel_wait: float = 0.5
    shutdown_grace: float = 1.0


class Connection(abc.ABC):
    """Executes :class:`~._steps.Step` objects against one server and records them.

    Attributes:
        checker: judges everything sent and received.
        steps: every step executed, in order (the transcript).
        received: every message received, with its sequence number (for reports).
    """

    def __init__(self, checker: Checker, timing: Timing) -> None:
        self.checker = checker
        self.timing = timing
        self.steps: list[Step] = []
        #: For each message sent: the index of its step and its sequence number.
        self.sent: list[tuple[int, int]] = []
        self.received: list[tuple[int, rpc.Message | rpc.Batch | rpc.InvalidMessage]] = []
        self._seq = 0
        self._change = trio.Event()
        self._closing = False

    # -- bookkeeping ------------------------------------------------------------------------------

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _changed(self) -> None:
        self._change.set()
        self._change = trio.Event()

    def _arrived(
        self, item: rpc.Message | rpc.Batch | rpc.InvalidMessage, origin: int | None = None
    ) -> list[rpc.Message]:
        """A message came in (``origin``: in answer to the message sent with that sequence
        number, when the transport says so): judge it; returns what we owe the server."""
        seq = self._next_seq()
        if len(self.received) < 10_000:
            self.received.append((seq, item))
        owed = self.checker.on_receive(item, seq, trio.current_time(), origin=origin)
        self._changed()
        return owed

    def _lost(self, why: str) -> None:
        """The server went away (unless we were closing)."""
        if not self._closing:
            self.checker.on_closed(why, self._next_seq())
        self._changed()

    @property
    def alive(self) -> bool:
        return not self.checker.closed

    def culprit(self, seq: int) -> int | None:
        """The index of the last step that sent a message at or before ``seq``."""
        found = None
        for index, sent_seq in self.sent:
            if sent_seq > seq:
                break
            found = index
        return found

    def findings(self) -> list[Finding]:
        """What failed since the last call (deadlines are checked first)."""
        self.checker.check_deadlines(trio.current_time(), self._seq)
        return self.checker.take_findings()

    # -- steps ------------------------------------------------------------------------------------

    async def run(self, step: Step) -> None:
        """Execute one step and record it.

        Blocks: a :class:`~._steps.Send` until the message is handed to the
        transport; an :class:`~._steps.Await` until every request it names is
        answered or overdue (``deadline``); a :class:`~._steps.Settle` until all
        answers are in or overdue, then ``cancel_wait`` more if a cancelled
        request is unanswered. Cancelling it leaves the connection usable.
        """
        self.steps.append(step)
        if isinstance(step, Send):
            if self.alive:
                await self._send(step)
            else:
                await trio.lowlevel.checkpoint()
        elif isinstance(step, Await):
            await self._await(step.ids)
        elif isinstance(step, Sleep):
            await trio.sleep(min(max(step.seconds, 0.0), MAX_SLEEP))
        elif isinstance(step, Disconnect):
            await self._disconnect(step.id)
        elif isinstance(step, Settle):
            await self._settle()

    async def _await(self, ids: Sequence[RequestId] | None) -> None:
        wanted = tuple(ids) if ids is not None else None
        limit = trio.current_time() + self.timing.deadline + self.checker.startup
        while self.alive:
            waiting = self.checker.outstanding(wanted)
            if not waiting:
                break
            # A deadline pushed back (progress; a stream being resumed) is waited for.
            limit = max(limit, self.checker.latest_due(wanted) or limit)
            deadline = self.checker.earliest_deadline()
            wake = limit if deadline is None else min(deadline, limit)
            with trio.move_on_at(wake):
                await self._change.wait()
            now = trio.current_time()
            self.checker.check_deadlines(now, self._seq)
            limit = max(limit, self.checker.latest_due(wanted) or limit)
            if now >= limit:
                # Whatever is still waiting here need not be answered (``may``/``should``)
                # or was just judged overdue.
                self.checker.give_up(self.checker.outstanding(wanted))
                break
        await trio.lowlevel.checkpoint()

    async def _settle(self) -> None:
        await self._await(None)
        if self.alive and self.checker.cancelled_unanswered():
            with trio.move_on_after(self.timing.cancel_wait):
                while self.alive and self.checker.cancelled_unanswered():
                    await self._change.wait()

    async def _disconnect(self, id: RequestId) -> None:
        await trio.lowlevel.checkpoint()

    @abc.abstractmethod
    async def _send(self, step: Send) -> None: ...

    @abc.abstractmethod
    async def aclose(self) -> None:
        """End the connection (and, on stdio, the process); see the subclasses."""


class StdioConnection(Connection):
    """A server run as a child process, spoken to over its stdin and stdout.

    Create it with :meth:`start`. Its reader task and the process's
    supervising task run in the nursery given there.
    """

    def __init__(self, stream: ProcessMessageStream, checker: Checker, timing: Timing) -> None:
        super().__init__(checker, timing)
        self.stream = stream
        self._owed_in, self._owed_out = trio.open_memory_channel[rpc.Message](_OWED_BUFFER)
        #: Whether the process exited by itself once its stdin closed (known after aclose).
        self.exited_on_eof: bool | None = None

    @classmethod
    async def start(
        cls,
        nursery: trio.Nursery,
        command: Sequence[str],
        checker: Checker,
        timing: Timing,
        *,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        max_message_size: int,
    ) -> StdioConnection:
        """Start ``command`` and a connection to it, both supervised in ``nursery``.

        Blocks until the process runs. Raises what
        :func:`~trio_mcp.transports.connect_process_stream` raises (a command
        that does not exist, for one).
        """
        stream = await connect_process_stream(
            nursery,
            command,
            env=env,
            cwd=cwd,
            grace=timing.shutdown_grace,
            kill_timeout=2.0,
            exit_wait=0.5,
            stderr=_ignore,
            max_message_size=max_message_size,
        )
        connection = cls(stream, checker, timing)
        nursery.start_soon(connection._read_loop)
        nursery.start_soon(connection._answer_loop)
        return connection

    @property
    def stderr_tail(self) -> str | None:
        return self.stream.stderr_tail

    async def _send(self, step: Send) -> None:
        seq = self._next_seq()
        self.sent.append((len(self.steps) - 1, seq))
        self.checker.on_send(step.data, step.expect, seq, trio.current_time())
        try:
            await self.stream.send_raw(step.data + b"\n")
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self._lost(self._exit_story("stopped reading its stdin"))

    async def _read_loop(self) -> None:
        async with self._owed_in:
            try:
                async for item in self.stream:
                    for answer in self._arrived(item):
                        try:
                            self._owed_in.send_nowait(answer)
                        except trio.WouldBlock:
                            pass  # a server flooding us with requests: drop the answers
            except (trio.ClosedResourceError, trio.BrokenResourceError):
                pass
            self._lost(self._exit_story("closed its stdout"))

    async def _answer_loop(self) -> None:
        async with self._owed_out:
            async for answer in self._owed_out:
                try:
                    await self.stream.send(answer)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    return

    def _exit_story(self, what: str) -> str:
        code = self.stream.returncode
        story = f"the server {what}"
        if code is not None:
            story += f" and exited with status {code}"
            if code < 0:
                try:
                    story += f" ({signal.Signals(-code).name})"
                except ValueError:
                    pass
        tail = self.stream.stderr_tail
        if tail:
            story += "; its stderr ends with:\n" + tail
        return story

    async def aclose(self) -> None:
        """Close the server's stdin and run the shutdown ladder; blocks until the process is
        reaped (at most ``2 * shutdown_grace + 2`` seconds, shielded). Records whether it
        exited by itself on end of input."""
        self._closing = True
        await self.stream.aclose()
        code = self.stream.returncode
        self.exited_on_eof = code is not None and code not in (-signal.SIGTERM, -signal.SIGKILL)


def _ignore(line: str) -> None:
    """The server's stderr is kept as a tail by the stream; nothing else is done with it."""
