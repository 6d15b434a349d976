"""A trio_mcp server for stdio tests: echo, a slow tool, a tool that prints to stdout."""

import sys

import trio

import trio_mcp

server = trio_mcp.Server("slow")


@server.tool()
async def echo(text: str) -> str:
    return text


@server.tool()
async def slow(seconds: float) -> str:
    """Sleeps, then answers (stdin closing does not stop it)."""
    await trio.sleep(seconds)
    return f"slept {seconds}"


@server.tool()
async def chatty() -> str:
    """Prints to stdout: the output must not reach the protocol stream."""
    print("this would corrupt the protocol")
    sys.stdout.flush()
    return "ok"


if __name__ == "__main__":
    trio_mcp.run(server, drain_timeout=float(sys.argv[1]) if len(sys.argv) > 1 else 10.0)
