"""A :class:`~trio_mcp.Client` for a server run as a child process over stdio.

The process transport (and :mod:`shlex`) are imported when a client first spawns:
:mod:`trio_mcp` re-exports this module, and a server program never spawns (start-up
time).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, Unpack

import trio

from .._transports._process_options import ProcessOptions
from .._util import open_nursery_unwrapped
from . import _lazy
from ._client import Client, connect_client
from ._options import ClientOptions

__all__ = ["StdioClientOptions", "connect_stdio_client", "open_stdio_client"]


#: The options :func:`connect_stdio_client` hands to the process; the others go to the client.
_PROCESS_OPTIONS = ProcessOptions.__optional_keys__


def _argv(command: str | Sequence[str | os.PathLike[str]]) -> list[str]:
    if isinstance(command, str):
        return _lazy.shlex.split(command)
    return [os.fspath(part) for part in command]


class StdioClientOptions(ProcessOptions, ClientOptions, total=False):
    """The keyword options of :func:`open_stdio_client` and :func:`connect_stdio_client`:
    the child process's (:class:`~trio_mcp.transports.ProcessOptions`) and the client's
    (:class:`~trio_mcp.client.ClientOptions`)."""


async def connect_stdio_client(
    nursery: trio.Nursery,
    command: str | Sequence[str | os.PathLike[str]],
    **options: Unpack[StdioClientOptions],
) -> Client:
    """Start ``command`` and open a :class:`~trio_mcp.Client` to it; the child and the
    session run in ``nursery`` (yours).

    ``command`` is an argument list, or a string split like a shell would
    (no shell runs it). The child gets a small safe environment plus ``env``,
    runs in its own process group, and its stderr lines go to ``stderr`` (or
    the ``logging`` module). The other options are
    :func:`~trio_mcp.connect_client`'s; the command line keys the era
    cache.

    Closing the client runs the shutdown ladder: close the child's stdin →
    ``grace`` seconds → SIGTERM to its process group → ``grace`` → SIGKILL →
    reap. It runs shielded, so cancelling the caller does not skip it.
    ``grace=0`` signals at once; ``grace=math.inf`` waits for a clean exit forever.
    ``kill_timeout`` bounds the wait for the process group to be gone after SIGKILL
    (only an unkillable process, one stuck in the kernel, takes that long).
    ``exit_wait``, ``stderr_tail_lines``, ``stderr_rate`` (the most stderr lines a second
    handed on; past it they are counted and dropped), ``max_message_size`` and ``send_buffer`` are
    :func:`~trio_mcp.transports.open_process_stream`'s, which says their defaults
    (``grace`` and ``kill_timeout``: 2 s).

    If the child dies or closes its stdout, every pending call fails at once with
    :exc:`~trio_mcp.ConnectionClosed`, carrying its exit status and the end of its stderr.
    Cancelling ``nursery`` also runs the ladder: the nursery does not exit until the
    child is reaped.
    """
    argv = _argv(command)
    client_options: dict[str, Any] = dict(options)
    process_options = {k: client_options.pop(k) for k in _PROCESS_OPTIONS if k in client_options}
    stream = await _lazy.connect_process_stream(nursery, argv, **process_options)
    client_options.setdefault("peer", _lazy.shlex.join(argv))
    try:
        return await connect_client(nursery, stream, **client_options)
    except BaseException:
        # unbounded shield: the process stream's shutdown ladder bounds it
        # (2 * grace + kill_timeout)
        with trio.CancelScope(shield=True):
            await stream.aclose()
        raise


@asynccontextmanager
async def open_stdio_client(
    command: str | Sequence[str | os.PathLike[str]], **options: Unpack[StdioClientOptions]
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
        client = await connect_stdio_client(nursery, command, **options)
        try:
            yield client
        finally:
            await client.aclose()
