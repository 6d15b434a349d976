"""Structured output: a tool that returns typed data gets an ``outputSchema``, and its
result carries ``structuredContent`` (plus the same JSON as text, for older clients).

The server checks what the tool returns against the schema before sending it,
and the client checks it again on arrival.

Run it: ``python examples/structured_output.py``
"""

from __future__ import annotations

import attrs
import trio

from trio_mcp import Server
from trio_mcp.testing import connect


@attrs.define
class Weather:
    """Current conditions."""

    temperature: float
    conditions: str
    humidity: int


server = Server("weather-data")


@server.tool()
async def current_weather(city: str) -> Weather:
    """Current weather data for a city."""
    return Weather(temperature=22.5, conditions="Partly cloudy", humidity=65)


@server.tool()
async def word_count(text: str) -> int:
    """Counts words (a non-object result is wrapped as {"result": ...})."""
    return len(text.split())


async def main() -> None:
    async with connect(server) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        print("outputSchema", tools["current_weather"].output_schema)
        result = await client.call_tool("current_weather", {"city": "Oslo"})
        print("structuredContent", result.structured_content)
        print("text content", result.content[0].text)  # type: ignore[union-attr]
        count = await client.call_tool("word_count", {"text": "one two three"})
        print("word_count", count.structured_content)


if __name__ == "__main__":
    trio.run(main)
