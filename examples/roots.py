"""Roots: the directories a client lets a server work in. A tool asks for them with
``ctx.list_roots()``; a client without a roots handler does not declare the
capability, and asking it fails with -32021 (``MissingRequiredClientCapability``),
which a tool may catch.

Run it: ``python examples/roots.py``
"""

from __future__ import annotations

import trio

from trio_mcp import Context, MissingRequiredClientCapability, Server
from trio_mcp.testing import connect
from trio_mcp.types import Root

server = Server("workspace")


@server.tool()
async def where_am_i(ctx: Context) -> str:
    """The workspace folders the client shares."""
    try:
        roots = await ctx.list_roots()
    except MissingRequiredClientCapability:
        return "this client shares no roots"
    return ", ".join(f"{root.name} ({root.uri})" for root in roots)


async def my_roots() -> list[Root]:
    return [
        Root(uri="file:///home/ada/project", name="project"),
        Root(uri="file:///home/ada/notes", name="notes"),
    ]


async def main() -> None:
    for version in ["2025-11-25", "2026-07-28"]:
        async with connect(server, protocol_version=version, roots=my_roots) as client:
            result = await client.call_tool("where_am_i")
            print(f"{version} ->", result.content[0].text)  # type: ignore[union-attr]
        async with connect(server, protocol_version=version) as client:
            result = await client.call_tool("where_am_i")
            print(f"{version} without roots ->", result.content[0].text)  # type: ignore[union-attr]


if __name__ == "__main__":
    trio.run(main)
