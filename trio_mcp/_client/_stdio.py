"""A :class:`~trio_mcp.Client` for a server run as a child process over stdio.

The process transport (and :mod:`shlex`) are imported when a client first spawns:
:mod:`trio_mcp` re-exports this module, and a server program never spawns (start-up
time).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import trio

from .._transports._lines import DEFAULT_MAX_MESSAGE_SIZE, DEFAULT_SEND_BUFFER
from .._transports._stderr import DEFAULT_STDERR_RATE, DEFAULT_STDERR_TAIL_LINES
from .._util import open_nursery_unwrapped
from . import _lazy
from ._client import Client, connect_client

__all__ = ["connect_stdio_client", "open_stdio_client"]


def _argv(command: str | Sequence[str | os.PathLike[str]]) -> list[str]:
    if isinstance(command, str):
        return _lazy.shlex.split(command)
    return [os.fspath(part) for part in command]


async def connect_stdio_client(
    nursery: trio.Nursery,
    command: str | Sequence[str | os.PathLike[str]],
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
    **client_options: Any,
) -> Client:
    """Start ``command`` and open a :class:`~trio_mcp.Client` to it; the child and the
    session run in ``nursery`` (yours).

    ``command`` is an argument list, or a string split like a shell would
    (no shell runs it). The child gets a small safe environment plus ``env``,
    runs in its own process group, and its stderr lines go to ``stderr`` (or
    the ``logging`` module). ``client_options`` are
    :func:`~trio_mcp.client.connect_client`'s; the command line keys the era
    cache.

    Closing the client runs the shutdown ladder: close the child's stdin →
    ``grace`` seconds → SIGTERM to its process group → ``grace`` → SIGKILL →
    reap. It runs shielded, so cancelling the caller does not skip it.
    ``grace=0`` signals at once; ``grace=math.inf`` waits for a clean exit forever.
    ``kill_timeout`` bounds the wait for the process group to be gone after SIGKILL
    (only an unkillable process, one stuck in the kernel, takes that long).
    ``exit_wait``, ``stderr_tail_lines``, ``stderr_rate`` (the most stderr lines a second
    handed on; past it they are counted and dropped), ``max_message_size`` and ``send_buffer`` are
    :func:`~trio_mcp.transports.open_process_stream`'s.

    If the child dies or closes its stdout, every pending call fails at once with
    :exc:`~trio_mcp.ConnectionClosed`, carrying its exit status and the end of its stderr.
    Cancelling ``nursery`` also runs the ladder: the nursery does not exit until the
    child is reaped.
    """
    argv = _argv(command)
    stream = await _lazy.connect_process_stream(
        nursery,
        argv,
        env=env,
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
    client_options.setdefault("peer", _lazy.shlex.join(argv))
    try:
        return await connect_client(nursery, stream, **client_options)
    except BaseException:
        with trio.CancelScope(shield=True):
            await stream.aclose()
        raise


@asynccontextmanager
async def open_stdio_client(
    command: str | Sequence[str | os.PathLike[str]],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    **options: Any,
) -> AsyncIterator[Client]:
    """A :class:`~trio_mcp.Client` to a server started as a child process, for the block.

    Entering starts the process and opens the client (era detection and
    handshake included). Leaving closes the session and runs the shutdown
    ladder (see :func:`connect_stdio_client`, whose options these are); the
    block does not end until the child and its process group are gone.

    ``env`` is added to a small safe environment
    (:func:`~trio_mcp.transports.default_environment`); ``cwd`` is the child's
    working directory.

    ::

        async with open_stdio_client(["python", "server.py"]) as client:
            print(await client.list_tools())

    Raises:
        FileNotFoundError: the command does not exist.
        ConnectionClosed: the server exited during the opening.
    """
    async with open_nursery_unwrapped() as nursery:
        client = await connect_stdio_client(nursery, command, env=env, cwd=cwd, **options)
        try:
            yield client
        finally:
            await client.aclose()
