"""Pagination and caching.

Lists come in pages with opaque cursors (``list_tools()`` follows them all;
``list_tools_page(cursor)`` fetches one). Modern results carry ``ttlMs``: the
client serves a fresh result from its cache instead of asking again, until the
TTL passes or a change notification says the list changed. Freshness runs on
Trio's clock, so this example moves time with a ``MockClock`` instead of
waiting.

Run it: ``python examples/pagination_caching.py``
"""

from __future__ import annotations

import trio
import trio.testing

from trio_mcp import Server
from trio_mcp.testing import connect

server = Server("catalog", page_size=3, cache_ttl_ms=60_000)
for number in range(7):
    server.add_tool(lambda number=number: str(number), name=f"tool_{number}")


async def main() -> None:
    async with connect(server, protocol_version="2026-07-28") as client:
        page = await client.list_tools_page()
        print("first page:", [t.name for t in page.tools], "next cursor:", page.next_cursor)
        print("all tools:", [t.name for t in await client.list_tools()])
        assert client.cache is not None
        await client.list_tools()
        print(f"second listing came from the cache: {client.cache.hits} hits")
        await trio.sleep(61)  # on the mock clock: instant
        await client.list_tools()
        print(f"after 61 s the pages were stale and fetched again: {client.cache.misses} misses")


if __name__ == "__main__":
    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
