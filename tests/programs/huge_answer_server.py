"""A trio_mcp server for stdio tests: ``huge`` answers with one line of about 5,000,000
bytes (past the default 4 MiB line limit); ``echo`` answers small."""

import trio_mcp

server = trio_mcp.Server("huge")


@server.tool()
async def huge() -> str:
    return "x" * 5_000_000


@server.tool()
async def echo(text: str) -> str:
    return text


if __name__ == "__main__":
    trio_mcp.run(server)
