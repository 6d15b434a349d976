"""MCP over WebSocket: one JSON-RPC message per text frame, subprotocol ``mcp``. The server
serves each connection's session in a task of its own; the client is an ordinary Client.

Run it: ``python examples/websocket.py``
"""

from __future__ import annotations

from functools import partial

import trio

from trio_mcp import Server
from trio_mcp.websocket import open_websocket_client, serve_websocket

server = Server("ws-echo")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


async def main() -> None:
    async with trio.open_nursery() as nursery:
        port = await nursery.start(partial(serve_websocket, server, "127.0.0.1", 0))
        async with open_websocket_client(f"ws://127.0.0.1:{port}/") as client:
            result = await client.call_tool("echo", {"text": "over a WebSocket"})
            print(f"{client.era} era:", result.content[0].text)  # type: ignore[union-attr]
        nursery.cancel_scope.cancel()


if __name__ == "__main__":
    trio.run(main)
