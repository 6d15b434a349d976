"""A trio_mcp server for the CLI's --env and --cwd: it reports a variable and its directory."""

import os

import trio_mcp

server = trio_mcp.Server("env")


@server.tool()
def getenv(name: str) -> str:
    """The value of an environment variable, or (unset)."""
    return os.environ.get(name, "(unset)")


@server.tool()
def cwd() -> str:
    """The server's working directory."""
    return os.getcwd()


if __name__ == "__main__":
    trio_mcp.run(server)
