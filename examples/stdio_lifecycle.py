"""A stdio server's life, seen from the client that runs it: the environment it gets, its
stderr, a clean exit, and a crash.

This file is both sides: run without arguments it is the client, and it starts
itself with ``--serve`` as the server.

Run it: ``python examples/stdio_lifecycle.py``
"""

from __future__ import annotations

import os
import sys

import trio

import trio_mcp
from trio_mcp import ConnectionClosed, Server, open_stdio_client
from trio_mcp.transports import ProcessMessageStream

# -- the server (python examples/stdio_lifecycle.py --serve) --------------------------------

server = Server("lifecycle")


@server.tool()
def getenv(name: str) -> str:
    """A variable of the server's environment ('' if unset)."""
    return os.environ.get(name, "")


@server.tool()
def crash() -> str:
    """Write a last word to stderr and exit with status 3, mid-call."""
    print("lifecycle: something went badly wrong", file=sys.stderr, flush=True)
    os._exit(3)


# -- the client -----------------------------------------------------------------------------

SERVER = [sys.executable, __file__, "--serve"]


def show_stderr(line: str) -> None:
    """Called with each line the server writes to stderr (it must not block)."""
    print(f"  [server stderr] {line}")


async def main() -> None:
    os.environ["SECRET_TOKEN"] = "s3cret"  # ours: the server does not inherit it

    async with open_stdio_client(
        SERVER, env={"GREETING": "hello"}, grace=1.0, stderr=show_stderr
    ) as client:
        for name in ["GREETING", "SECRET_TOKEN"]:
            result = await client.call_tool("getenv", {"name": name})
            print(f"the server's {name}: {result.content[0].text!r}")  # type: ignore[union-attr]
        stream = client.session.stream
        assert isinstance(stream, ProcessMessageStream)
    print("closed cleanly: exit status", stream.returncode)

    async with open_stdio_client(SERVER, stderr=show_stderr) as client:
        try:
            await client.call_tool("crash")
        except ConnectionClosed as exc:
            print("crash -> ConnectionClosed: exit status", exc.returncode)
            print("  its stderr ended with:", exc.stderr_tail)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(
        description="Starts itself as a stdio server and shows its lifecycle: start, "
        "environment, a clean close, a crash."
    )
    parser.add_argument("--serve", action="store_true", help="be the server (as the demo runs it)")
    if parser.parse_args().serve:
        trio_mcp.run(server, drain_timeout=5)
    else:
        trio.run(main)
