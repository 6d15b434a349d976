"""The tutorial's client: start examples/first_server.py as a child process, talk to it over
its stdin and stdout, give up on a slow call, and close it.

Run it: ``python examples/first_client.py``
"""

from __future__ import annotations

import sys
from pathlib import Path

import trio

from trio_mcp import open_stdio_client
from trio_mcp.types import TextContent, TextResourceContents

SERVER = [sys.executable, str(Path(__file__).with_name("first_server.py"))]


async def main() -> None:
    async with open_stdio_client(SERVER) as client:
        print(f"connected: {client.era} era, protocol {client.protocol_version}")
        for tool in await client.list_tools():
            print(f"tool {tool.name}: {tool.description}")

        result = await client.call_tool("define", {"term": "nursery"})
        for block in result.content:
            if isinstance(block, TextContent):
                print("define nursery ->", block.text)
        missing = await client.call_tool("define", {"term": "event loop"})
        print("define 'event loop' -> is_error:", missing.is_error)

        terms = await client.read_resource("glossary://terms")
        for contents in terms.contents:
            if isinstance(contents, TextResourceContents):
                print("terms ->", contents.text.splitlines())
        prompt = await client.get_prompt("explain", {"term": "checkpoint"})
        print("prompt ->", len(prompt.messages), "message(s) for the model")

        with trio.move_on_after(0.5) as scope:
            await client.call_tool("nap", {"seconds": 3600})
        print("gave up on nap:", scope.cancelled_caught)
        print("still answering:", not (await client.call_tool("nap", {"seconds": 0})).is_error)
    print("closed: the server process has exited and been reaped")


if __name__ == "__main__":
    trio.run(main)
