"""A trio_mcp Session served over this process's stdio: answers ``tools/call`` by echoing
its ``text`` argument. Prints to stdout on purpose while serving: the server stream must
send that to stderr instead of corrupting the JSON-RPC."""

from typing import Any

import trio

from trio_mcp.protocol import Connection
from trio_mcp.session import Session, open_session
from trio_mcp.transports import open_stdio_server_stream
from trio_mcp.types import Implementation, ServerCapabilities, ToolsCapability


async def handle(session: Session, request: Any) -> Any:
    print("a stray print while handling", request.method)
    text = request.raw_params["arguments"]["text"]
    return {"content": [{"type": "text", "text": text}]}


async def main() -> None:
    async with open_stdio_server_stream() as stream:
        print("a stray print while serving")
        connection = Connection(
            "server",
            info=Implementation(name="session-peer", version="0"),
            capabilities=ServerCapabilities(tools=ToolsCapability()),
        )
        async with open_session(stream, connection, handler=handle) as session:
            await session.wait_finished()
    print("stdout is back after the stream closed")


trio.run(main)
