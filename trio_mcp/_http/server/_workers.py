"""``serve(workers=N)``: N worker processes that share one port, supervised.

Each worker is a Python process of its own (its own ``trio.run``) that binds the port with
``SO_REUSEPORT``, so the kernel spreads new connections over the workers. The parent
(this module) holds the port from the start (bound, never listening: it takes no
connections, but keeps the port the workers were told), starts the workers, restarts one
that dies, and stops them all at shutdown:

- each worker learns what to serve from a pickle on its stdin (:class:`WorkerSpec`), and
  says it is serving by writing to a pipe of its own;
- the parent keeps each worker's stdin open: closing it is the worker's shutdown trigger,
  and a parent that dies (even by SIGKILL) closes it too, so no worker outlives it;
- at shutdown each worker gets ``graceful_timeout`` and a little more to finish, then
  SIGTERM and SIGKILL go to its process group;
- a worker that exits while the fleet runs is started again after a delay that doubles
  from :data:`RESTART_DELAY` to :data:`MAX_RESTART_DELAY` while it keeps failing.
"""

from __future__ import annotations

import logging
import math
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, Final

import attrs
import trio

from ..._transports._process_group import signal_group, wait_group_gone
from ._worker_spec import WorkerSpec

__all__ = ["MAX_RESTART_DELAY", "RESTART_DELAY", "serve_workers"]

log = logging.getLogger("trio_mcp.http")

#: Seconds before a worker that died is started again; doubled while it keeps dying.
RESTART_DELAY: Final = 0.5
#: The longest wait before restarting a worker that keeps dying.
MAX_RESTART_DELAY: Final = 30.0
#: A worker that served this many seconds before dying restarts after RESTART_DELAY again.
STABLE_AFTER: Final = 30.0
#: Seconds a worker has, after ``graceful_timeout`` and the answers' second, to exit at
#: shutdown before SIGTERM; then as long again before SIGKILL.
EXIT_MARGIN: Final = 2.0
#: Seconds for a worker to import its server and start listening (the first start fails
#: beyond it; a restart is retried).
START_TIMEOUT: Final = 60.0


class WorkerFailed(RuntimeError):
    """A worker exited before it served, at the fleet's start."""


def reserve_port(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` with ``SO_REUSEPORT`` and never listening: it holds
    the port (``port=0``: a free one, read from the socket) for the workers to share.

    Raises:
        RuntimeError: the platform has no ``SO_REUSEPORT``.
        OSError: the port cannot be bound.
    """
    reuse_port = getattr(socket, "SO_REUSEPORT", None)
    if reuse_port is None:
        raise RuntimeError("serve(workers=N) needs SO_REUSEPORT (Linux, the BSDs, macOS)")
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, reuse_port, 1)
        sock.bind(address)
    except BaseException:
        sock.close()
        raise
    return sock


async def serve_workers(
    spec: WorkerSpec,
    workers: int,
    *,
    answer_time: float,
    shutdown_trigger: Callable[[], Awaitable[Any]] | None,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Run ``workers`` processes serving ``spec`` until ``shutdown_trigger`` returns.

    Blocks until every worker has exited. ``task_status.started()`` reports the port once
    every worker serves. At shutdown each worker has ``spec.graceful_timeout`` plus
    ``answer_time`` (its connections' last second) plus :data:`EXIT_MARGIN` to exit.
    Cancelling this call kills the workers at once (SIGKILL to each
    process group, then waits, shielded and bounded, for them to be reaped).

    Raises:
        WorkerFailed: a worker exited (or did not serve within :data:`START_TIMEOUT`)
            at the start; its own error went to the shared stderr.
    """
    with reserve_port(spec.host, spec.port) as held:
        port = int(held.getsockname()[1])
        spec = attrs.evolve(spec, port=port)
        stopping = trio.Event()
        exit_after = spec.graceful_timeout + answer_time + EXIT_MARGIN
        failed: WorkerFailed | None = None
        async with trio.open_nursery() as nursery:
            try:
                for slot in range(workers):
                    await nursery.start(partial(_supervise, spec, slot, stopping, exit_after))
            except WorkerFailed as exc:
                failed = exc  # raised below, alone: the workers already started are killed
                nursery.cancel_scope.cancel()
            else:
                log.info("%d workers serving on %s:%d", workers, spec.host, port)
                task_status.started(port)
                if shutdown_trigger is None:
                    await trio.sleep(math.inf)
                else:
                    await shutdown_trigger()
                log.info("shutting down %d workers (deadline %s s)", workers, spec.graceful_timeout)
                stopping.set()
    if failed is not None:
        raise failed


async def _supervise(
    spec: WorkerSpec,
    slot: int,
    stopping: trio.Event,
    exit_after: float,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Keep worker ``slot`` running until ``stopping``; started once it first serves."""
    delay = RESTART_DELAY
    first: trio.TaskStatus[None] | None = task_status
    while True:
        began = trio.current_time()
        served = await _run_worker(spec, slot, stopping, exit_after, first)
        if stopping.is_set():
            return
        if served:
            first = None
        elif first is not None:
            raise WorkerFailed(
                f"HTTP worker {slot} exited before serving (its error, if any, is above)"
            )
        if trio.current_time() - began >= STABLE_AFTER:
            delay = RESTART_DELAY
        log.warning("HTTP worker %d exited; starting it again in %.1f s", slot, delay)
        with trio.move_on_after(delay):
            await stopping.wait()
        if stopping.is_set():
            return
        delay = min(delay * 2, MAX_RESTART_DELAY)


async def _run_worker(
    spec: WorkerSpec,
    slot: int,
    stopping: trio.Event,
    exit_after: float,
    task_status: trio.TaskStatus[None] | None,
) -> bool:
    """One worker process from spawn to reap. Returns whether it served; calls
    ``task_status.started()`` when it does."""
    ready_read, ready_write = os.pipe()
    try:
        blob = attrs.evolve(spec, ready_fd=ready_write).dumps()
        process = await trio.lowlevel.open_process(
            [sys.executable, "-m", "trio_mcp._http.server._worker", str(slot)],
            stdin=subprocess.PIPE,
            pass_fds=(ready_write,),
            start_new_session=True,
        )
    except BaseException:
        os.close(ready_read)
        raise
    finally:
        os.close(ready_write)
    served = False
    try:
        assert process.stdin is not None
        async with trio.lowlevel.FdStream(ready_read) as ready, trio.open_nursery() as nursery:

            async def watch_ready() -> None:
                nonlocal served
                with trio.move_on_after(START_TIMEOUT) as scope:
                    said = await ready.receive_some(16)
                if scope.cancelled_caught:
                    log.warning("HTTP worker %d did not serve within %s s", slot, START_TIMEOUT)
                    signal_group(process.pid, signal.SIGKILL)
                elif said:
                    served = True
                    if task_status is not None:
                        task_status.started()

            async def stop_when_asked() -> None:
                await stopping.wait()
                await _stop(process, exit_after)

            nursery.start_soon(watch_ready)
            nursery.start_soon(stop_when_asked)
            await process.stdin.send_all(blob)
            await process.wait()
            nursery.cancel_scope.cancel()
    finally:
        if process.returncode is None:
            # Cancelled: stop everything at once (bounded: SIGKILL is not refused).
            with trio.CancelScope(shield=True), trio.move_on_after(EXIT_MARGIN):
                signal_group(process.pid, signal.SIGKILL)
                await process.wait()
        with trio.CancelScope(shield=True), trio.move_on_after(EXIT_MARGIN):
            signal_group(process.pid, signal.SIGKILL)  # what the worker left in its group
            await wait_group_gone(process.pid)
    if process.returncode != 0 and not stopping.is_set():
        log.warning("HTTP worker %d (pid %d) exited with %s", slot, process.pid, process.returncode)
    return served


async def _stop(process: trio.Process, exit_after: float) -> None:
    """The shutdown ladder: stdin closed (the worker's trigger), ``exit_after`` seconds,
    then SIGTERM and SIGKILL to its group, :data:`EXIT_MARGIN` apart."""
    assert process.stdin is not None
    await process.stdin.aclose()
    with trio.move_on_after(exit_after):
        await process.wait()
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        log.warning("HTTP worker %d did not exit in time: %s", process.pid, sig.name)
        signal_group(process.pid, sig)
        with trio.move_on_after(EXIT_MARGIN):
            await process.wait()
            return
