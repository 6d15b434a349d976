"""Tools: typed Python functions the model can call.

The input schema comes from the type hints, arguments are checked against it,
and a tool that fails (bad arguments, an exception) answers with an error
*result* the model can read, never a crash.

Run it: ``python examples/tools.py``
"""

from __future__ import annotations

from typing import Annotated, Literal

import trio

from trio_mcp import Server, ToolError
from trio_mcp.testing import connect
from trio_mcp.types import ToolAnnotations

server = Server("weather", version="1.0")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def forecast(
    city: Annotated[str, "City name"],
    days: int = 3,
    units: Literal["celsius", "fahrenheit"] = "celsius",
) -> str:
    """The weather forecast for a city."""
    if city == "Atlantis":
        raise ToolError("Atlantis is under water: no forecast")
    return f"{city}: sunny for {days} days, 21 degrees {units}"


async def main() -> None:
    # connect() runs the server and a client in one nursery, joined in memory.
    async with connect(server) as client:
        for tool in await client.list_tools():
            print(f"tool {tool.name}: {tool.description}")
            print(f"  inputSchema {tool.input_schema}")
        result = await client.call_tool("forecast", {"city": "Oslo", "days": 2})
        print("call ->", result.content[0].text)  # type: ignore[union-attr]
        bad = await client.call_tool("forecast", {"city": "Oslo", "days": "two"})
        print(f"bad arguments -> isError={bad.is_error}: {bad.content[0].text}")  # type: ignore[union-attr]
        failed = await client.call_tool("forecast", {"city": "Atlantis"})
        print(f"tool error -> isError={failed.is_error}: {failed.content[0].text}")  # type: ignore[union-attr]


if __name__ == "__main__":
    trio.run(main)
