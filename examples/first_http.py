"""The tutorial's server over Streamable HTTP: serve it on 127.0.0.1 in a task, connect a
client in each protocol era, then stop the server by cancelling its task.

Run it: ``python examples/first_http.py``
"""

from __future__ import annotations

from functools import partial

import trio
from first_server import server

from trio_mcp.http import open_http_client, serve
from trio_mcp.types import TextContent


async def main() -> None:
    async with trio.open_nursery() as nursery:
        port = await nursery.start(partial(serve, server, "127.0.0.1", 0))
        url = f"http://127.0.0.1:{port}/mcp"
        print("serving", url.replace(str(port), "PORT"))

        for version in [None, "2025-11-25"]:
            async with open_http_client(url, protocol_version=version) as client:
                result = await client.call_tool("define", {"term": "cancel scope"})
                [block] = result.content
                assert isinstance(block, TextContent)
                print(f"{client.era} era ({client.protocol_version}): {block.text}")

        nursery.cancel_scope.cancel()
    print("server stopped")


if __name__ == "__main__":
    trio.run(main)
