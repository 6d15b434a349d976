"""Serving the ASGI app: on the httptools front end (:mod:`._http11`) or with Hypercorn's
Trio worker."""

from __future__ import annotations

import logging
import math
import socket
import sys
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, Unpack
from urllib.parse import urlsplit

import trio
from hypercorn.config import Config
from hypercorn.trio import serve as hypercorn_serve

from ._asgi import AppOptions, McpAsgiApp
from ._http11_parse import Http11Limits
from ._security import OriginPolicy, is_loopback

if TYPE_CHECKING:
    from ..._server._server import Server

__all__ = ["FrontEnd", "serve"]

#: Which HTTP server carries the requests to the app.
FrontEnd: TypeAlias = Literal["httptools", "hypercorn"]
FRONT_ENDS: Final = ("httptools", "hypercorn")

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
    server: Server | str,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    workers: int = 1,
    front_end: FrontEnd = "httptools",
    http11_limits: Http11Limits | None = None,
    graceful_timeout: float = 5.0,
    backlog: int = DEFAULT_BACKLOG,
    shutdown_trigger: Callable[[], Awaitable[object]] | None = None,
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
        server: what to serve. With ``workers`` above 1, each worker process builds it
            again from its module: a ``Server`` defined at the top level of a module or
            of the program's script, or ``"module:attribute"`` naming one (or a function
            of no arguments returning one).
        host, port: where to listen. Binding to the local machine (the default) turns on
            DNS-rebinding protection unless ``origin_policy`` says otherwise.
        workers: how many processes serve (1: this one). Above 1, each worker is a
            process of its own (its own ``trio.run``) listening on the same port with
            ``SO_REUSEPORT``, so the kernel spreads connections over them; this call
            supervises them (a worker that dies is started again, after 0.5 s doubling
            to 30 s while it keeps dying) and stops them at shutdown (each has the
            shutdown deadline, then SIGTERM, then SIGKILL). ``app_options`` and
            ``config`` are pickled to each worker. The stateless era works across
            workers as is; the initialize era's sessions live in the worker that made
            them unless the workers share state (see the scale-out how-to).
        front_end: the HTTP server in front of the app. ``"httptools"`` (the default):
            trio_mcp's own HTTP/1.1 server on llhttp (the C parser of Node.js and
            uvicorn, through ``httptools``), which answers each request in the
            connection's own task, with a third to a half of Hypercorn's CPU per call
            (see the discussion "Where an HTTP call's CPU goes"); it refuses
            request-smuggling shapes with ``400`` and bounds request heads (16 KiB, 100
            fields: ``431``; 10 s: ``408``) and idle keep-alive connections (5 s); plain
            HTTP/1.1 only. ``"hypercorn"``: Hypercorn's Trio worker (h11 in pure Python;
            TLS and HTTP/2 through ``config``). Both serve the same app, with the same
            rules.
        http11_limits: the httptools front end's bounds of request heads and idle
            connections (:class:`Http11Limits`: 16 KiB and 100 fields, 10 s for a head,
            5 s idle, by default); ignored by Hypercorn, whose ``config`` has its own.
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
            The httptools front end reads only its ``bind`` (one address, or ``fd://N``),
            and refuses one that asks for TLS.
        app_options: :func:`asgi_app`'s options.

    Raises:
        RuntimeError: the app cannot start (say, its task store cannot be opened); the
            message names what and why. Nothing was bound. With workers: a worker exited
            before serving (its error went to stderr).
        ValueError: ``backlog`` or ``workers`` is not a positive int, ``front_end`` is
            not one of the two, or ``config`` asks the httptools front end for TLS.
        TypeError: with workers, a ``Server`` no module holds at its top level, or an
            option that does not pickle (named); ``http11_limits`` that is not an
            :class:`Http11Limits`.

    Resource handling: the front end's nurseries (connections; Hypercorn's lifespan) and
    the app's
    session manager all live inside this call. Shutdown first ends the long-lived
    streams and stops accepting connections; requests in flight then have
    ``graceful_timeout`` seconds, then get their error answers; then the sessions
    end. Cancelling this call
    instead stops everything at once.
    """
    if isinstance(backlog, bool) or not isinstance(backlog, int) or backlog < 1:
        raise ValueError(f"backlog must be a positive int, not {backlog!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive int, not {workers!r}")
    if front_end not in FRONT_ENDS:
        raise ValueError(f"front_end must be 'httptools' or 'hypercorn', not {front_end!r}")
    if http11_limits is not None and not isinstance(http11_limits, Http11Limits):
        raise TypeError(
            f"http11_limits must be an Http11Limits, not {type(http11_limits).__name__}"
        )
    if front_end == "httptools" and config is not None and config.ssl_enabled:
        raise ValueError(
            "config asks for TLS, which the httptools front end does not serve: pass "
            "front_end='hypercorn' (or put TLS in a proxy in front)"
        )
    if workers == 1 and isinstance(server, str):
        from ._worker_spec import server_ref

        server = server_ref(server).load()
    if workers > 1:
        await _serve_workers(
            server,
            host,
            port,
            workers=workers,
            front_end=front_end,
            http11_limits=http11_limits,
            graceful_timeout=graceful_timeout,
            backlog=backlog,
            shutdown_trigger=shutdown_trigger,
            config=config,
            task_status=task_status,
            app_options=app_options,
        )
        return
    assert not isinstance(server, str)
    if "origin_policy" not in app_options and not is_loopback(host):
        # Serving other names is a deliberate choice; Host checks would refuse them.
        app_options["origin_policy"] = OriginPolicy.off()
    app = McpAsgiApp(server, **app_options)
    if front_end == "httptools":
        await _serve_httptools(
            app,
            host,
            port,
            limits=http11_limits,
            graceful_timeout=graceful_timeout,
            backlog=backlog,
            shutdown_trigger=shutdown_trigger,
            config=config,
            task_status=task_status,
        )
        return
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


async def _serve_httptools(
    app: McpAsgiApp,
    host: str,
    port: int,
    *,
    limits: Http11Limits | None,
    graceful_timeout: float,
    backlog: int,
    shutdown_trigger: Callable[[], Awaitable[Any]] | None,
    config: Config | None,
    task_status: trio.TaskStatus[int],
) -> None:
    from ._http11_serve import serve_http11

    async def trigger() -> None:
        if shutdown_trigger is None:
            await trio.sleep_forever()
        await shutdown_trigger()
        log.info("shutting down (deadline %s s)", graceful_timeout)
        app.begin_shutdown(grace=graceful_timeout)

    # As on Hypercorn: the app runs first, so that what cannot start is raised before the
    # port is bound.
    async with app.running():
        listeners = await _listeners(host, port, backlog, config)
        bound = listeners[0].socket.getsockname()[1]
        async with trio.open_nursery() as nursery:
            await nursery.start(
                partial(
                    serve_http11,
                    app,
                    listeners,
                    shutdown_trigger=trigger,
                    shutdown_deadline=graceful_timeout + ANSWER_TIME,
                    limits=limits,
                )
            )
            task_status.started(bound)


async def _listeners(
    host: str, port: int, backlog: int, config: Config | None
) -> list[trio.SocketListener]:
    """The listening sockets: ``config``'s bind when it has one (``fd://N``: that
    descriptor, taken over), else ``host:port``."""
    bind = config.bind if config is not None else []
    if bind and bind != ["127.0.0.1:8000"]:
        if len(bind) != 1:
            raise ValueError(f"front_end='httptools' listens on one bind, not {bind!r}")
        where = bind[0]
        if where.startswith("fd://"):
            sock = socket.socket(fileno=int(where[len("fd://") :]))
            sock.listen(backlog)
            return [trio.SocketListener(trio.socket.from_stdlib_socket(sock))]
        parts = urlsplit(f"//{where}")
        if parts.hostname is None or parts.port is None:
            raise ValueError(f"config.bind {where!r} is not host:port or fd://N")
        host, port = parts.hostname, parts.port
    return await trio.open_tcp_listeners(port, host=host, backlog=backlog)


async def _serve_workers(
    server: Server | str,
    host: str,
    port: int,
    *,
    workers: int,
    front_end: FrontEnd,
    http11_limits: Http11Limits | None,
    graceful_timeout: float,
    backlog: int,
    shutdown_trigger: Callable[[], Awaitable[Any]] | None,
    config: Config | None,
    task_status: trio.TaskStatus[int],
    app_options: AppOptions,
) -> None:
    from ._worker_spec import WorkerSpec, server_ref
    from ._workers import serve_workers

    spec = WorkerSpec(
        server=server_ref(server),
        host=host,
        port=port,
        front_end=front_end,
        http11_limits=http11_limits,
        graceful_timeout=graceful_timeout,
        backlog=backlog,
        config=config,
        app_options=dict(app_options),
        sys_path=list(sys.path),
        log_level=logging.getLogger("trio_mcp").getEffectiveLevel(),
    )
    spec.dumps()  # refuses options that cannot reach the workers, before anything starts
    await serve_workers(
        spec,
        workers,
        answer_time=ANSWER_TIME,
        shutdown_trigger=shutdown_trigger,
        task_status=task_status,
    )
