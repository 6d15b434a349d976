"""Serving the ASGI app with Hypercorn's Trio worker."""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Final, Unpack
from urllib.parse import urlsplit

import trio
from hypercorn.config import Config
from hypercorn.trio import serve as hypercorn_serve

from ._asgi import AppOptions, McpAsgiApp
from ._security import HostPolicy, is_loopback

if TYPE_CHECKING:
    from ..._server._server import Server

__all__ = ["serve"]

log = logging.getLogger("trio_mcp.http")

#: Seconds between the deadline of the requests in flight (``graceful_timeout``) and
#: Hypercorn's own, which closes the connections: time to send their error answers.
ANSWER_TIME: Final = 1.0
#: Connections the kernel queues for the server to accept (the ``listen`` backlog).
#: Hypercorn's default, 100, overflows under a burst of new connections: the kernel drops
#: them, and clients see resets, or answers seconds late (SYN retransmission). 1,000
#: connections at once on loopback: 4,177 overflows and 7.9 s with 100; none and 1.5 s
#: with 2,048. The kernel caps it (Linux: ``net.core.somaxconn``, 4,096 since 5.4).
DEFAULT_BACKLOG: Final = 2048


def _bind(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"


async def serve(
    server: Server,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    graceful_timeout: float = 5.0,
    backlog: int = DEFAULT_BACKLOG,
    shutdown_trigger: Callable[[], Awaitable[Any]] | None = None,
    config: Config | None = None,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
    **app_options: Unpack[AppOptions],
) -> None:
    """Serve ``server`` over HTTP (see :func:`asgi_app`) on ``host:port`` until
    ``shutdown_trigger`` returns, then shut down gracefully.

    ``task_status.started()`` reports the bound port once the server accepts
    connections (``port=0`` picks a free one)::

        port = await nursery.start(partial(serve, server, port=0))

    Args:
        server: what to serve.
        host, port: where to listen. Binding to the local machine (the default) turns on
            DNS-rebinding protection unless ``host_policy`` says otherwise.
        graceful_timeout: the shutdown deadline (5 s): requests still running that
            many seconds after shutdown began are cancelled and answered with a JSON-RPC
            error saying that the server is shutting down (``503`` as JSON, or the
            last event of their SSE stream); a second later the connections close.
        backlog: how many new connections the kernel queues for the server to accept
            (2,048; it sets ``config``'s): past it, under a burst of connections,
            clients are dropped or reset before any HTTP answer. The kernel caps it
            (Linux: ``net.core.somaxconn``).
        shutdown_trigger: an async function whose return starts the shutdown (say,
            waiting for SIGTERM); by default the server runs until cancelled.
        config: a Hypercorn configuration to start from (its ``bind`` is used when it
            has one; ``fd://N`` shares a listening socket between worker processes).
        app_options: :func:`asgi_app`'s options.

    Raises:
        RuntimeError: the app cannot start (say, its task store cannot be opened); the
            message names what and why. Nothing was bound.
        ValueError: ``backlog`` is not a positive int.

    Resource handling: Hypercorn's nurseries (connections, lifespan) and the app's
    session manager all live inside this call. Shutdown first ends the long-lived
    streams and stops accepting connections; requests in flight then have
    ``graceful_timeout`` seconds, then get their error answers; then the sessions
    end. Cancelling this call
    instead stops everything at once.
    """
    if isinstance(backlog, bool) or not isinstance(backlog, int) or backlog < 1:
        raise ValueError(f"backlog must be a positive int, not {backlog!r}")
    if "host_policy" not in app_options and not is_loopback(host):
        # Serving other names is a deliberate choice; Host checks would refuse them.
        app_options["host_policy"] = HostPolicy.off()
    app = McpAsgiApp(server, **app_options)
    if config is None:
        config = Config()
        config.loglevel = "WARNING"
    if not config.bind or config.bind == ["127.0.0.1:8000"]:
        config.bind = [_bind(host, port)]
    config.accesslog = None
    config.backlog = backlog
    config.graceful_timeout = graceful_timeout + ANSWER_TIME
    # Hypercorn settings relied on: reads stay unbounded (idle SSE clients send nothing),
    # so the app bounds each request body itself (body_timeout, 408); idle keep-alive
    # connections close after keep_alive_timeout (5 s), and a request's headers are
    # bounded by h11_max_incomplete_size (16 KiB); graceful_timeout is the shutdown
    # deadline.
    config.read_timeout = None

    async def trigger() -> None:
        if shutdown_trigger is None:
            await trio.sleep(math.inf)
        else:
            await shutdown_trigger()
        log.info("shutting down (deadline %s s)", graceful_timeout)
        app.begin_shutdown(grace=graceful_timeout)

    # The app runs (sessions, tasks, their store) around Hypercorn rather than in its
    # lifespan: what cannot start (a task store that cannot be opened) is raised from this
    # call, before the port is bound, instead of a lifespan failure inside Hypercorn.
    async with app.running(), trio.open_nursery() as nursery:
        binds: list[str] = await nursery.start(
            partial(hypercorn_serve, app, config, shutdown_trigger=trigger, mode="asgi")  # type: ignore[arg-type]
        )
        bound = urlsplit(binds[0]).port if binds else None
        task_status.started(bound if bound is not None else port)
