"""Chapter 6: errors in concurrent code. When a task in a nursery fails, the nursery
cancels its siblings, waits for them, and raises an ``ExceptionGroup``; ``except*`` takes
it apart. To let every call finish and still see all the failures, catch in each task and
raise one group at the end.

Run it: ``python examples/course/06_errors.py`` (see docs/course/06-errors.md)
"""

from __future__ import annotations

import trio
import trio.testing

from trio_mcp import Client, McpError, Server
from trio_mcp.testing import connect

server = Server("fetcher")
URLS = {"bad://a": 1, "bad://b": 2, "good://c": 3}  # url -> seconds to fetch it


@server.tool()
async def fetch(url: str) -> str:
    """Fetch a URL; the bad:// ones fail."""
    try:
        await trio.sleep(URLS[url])
    except trio.Cancelled:
        print(f"  [server] fetch {url} cancelled at t={trio.current_time():.0f}")
        raise
    if url.startswith("bad:"):
        raise McpError(f"cannot fetch {url}", code=-32000)  # a JSON-RPC error
    return f"{url}: ok"


async def fail_fast(client: Client) -> None:
    try:
        async with trio.open_nursery() as nursery:
            for url in URLS:
                nursery.start_soon(client.call_tool, "fetch", {"url": url})
    except* McpError as group:
        errors = [str(e) for e in group.exceptions]
        print(f"fail fast: {len(errors)} error(s):", errors)


async def collect_all(client: Client) -> None:
    errors: list[McpError] = []

    async def one(url: str) -> None:
        try:
            await client.call_tool("fetch", {"url": url})
        except McpError as error:
            errors.append(error)

    try:
        async with trio.open_nursery() as nursery:
            for url in URLS:
                nursery.start_soon(one, url)
        if errors:
            raise ExceptionGroup(f"{len(errors)} fetches failed", errors)
    except* McpError as group:
        print(f"collect all: {group.message}:", sorted(str(e) for e in group.exceptions))


async def main() -> None:
    async with connect(server) as client:
        await fail_fast(client)
        await collect_all(client)


if __name__ == "__main__":
    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
