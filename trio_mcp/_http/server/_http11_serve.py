"""The httptools front end's server: accept connections on listeners and serve each one
(:class:`~._http11.Http11Connection`) in a task of this call's nursery, until a shutdown
trigger returns; then shut down gracefully."""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import trio

from ._http11 import AsgiApp, Http11Connection, ShutdownSignal
from ._http11_parse import Http11Limits

__all__ = ["serve_http11"]

log = logging.getLogger("trio_mcp.http")


async def serve_http11(
    app: AsgiApp,
    listeners: Sequence[trio.SocketListener],
    *,
    shutdown_trigger: Callable[[], Awaitable[Any]] | None = None,
    shutdown_deadline: float = math.inf,
    limits: Http11Limits | None = None,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``app`` over HTTP/1.1 on ``listeners`` until ``shutdown_trigger`` returns
    (by default, until cancelled).

    ``task_status.started()`` is called once the listeners accept connections.

    Resource handling: every connection is a task of a nursery inside this call, and the
    listeners and connections are closed before it returns. Shutdown stops accepting
    (closing the listeners), closes the idle connections at once and the busy ones after
    their response; those still busy ``shutdown_deadline`` seconds after the trigger
    returned are cancelled (the app is expected to have answered them by then: see
    :meth:`McpAsgiApp.begin_shutdown <trio_mcp.http.McpAsgiApp.begin_shutdown>`).
    Cancelling this call closes everything at once.

    Error handling: what a connection's client gets wrong ends that connection only
    (see :mod:`._http11`); an error of a listener (other than running out of file
    descriptors, retried by :func:`trio.serve_listeners`) propagates.
    """
    limits = limits if limits is not None else Http11Limits()
    shutdown = ShutdownSignal()

    async def connection(stream: trio.SocketStream) -> None:
        await Http11Connection(stream, app, limits, shutdown).serve()

    accepting = trio.CancelScope()
    async with trio.open_nursery() as connections:
        await connections.start(_accept, connection, list(listeners), connections, accepting)
        task_status.started()
        if shutdown_trigger is None:
            await trio.sleep_forever()
        await shutdown_trigger()
        accepting.cancel()
        log.info("the HTTP front end stops accepting connections")
        shutdown.begin()
        connections.cancel_scope.deadline = trio.current_time() + shutdown_deadline


async def _accept(
    handler: Callable[[trio.SocketStream], Awaitable[None]],
    listeners: list[trio.SocketListener],
    handler_nursery: trio.Nursery,
    scope: trio.CancelScope,
    task_status: trio.TaskStatus[list[trio.SocketListener]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Accept connections until ``scope`` is cancelled (then the listeners are closed)."""
    with scope:
        await trio.serve_listeners(
            handler, listeners, handler_nursery=handler_nursery, task_status=task_status
        )
