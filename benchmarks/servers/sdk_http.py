"""The official MCP SDK's low-level server (mcp 2.3.0) over Streamable HTTP on uvicorn, with
an echo tool (after /work/shared/bench/servers/sdk_http.py). Stateful: it answers both
eras. Usage: python sdk_http.py PORT"""

import sys

import mcp_types as types
import uvicorn
from mcp.server.lowlevel import Server

TOOL = types.Tool(
    name="echo",
    description="Echo the given text",
    input_schema={
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
)


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[TOOL])


async def call_tool(ctx, params):
    text = (params.arguments or {}).get("text", "")
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


if __name__ == "__main__":
    server = Server("sdk-lowlevel-http-echo", on_list_tools=list_tools, on_call_tool=call_tool)
    app = server.streamable_http_app()
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", access_log=False)
