"""The tutorial's server: a glossary of Trio terms, with one tool to look a term up, one
that takes its time, a resource listing every term, and a prompt.

Run it over stdio (how MCP clients start local servers)::

    python examples/first_server.py

or over Streamable HTTP on 127.0.0.1 until Ctrl-C::

    python examples/first_server.py --http 8000

See docs/tutorial/first-server.md.
"""

from __future__ import annotations

import signal
import sys

import trio

import trio_mcp
from trio_mcp import Server, ToolError

server = Server("glossary", version="1.0")

GLOSSARY = {
    "nursery": "A block that owns tasks: it does not end until every task in it has ended.",
    "cancel scope": "A block whose code can be cancelled, by a deadline or by calling cancel().",
    "checkpoint": "A point where a task may be cancelled or let other tasks run: every await "
    "of a Trio operation.",
}


@server.tool()
def define(term: str) -> str:
    """Look up a Trio term."""
    try:
        return GLOSSARY[term.lower()]
    except KeyError:
        raise ToolError(f"no entry for {term!r}; try one of {sorted(GLOSSARY)}") from None


@server.tool()
async def nap(seconds: float) -> str:
    """Sleep, then say so (a stand-in for slow work)."""
    await trio.sleep(seconds)
    return f"slept {seconds} s"


@server.resource("glossary://terms", mime_type="text/plain")
def terms() -> str:
    """Every term in the glossary, one per line."""
    return "\n".join(sorted(GLOSSARY))


@server.prompt()
def explain(term: str) -> str:
    """Ask the model to explain a term to a newcomer."""
    definition = GLOSSARY.get(term.lower(), "(not in the glossary)")
    return f"Explain the Trio term {term!r} to a Python programmer new to Trio.\n{definition}"


async def until_ctrl_c() -> None:
    """Return at the first SIGINT (Ctrl-C) or SIGTERM."""
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for _ in signals:
            return


def serve_over_http(argv: list[str]) -> None:
    """``--http PORT``: serve Streamable HTTP on 127.0.0.1 until Ctrl-C."""
    import argparse

    parser = argparse.ArgumentParser(
        description="The tutorial's glossary server: over stdio without arguments, or over "
        "Streamable HTTP on 127.0.0.1 with --http."
    )
    parser.add_argument("--http", type=int, required=True, metavar="PORT", help="the port")
    port = parser.parse_args(argv).http
    from trio_mcp.http import serve  # needs the http extra

    print(f"serving http://127.0.0.1:{port}/mcp; Ctrl-C stops", file=sys.stderr)
    trio.run(lambda: serve(server, "127.0.0.1", port, shutdown_trigger=until_ctrl_c))


if __name__ == "__main__":
    if len(sys.argv) == 1:
        trio_mcp.run(server)  # stdio: how MCP clients start a local server
    else:
        serve_over_http(sys.argv[1:])
