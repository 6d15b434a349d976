"""Running a :class:`~trio_mcp.Server` over this process's stdin and stdout.

There is one way to do it: :func:`run` (``trio_mcp.run(server)``), the one call a script
needs. :func:`run_stdio` is the same for a program already running Trio (``run`` runs it
under :func:`trio.run`), and :meth:`Server.run_stdio <trio_mcp.Server.run_stdio>`
is an alias of :func:`run_stdio`."""

from __future__ import annotations

import logging
import signal
import sys
import threading
from typing import TYPE_CHECKING, Unpack

import trio

from .._session._options import SessionSettings
from .._transports._lines import LineMessageStream
from .._transports._stdio_server import open_stdio_server_stream

if TYPE_CHECKING:
    from ._server import Server

__all__ = ["DEFAULT_DRAIN_TIMEOUT", "RunOptions", "run", "run_stdio"]

log = logging.getLogger("trio_mcp.server")

#: How long requests already running may go on after stdin ends (seconds).
DEFAULT_DRAIN_TIMEOUT = 10.0


class RunOptions(SessionSettings, total=False):
    """The keyword options of :func:`run` and :func:`run_stdio` (typed, so that a misspelt
    option is an error your type checker reports): ``handle_signals`` and the session's
    :class:`~trio_mcp.session.SessionSettings` (``drain_timeout`` among them)."""

    handle_signals: bool


async def run_stdio(
    server: Server,
    *,
    handle_signals: bool = True,
    **session_options: Unpack[SessionSettings],
) -> None:
    """Serve one client over stdin/stdout until stdin ends (or a signal arrives): what
    :func:`run` does, for a program already running Trio.

    Newline-delimited JSON goes to stdout and nothing else: while serving,
    file descriptor 1 points at stderr, so a stray ``print()`` cannot corrupt
    the protocol. Logs go to stderr.

    When stdin ends, the server stops reading; requests already running may
    finish and their answers are written, for at most ``drain_timeout``
    seconds (then they are cancelled); then it returns. So
    ``printf '...' | python server.py`` answers every request it was sent.

    When the client closes its end of stdout (it exited, or gave up on us),
    no answer can be read any more: running handlers are cancelled and it
    returns at once, whether stdin is still open or not, and whether or not
    anything was being written (see
    :meth:`~trio_mcp.transports.LineMessageStream.wait_reader_gone`; watched
    when stdout is a pipe, as it is under an MCP client). With
    ``handle_signals`` (in the main thread), SIGTERM or SIGINT cancels
    running handlers and returns promptly.

    Other options are the session's (:class:`~trio_mcp.session.SessionSettings`);
    ``drain_timeout`` is :data:`DEFAULT_DRAIN_TIMEOUT` (10 s) unless given.

    Blocks until then. Cancelling it cancels every handler.
    """
    session_options.setdefault("drain_timeout", DEFAULT_DRAIN_TIMEOUT)
    async with open_stdio_server_stream() as stream, trio.open_nursery() as nursery:
        if handle_signals and threading.current_thread() is threading.main_thread():
            await nursery.start(_cancel_on_signal, nursery.cancel_scope)
        nursery.start_soon(_cancel_when_client_gone, stream, nursery.cancel_scope)
        await server.serve(stream, **session_options)
        nursery.cancel_scope.cancel()


async def _cancel_on_signal(
    scope: trio.CancelScope, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
) -> None:
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        task_status.started()
        async for signum in signals:
            log.info("received %s: stopping", signal.Signals(signum).name)
            scope.cancel()
            return


async def _cancel_when_client_gone(stream: LineMessageStream, scope: trio.CancelScope) -> None:
    try:
        await stream.wait_reader_gone()
    except trio.ClosedResourceError:
        return
    log.info("the client closed our stdout: stopping")
    scope.cancel()


def run(server: Server, **options: Unpack[RunOptions]) -> None:
    """Run ``server`` over stdio until its client goes away: the one call a script needs,
    and the documented way to serve over stdio::

        if __name__ == "__main__":
            trio_mcp.run(server)

    ``options`` are :func:`run_stdio`'s (:class:`RunOptions`). Configures logging to
    stderr when the program has not configured logging itself, then runs
    :func:`run_stdio` under :func:`trio.run` (inside a Trio program, await that instead).
    """
    if not logging.getLogger().handlers:
        logging.basicConfig(
            level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
        )
    trio.run(lambda: run_stdio(server, **options))
