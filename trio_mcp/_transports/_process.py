"""The client side of stdio: run an MCP server as a child process and talk to it.

The child's stdin and stdout carry newline-delimited JSON-RPC
(:class:`~._lines.LineMessageStream`); its stderr is drained line by line
(:class:`~._stderr.StderrDrain`); it runs in a session and process group of its
own, so everything it starts can be signalled with it
(:mod:`._process_group`).

The shutdown ladder
-------------------

Leaving :func:`open_process_stream` (or :meth:`ProcessMessageStream.aclose`,
or the cancellation of the nursery given to :func:`connect_process_stream`)
runs these steps, each a cancel scope with a deadline, all inside a shielded
scope so that they still run when the caller has been cancelled::

    close the child's stdin  (queued messages get written first, within the step;
      │                       its stdout is read and dropped from now on, so a
      │                       child blocked writing to us can go on and exit)
      └ wait up to `grace` for the child to exit
    SIGTERM to the whole process group
      └ wait up to `grace` for the child and its group to be gone
    SIGKILL to the whole process group
      └ wait up to `kill_timeout` for them to be gone (only an unkillable
        process, stuck in the kernel, runs this out)

When the nursery is cancelled from outside, the tasks that use the stream were
usually cancelled by the same cancellation (a deadline around a whole
``open_stdio_client`` block): the ladder lets them run first, once, so that
what they send on their way out (a call's ``notifications/cancelled``) is
written or queued before stdin closes; the writer task is shielded until the
ladder closes stdin, so what is queued gets written within the first step.

Whatever is still in the group when the child itself has exited (a
grandchild it left behind) is not waited for at the first step: it goes
straight to SIGTERM, then SIGKILL. A child that exits at once on end of
input, alone, costs no waiting at all. The whole ladder takes at most
``2 * grace + kill_timeout`` seconds (plus ``exit_wait`` if a process that
left the group still holds the stderr pipe). ``grace=math.inf`` never
escalates past the first step that is reached: the ladder then waits as
long as the child takes.
"""

from __future__ import annotations

import logging
import math
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from functools import partial
from typing import Final, Unpack

import trio

from .._jsonrpc import Message
from .._types._base import RequestId
from .._util import open_nursery_unwrapped
from ._lines import DEFAULT_MAX_MESSAGE_SIZE, DEFAULT_SEND_BUFFER, LineMessageStream
from ._process_group import live_members, reap_orphans, signal_group, wait_group_gone
from ._process_options import ProcessOptions
from ._stderr import (
    DEFAULT_STDERR_RATE,
    DEFAULT_STDERR_TAIL_LINES,
    StderrDrain,
    StderrStatistics,
    log_stderr_line,
)
from ._stream import MessageStream, Received

__all__ = [
    "INHERITED_ENVIRONMENT",
    "ProcessMessageStream",
    "connect_process_stream",
    "default_environment",
    "open_process_stream",
]

log = logging.getLogger("trio_mcp.stdio")

#: The variables a child inherits by default (as the official SDKs do, plus ``LANG`` and
#: every ``LC_*``, so the child decodes and prints text the way its user expects).
INHERITED_ENVIRONMENT: Final = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG")


def default_environment() -> dict[str, str]:
    """The environment a child gets by default: :data:`INHERITED_ENVIRONMENT` and ``LC_*``
    from ours, nothing else (no tokens, keys or proxies a server was not given on purpose).

    Values that start with ``()`` (exported shell functions) are left out.
    """
    return {
        key: value
        for key, value in os.environ.items()
        if (key in INHERITED_ENVIRONMENT or key.startswith("LC_")) and not value.startswith("()")
    }


class ProcessMessageStream(MessageStream):
    """A :class:`~trio_mcp.transports.MessageStream` to a child process's stdin and stdout.

    Create it with :func:`open_process_stream` or :func:`connect_process_stream`.
    ``send`` and ``receive`` block and fail as :class:`~trio_mcp.transports.LineMessageStream`'s
    do, with one addition: when the child's stdout ends, ``receive`` waits up to
    ``exit_wait`` seconds for the child's exit status (and the rest of its
    stderr) before it raises :exc:`trio.EndOfChannel`, so that
    :meth:`close_details` can tell why.

    Attributes:
        process: the child (for its ``pid``; signal it only if you must).
    """

    def __init__(
        self,
        process: trio.Process,
        lines: LineMessageStream,
        drain: StderrDrain,
        *,
        exit_wait: float,
    ) -> None:
        self.process = process
        self._lines = lines
        # On every message's path: the line stream's own methods, without a layer of ours.
        self.send_nowait = lines.send_nowait  # type: ignore[method-assign]
        self.receive_nowait = lines.receive_nowait  # type: ignore[method-assign]
        self._drain = drain
        self._exit_wait = exit_wait
        self._output_ended = False
        self._stop_requested = trio.Event()
        self._stopped = trio.Event()

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        """The child's exit status, ``None`` while it runs (``-N``: killed by signal ``N``)."""
        return self.process.returncode

    @property
    def stderr_tail(self) -> str | None:
        """The last lines the child wrote to stderr (``None`` if it wrote none)."""
        return self._drain.tail

    def stderr_statistics(self) -> StderrStatistics:
        """How much of the child's stderr was read, handed on, and dropped (past the rate)."""
        return self._drain.statistics()

    def close_details(self) -> tuple[int | None, str | None]:
        """``(returncode, stderr_tail)``, for :exc:`~trio_mcp.ConnectionClosed`."""
        return self.process.returncode, self._drain.tail

    async def send(self, message: Message, *, related: RequestId | None = None) -> None:
        """Queue a message for the child's stdin; see :meth:`LineMessageStream.send`.

        Raises:
            trio.BrokenResourceError: the child's stdin is gone (after waiting up to
                ``exit_wait`` for its exit status and the rest of its stderr, so that
                :meth:`close_details` can tell why).
        """
        try:
            await self._lines.send(message)
        except trio.BrokenResourceError:
            await self._wait_for_exit()
            raise

    def send_nowait(self, message: Message, *, related: RequestId | None = None) -> None:
        """Send without waiting if the pipe or the queue has room; see
        :meth:`LineMessageStream.send_nowait`."""
        self._lines.send_nowait(message)

    def receive_nowait(self) -> Received:
        """The child's next message if it is already read; see
        :meth:`LineMessageStream.receive_nowait`."""
        return self._lines.receive_nowait()

    async def send_raw(self, data: bytes) -> None:
        """Queue raw bytes for the child's stdin (include the newline)."""
        await self._lines.send_raw(data)

    async def receive(self) -> Received:
        """Wait for the child's next message.

        Raises:
            trio.EndOfChannel: the child's stdout ended (after waiting up to
                ``exit_wait`` for its exit status).
            MessageTooLarge: the child wrote a line over ``max_message_size`` (then on
                every later call: see :class:`LineMessageStream`).
            trio.ClosedResourceError: the stream was closed.
        """
        try:
            return await self._lines.receive()
        except trio.EndOfChannel:
            await self._wait_for_exit()
            raise

    async def _wait_for_exit(self) -> None:
        """Once the child's stdout or stdin is gone: wait up to ``exit_wait`` seconds (once)
        for its exit status and the end of its stderr."""
        if not self._output_ended:
            with trio.move_on_after(self._exit_wait):
                await self.process.wait()
                await self._drain.done.wait()
            self._output_ended = True

    async def aclose(self) -> None:
        """Run the shutdown ladder (see :func:`open_process_stream`) and wait until it is done.

        Blocks for at most ``2 * grace + kill_timeout`` seconds, shielded from
        cancellation (a cancelled caller still gets the child killed, then
        sees the cancellation). Idempotent.
        """
        self._stop_requested.set()
        # unbounded shield: waits for the ladder, which bounds itself (2 * grace + kill_timeout)
        with trio.CancelScope(shield=True):
            await self._stopped.wait()
        await trio.lowlevel.checkpoint_if_cancelled()


async def _spawn(
    argv: list[str], env: Mapping[str, str], cwd: str | os.PathLike[str] | None
) -> trio.Process:
    try:
        return await trio.lowlevel.open_process(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
    except FileNotFoundError as exc:
        missing = os.fsdecode(exc.filename) if exc.filename is not None else argv[0]
        if cwd is not None and missing == os.fsdecode(cwd):
            reason = "its working directory does not exist"
        elif os.sep in argv[0]:
            reason = "no such file"
        else:
            reason = f"not found on PATH {env.get('PATH', '')!r}"
        raise FileNotFoundError(
            exc.errno, f"cannot start the MCP server {argv[0]!r}: {reason}", missing
        ) from exc
    except PermissionError as exc:
        raise PermissionError(
            exc.errno, f"cannot start the MCP server {argv[0]!r}: not executable", exc.filename
        ) from exc


async def _shut_down(
    process: trio.Process,
    lines: LineMessageStream,
    *,
    grace: float,
    kill_timeout: float,
    stdin_closed: Callable[[], object],
) -> None:
    """The ladder (see the module docstring). The caller shields it.

    ``stdin_closed`` is called once the child's stdin is closed, to start
    reading (and dropping) what the child still writes to stdout.
    """
    pgid = process.pid  # start_new_session: the child leads its own group
    deadline = trio.current_time() + grace
    # Step 1: stdin. Queued messages may use the step's time.
    await lines._close_sending(deadline)
    stdin_closed()
    with trio.move_on_at(deadline):
        await process.wait()
    if process.returncode is not None:
        # Reaped: from here on the pgid is only in use while members are left, so it
        # cannot have been reused for an unrelated group (start_new_session made it ours).
        reap_orphans(pgid)
        if not live_members(pgid):
            return
        log.info("stdio server %d exited; terminating what it left in its process group", pgid)
    else:
        log.info("stdio server %d did not exit %s s after its stdin closed", pgid, grace)
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, kill_timeout)):
        log.debug("sending %s to process group %d", sig.name, pgid)
        signal_group(pgid, sig)
        with trio.move_on_after(wait):
            await process.wait()
            await wait_group_gone(pgid)
            return
    log.warning(
        "stdio server %d: processes %s outlived SIGKILL; giving up on them",
        pgid,
        live_members(pgid) or [pgid],
    )


async def _run_process_stream(
    argv: list[str],
    *,
    env: Mapping[str, str],
    cwd: str | os.PathLike[str] | None,
    grace: float,
    kill_timeout: float,
    exit_wait: float,
    stderr: Callable[[str], object] | None,
    stderr_tail_lines: int,
    stderr_rate: float,
    max_message_size: int,
    send_buffer: int,
    task_status: trio.TaskStatus[ProcessMessageStream] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Own the child from spawn to reap: the task :func:`connect_process_stream` starts."""
    process = await _spawn(argv, env, cwd)
    # From here on every exit path runs the ladder. No checkpoint comes before the `try`.
    assert process.stdin is not None
    assert process.stdout is not None
    assert process.stderr is not None
    drain = StderrDrain(
        stderr or log_stderr_line(process.pid), tail_lines=stderr_tail_lines, rate=stderr_rate
    )
    lines = LineMessageStream(
        process.stdout, process.stdin, max_message_size=max_message_size, send_buffer=send_buffer
    )
    stream = ProcessMessageStream(process, lines, drain, exit_wait=exit_wait)
    try:
        async with trio.open_nursery() as nursery:
            # Reading the child's stderr, and its stdout once we are closing, goes on
            # while the ladder runs, even under cancellation (shielded): a child blocked
            # writing to a full pipe could not exit. Both are cancelled explicitly below,
            # once the ladder is done.
            # unbounded shield: cancelled below, once the ladder is done
            stderr_scope = trio.CancelScope(shield=True)
            # unbounded shield: cancelled below, once the ladder is done
            stdout_scope = trio.CancelScope(shield=True)
            # The writer too: it writes what is queued until the ladder closes stdin.
            # unbounded shield: cancelled below, once the ladder is done
            writer_scope = trio.CancelScope(shield=True)
            nursery.start_soon(_run_in, stderr_scope, partial(drain.run, process.stderr))
            nursery.start_soon(_run_in, writer_scope, lines._write_loop)
            try:
                task_status.started(stream)
                await stream._stop_requested.wait()
            finally:
                # unbounded shield: each step of the ladder has its deadline (grace,
                # kill_timeout, exit_wait)
                with trio.CancelScope(shield=True):
                    if not stream._stop_requested.is_set():
                        # Cancelled from outside, with the tasks that use the stream (a
                        # deadline around a whole open_stdio_client block): they run
                        # first, so that their last words (a call's notifications/
                        # cancelled) are written or queued before stdin closes.
                        await trio.lowlevel.checkpoint()
                    await _shut_down(
                        process,
                        lines,
                        grace=grace,
                        kill_timeout=kill_timeout,
                        stdin_closed=partial(
                            nursery.start_soon, _run_in, stdout_scope, lines._discard_input
                        ),
                    )
                    # The rest of stderr, for the tail: it ends at once, unless a process
                    # that left the group holds the pipe.
                    with trio.move_on_after(exit_wait):
                        await drain.done.wait()
                stderr_scope.cancel()
                stdout_scope.cancel()
                writer_scope.cancel()
    finally:
        try:
            # Shielded: under an outer cancellation each aclose_forcefully would raise
            # Cancelled and skip the next one.
            # unbounded shield: aclose_forcefully does not wait for the peer
            with trio.CancelScope(shield=True):
                for pipe in (process.stdin, process.stdout, process.stderr):
                    await trio.aclose_forcefully(pipe)
        finally:
            stream._stopped.set()


async def _run_in(scope: trio.CancelScope, fn: Callable[[], Awaitable[object]]) -> None:
    with scope:
        await fn()


async def connect_process_stream(
    nursery: trio.Nursery,
    command: Sequence[str | os.PathLike[str]],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    grace: float = 2.0,
    kill_timeout: float = 2.0,
    exit_wait: float = 1.0,
    stderr: Callable[[str], object] | None = None,
    stderr_tail_lines: int = DEFAULT_STDERR_TAIL_LINES,
    stderr_rate: float = DEFAULT_STDERR_RATE,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    send_buffer: int = DEFAULT_SEND_BUFFER,
) -> ProcessMessageStream:
    """Start ``command`` as a stdio MCP server whose supervising task runs in ``nursery``.

    Returns once the child runs. Close the stream with
    :meth:`ProcessMessageStream.aclose` when done; if the nursery is cancelled
    first, the child is shut down all the same (the supervising task runs the
    ladder). See :func:`open_process_stream` for the arguments.

    Resource handling:
        The child, its pipes and its two helper tasks (the stdin writer and
        the stderr drain) belong to one task in ``nursery``; it ends after
        the ladder has reaped the child, so the nursery cannot exit while the
        child lives.
    """
    if sys.platform == "win32":  # pragma: no cover
        raise NotImplementedError("stdio child processes need POSIX process groups")
    if not command:
        raise ValueError("command is empty")
    argv = [os.fspath(part) for part in command]
    full_env = default_environment()
    if env is not None:
        full_env.update(env)
    # Checked here, before the spawn, so that nothing can fail between the spawn and the
    # supervising task taking charge of the child.
    for name, value in (("grace", grace), ("kill_timeout", kill_timeout), ("exit_wait", exit_wait)):
        if math.isnan(value) or value < 0:
            raise ValueError(f"{name} must be a non-negative number of seconds")
    if max_message_size < 1:
        raise ValueError("max_message_size must be at least 1")
    if send_buffer < 0 or stderr_tail_lines < 0:
        raise ValueError("send_buffer and stderr_tail_lines must not be negative")
    if math.isnan(stderr_rate) or stderr_rate <= 0:
        raise ValueError("stderr_rate must be a positive number of lines a second")
    stream: ProcessMessageStream = await nursery.start(
        partial(
            _run_process_stream,
            argv,
            env=full_env,
            cwd=cwd,
            grace=grace,
            kill_timeout=kill_timeout,
            exit_wait=exit_wait,
            stderr=stderr,
            stderr_tail_lines=stderr_tail_lines,
            stderr_rate=stderr_rate,
            max_message_size=max_message_size,
            send_buffer=send_buffer,
        )
    )
    return stream


@asynccontextmanager
async def open_process_stream(
    command: Sequence[str | os.PathLike[str]], **options: Unpack[ProcessOptions]
) -> AsyncIterator[ProcessMessageStream]:
    """Run ``command`` as a stdio MCP server for the duration of the block, and yield a
    message stream to it.

    Entering blocks until the child has been started. Leaving runs the
    shutdown ladder (close stdin → ``grace`` → SIGTERM to the process group →
    ``grace`` → SIGKILL → reap) and blocks until it is done: at most
    ``2 * grace + kill_timeout`` seconds, shielded from cancellation, so a
    cancelled caller never leaves the child running.

    Example::

        async with open_process_stream(["uvx", "mcp-server-time"], grace=5) as stream:
            async with open_session(stream, Connection("client", info=...)) as session:
                ...

    Args:
        command: the program and its arguments (no shell).
        env: variables for the child, added to :func:`default_environment`
            (pass ``os.environ`` to hand down everything).
        cwd: the child's working directory.
        grace: seconds each of the first two steps of the ladder may take
            (``math.inf``: wait for the child as long as it takes, never
            escalate past the step reached).
        kill_timeout: seconds to wait for the group to be gone after SIGKILL.
        exit_wait: when the child's stdout ends, how long ``receive`` waits
            for its exit status before reporting the end.
        stderr: called with each line the child writes to stderr (in the
            draining task: it must not block). Default: the
            ``trio_mcp.stdio.stderr`` logger, level INFO.
        stderr_tail_lines: how many of the last stderr lines to keep for
            :meth:`~ProcessMessageStream.close_details`.
        stderr_rate: the most stderr lines a second handed to ``stderr``, sustained
            (ten seconds' worth in a burst); past it lines are counted and dropped
            (but for the tail), and stderr is read in large chunks at most
            ``1 / STDERR_DROP_PAUSE`` times a second, so a child flooding stderr costs the
            host little (``math.inf``: hand on every line).
        max_message_size: the longest line accepted from the child, in bytes.
        send_buffer: messages that may wait for the stdin writer before
            ``send`` blocks.

    Raises:
        FileNotFoundError: the command (or ``cwd``) does not exist; the
            message says which and where it was looked for.
        PermissionError: the command is not executable.
        ValueError: ``command`` is empty, or a timeout or size is negative.
        NotImplementedError: on Windows (no process groups or signals; not
            supported yet).
        Exception: whatever the ``stderr`` handler raises, once the child
            has been shut down.

    Error handling:
        The child exiting is not an error here: ``receive`` reports
        :exc:`trio.EndOfChannel` and :meth:`~ProcessMessageStream.close_details`
        gives the exit status and the end of stderr (a
        :class:`~trio_mcp.session.Session` puts both into the
        :exc:`~trio_mcp.ConnectionClosed` its pending requests fail with).
    """
    async with open_nursery_unwrapped() as nursery:
        stream = await connect_process_stream(nursery, command, **options)
        try:
            yield stream
        finally:
            await stream.aclose()
