"""A server whose `crash` tool kills the process; it counts its starts in a file."""

import os
import sys
from pathlib import Path

import trio_mcp

counter = Path(sys.argv[1])
starts = int(counter.read_text()) + 1 if counter.exists() else 1
counter.write_text(str(starts))

server = trio_mcp.Server("crashy")


@server.tool()
async def starts_so_far() -> int:
    return starts


@server.tool()
async def crash() -> str:
    os._exit(7)


if __name__ == "__main__":
    trio_mcp.run(server)
