"""The official SDK (mcp 2.x) low-level server with one tool, ``echo(text)``, over stdio."""

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

ECHO = types.Tool(
    name="echo",
    description="Echo the text",
    input_schema={
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
)


async def list_tools(ctx, params):  # type: ignore[no-untyped-def]
    return types.ListToolsResult(tools=[ECHO])


async def call_tool(ctx, params):  # type: ignore[no-untyped-def]
    text = (params.arguments or {}).get("text", "")
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


server = Server("sdk-lowlevel-echo", version="0", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
