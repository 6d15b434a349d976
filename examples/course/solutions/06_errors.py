"""Chapter 6, exercise: each fetch gets its own 5 s deadline; every failure is collected, and
two ``except*`` clauses handle the two kinds: the server's errors and our timeouts.

Run it: ``python examples/course/solutions/06_errors.py``
"""

from __future__ import annotations

import trio
import trio.testing

from trio_mcp import McpError, Server
from trio_mcp.testing import connect

server = Server("fetcher")
URLS = {"bad://a": 1, "good://b": 2, "slow://c": 3600}  # url -> seconds to fetch it


@server.tool()
async def fetch(url: str) -> str:
    """Fetch a URL; the bad:// ones fail."""
    await trio.sleep(URLS[url])
    if url.startswith("bad:"):
        raise McpError(f"cannot fetch {url}", code=-32000)
    return f"{url}: ok"


async def main() -> None:
    async with connect(server) as client:
        errors: list[Exception] = []

        async def one(url: str) -> None:
            try:
                with trio.fail_after(5):  # this call's own deadline
                    result = await client.call_tool("fetch", {"url": url})
                print(result.content[0].text)  # type: ignore[union-attr]
            except (McpError, trio.TooSlowError) as error:
                errors.append(error)

        try:
            async with trio.open_nursery() as nursery:
                for url in URLS:
                    nursery.start_soon(one, url)
            if errors:
                raise ExceptionGroup("some fetches failed", errors)
        except* McpError as group:
            print("server errors:", [str(e) for e in group.exceptions])
        except* trio.TooSlowError as group:
            print(f"timeouts: {len(group.exceptions)} at t={trio.current_time():.0f}")


if __name__ == "__main__":
    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
