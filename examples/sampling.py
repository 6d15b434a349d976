"""Sampling: a tool asks the client's language model for a completion, optionally
offering tools the model may use (when the client declared ``sampling.tools``).

Run it: ``python examples/sampling.py``
"""

from __future__ import annotations

import trio

from trio_mcp import Context, Server
from trio_mcp.testing import connect
from trio_mcp.types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    TextContent,
    Tool,
    ToolUseContent,
)

server = Server("writer")


@server.tool()
async def haiku(topic: str, ctx: Context) -> str:
    """Write a haiku with the client's model."""
    result = await ctx.sample(
        f"Write a haiku about {topic}.", max_tokens=60, system_prompt="You are a poet."
    )
    assert isinstance(result.content, TextContent)
    return f"{result.content.text} (by {result.model})"


@server.tool()
async def plan_trip(city: str, ctx: Context) -> str:
    """Let the model decide whether it needs the weather."""
    weather = Tool(
        name="get_weather",
        description="Current weather for a city",
        input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
    )
    result = await ctx.sample(f"Plan a day in {city}.", max_tokens=100, tools=[weather])
    if isinstance(result.content, ToolUseContent):
        return f"the model wants {result.content.name}({result.content.input})"
    return "the model answered directly"


async def model(params: CreateMessageRequestParams) -> CreateMessageResult:
    """The client side: a real client calls its LLM here (after asking the user)."""
    prompt = params.messages[-1].content
    assert isinstance(prompt, TextContent)
    print(f"  [client] sampling {prompt.text!r} (max {params.max_tokens} tokens)")
    if params.tools:
        use = ToolUseContent(id="call-1", name=params.tools[0].name, input={"city": "Kyoto"})
        return CreateMessageResult(
            role="assistant", content=use, model="toy-1", stop_reason="toolUse"
        )
    text = TextContent(text="Old pond / a frog jumps in / sound of water")
    return CreateMessageResult(role="assistant", content=text, model="toy-1", stop_reason="endTurn")


async def main() -> None:
    for version in ["2025-11-25", "2026-07-28"]:
        print(f"{version}:")
        async with connect(
            server, protocol_version=version, sampling=model, sampling_tools=True
        ) as client:
            print("  ->", (await client.call_tool("haiku", {"topic": "frogs"})).content[0].text)  # type: ignore[union-attr]
            print("  ->", (await client.call_tool("plan_trip", {"city": "Kyoto"})).content[0].text)  # type: ignore[union-attr]


if __name__ == "__main__":
    trio.run(main)
