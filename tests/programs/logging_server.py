"""A server that appends the name of each tool it runs to a file (its own log of calls):
``peek`` (read-only), ``poke`` and ``forbidden``."""

import sys
from pathlib import Path

import trio_mcp
from trio_mcp.types import ToolAnnotations

calls = Path(sys.argv[1])
server = trio_mcp.Server("logging")


def record(name: str) -> None:
    with calls.open("a") as file:
        file.write(name + "\n")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def peek() -> str:
    record("peek")
    return "peeked"


@server.tool()
async def poke() -> str:
    record("poke")
    return "poked"


@server.tool()
async def forbidden() -> str:
    record("forbidden")
    return "done"


if __name__ == "__main__":
    trio_mcp.run(server)
