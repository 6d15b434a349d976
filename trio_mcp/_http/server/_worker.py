"""One worker process of ``serve(workers=N)``: ``python -m trio_mcp._http.server._worker``.

It reads its :class:`WorkerSpec` from stdin (an 8-byte length, then the pickle), binds the
shared port with ``SO_REUSEPORT``, serves with :func:`serve` (the chosen front end on the
bound socket), tells the parent on its ready pipe, and shuts down gracefully when its
stdin closes: the parent's shutdown, or the parent's death.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
from functools import partial

import trio
from hypercorn.config import Config

from ..._server._internals import ServerInternals
from ._serve import serve
from ._worker_spec import WorkerSpec


def _read_exactly(fd: int, size: int) -> bytes:
    chunks = []
    while size:
        chunk = os.read(fd, size)
        if not chunk:
            raise EOFError("the parent closed stdin before sending the worker's spec")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _listening_socket(spec: WorkerSpec) -> socket.socket:
    family, kind, proto, _, address = socket.getaddrinfo(
        spec.host, spec.port, type=socket.SOCK_STREAM
    )[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(address)
    return sock


async def _until_stdin_closes() -> None:
    stdin = trio.lowlevel.FdStream(os.dup(0))
    async with stdin:
        while await stdin.receive_some(4096):
            pass


async def _serve(spec: WorkerSpec) -> None:
    server = spec.server.load()
    ServerInternals(server).share_drawn_secret(spec.secret)
    config = spec.config if spec.config is not None else Config()
    if spec.config is None:
        config.loglevel = "WARNING"
    # The front end takes the descriptor over (and closes it when it stops serving).
    config.bind = [f"fd://{_listening_socket(spec).detach()}"]
    async with trio.open_nursery() as nursery:
        await nursery.start(
            partial(
                serve,
                server,
                spec.host,
                spec.port,
                front_end="httptools" if spec.front_end == "httptools" else "hypercorn",
                http11_limits=spec.http11_limits,
                graceful_timeout=spec.graceful_timeout,
                backlog=spec.backlog,
                config=config,
                shutdown_trigger=_until_stdin_closes,
                **spec.app_options,
            )
        )
        os.write(spec.ready_fd, b"serving\n")
        os.close(spec.ready_fd)


def main() -> None:
    size = int.from_bytes(_read_exactly(0, 8), "big")
    spec = WorkerSpec.loads(_read_exactly(0, size))
    slot = sys.argv[1] if len(sys.argv) > 1 else "?"
    logging.basicConfig(
        level=spec.log_level,
        format=f"%(asctime)s worker {slot} (pid {os.getpid()}) %(name)s %(levelname)s: %(message)s",
    )
    trio.run(_serve, spec)


if __name__ == "__main__":
    main()
