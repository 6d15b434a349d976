"""Serves normally, but lingers after stdin ends (so closing it needs the SIGTERM step)."""

import time

import trio_mcp

server = trio_mcp.Server("lingering")


@server.tool()
async def echo(text: str) -> str:
    return text


if __name__ == "__main__":
    trio_mcp.run(server)
    time.sleep(60)
