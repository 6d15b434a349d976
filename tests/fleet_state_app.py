"""A fleet member for the tests: ``python tests/fleet_state_app.py STATE`` serves Streamable
HTTP on a free port of 127.0.0.1 as one worker of the fleet sharing STATE (a Redis URL, or
``-`` for none), and prints the port once it serves. Its tools raise changes (``touch``,
``grow``), ask for input in rounds (``confirm``) and echo (``echo``). A request's principal
is its ``x-user`` header, when it has one; ``FLEET_SESSIONS_PER_PRINCIPAL`` (environment)
sets ``max_sessions_per_principal``."""

from __future__ import annotations

import os
import sys
from functools import partial

import trio

from trio_mcp import Context, Server

STATE = None if sys.argv[1] == "-" else sys.argv[1]
KEY_REFRESH = float(sys.argv[2]) if len(sys.argv) > 2 else 10.0

server = Server("fleet-state", resources=True)
grown = 0


@server.resource("counter://value")
def counter() -> str:
    """A value that ``touch`` changes."""
    return "0"


@server.tool
def touch() -> str:
    """Say the counter changed (to its subscribers on every worker)."""
    server.notify_resource_updated("counter://value")
    return "touched"


@server.tool
def grow() -> str:
    """Add a tool (every worker's tools listeners hear that the list changed)."""
    global grown
    grown += 1
    server.add_tool(lambda: "extra", name=f"extra{grown}")
    return f"grew {grown}"


@server.tool
def echo(text: str) -> str:
    """Say ``text`` back."""
    return text


def principal(scope: dict[str, object]) -> str | None:
    """The ``x-user`` header of a request, if any."""
    headers = scope.get("headers")
    for name, value in headers if isinstance(headers, list) else ():
        if name == b"x-user":
            return str(value.decode())
    return None


@server.tool
async def confirm(ctx: Context) -> str:
    """Ask a yes/no question in an input round."""
    answer = await ctx.elicit("Go on?", {"properties": {"ok": {"type": "boolean"}}}, key="go")
    return f"confirmed: {(answer.content or {}).get('ok')}"


async def main() -> None:
    from trio_mcp.fleet import RedisState
    from trio_mcp.http import serve

    state = None if STATE is None else RedisState(url=STATE, key_refresh=KEY_REFRESH)
    async with trio.open_nursery() as nursery:
        port = await nursery.start(
            partial(
                serve,
                server,
                port=0,
                graceful_timeout=1,
                state=state,
                principal=principal,
                max_sessions_per_principal=int(
                    os.environ.get("FLEET_SESSIONS_PER_PRINCIPAL", "2000")
                ),
            )
        )
        print(port, flush=True)


if __name__ == "__main__":
    trio.run(main)
