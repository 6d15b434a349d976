"""A stand-in for ``examples/everything_server.py`` (not on main yet): a trio_mcp server
with a bit of everything the fuzzer can aim at: tools with and without structured
output, a slow tool (for cancellation), progress and logs, one that asks the client's
model (which our fuzzer never allows), resources, a template, prompts, completion, and
pages of two items so that pagination is exercised.

Run it as a stdio server (``python standin_everything.py``) or import ``server``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import attrs
import trio

import trio_mcp
from trio_mcp.server import Context, Server, ToolError
from trio_mcp.types import PromptMessage, TextContent

server = Server("standin-everything", version="1.0.0", page_size=2, cache_ttl_ms=1000)


@server.tool()
def echo(text: str) -> str:
    """Says the text back."""
    return text


@server.tool()
def add(a: int, b: int = 0) -> int:
    """Adds two numbers (structured output)."""
    return a + b


@attrs.define
class Forecast:
    city: str
    temperature: float
    conditions: Literal["sunny", "cloudy", "rain"]


@server.tool()
def forecast(city: str) -> Forecast:
    """A typed result with an outputSchema."""
    if not city:
        raise ToolError("Which city?")
    return Forecast(city=city, temperature=21.5, conditions="sunny")


@server.tool()
async def slow(seconds: float = 0.1) -> str:
    """Sleeps (at most a fifth of a second), then answers; cancellable."""
    await trio.sleep(min(max(seconds, 0.0), 0.2))
    return "done"


@server.tool()
async def long_task(steps: int, ctx: Context) -> str:
    """Reports progress and logs as it goes."""
    steps = min(max(steps, 0), 5)
    await ctx.info(f"starting {steps} steps")
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
    return f"finished {steps} steps"


@server.tool()
async def summarize(text: str, ctx: Context) -> str:
    """Asks the client's model (sampling): fails cleanly when the client cannot."""
    result = await ctx.sample(f"Summarize: {text}", max_tokens=20)
    return result.content.text if isinstance(result.content, TextContent) else ""


@server.resource("config://settings", mime_type="application/json")
def settings() -> dict[str, object]:
    return {"theme": "dark"}


@server.resource("memo://one", mime_type="text/plain")
def memo_one() -> str:
    return "the first memo"


@server.resource("memo://two", mime_type="text/plain")
def memo_two() -> str:
    return "the second memo"


@server.resource("greetings://{language}/{name}", mime_type="text/plain")
def greeting(language: Literal["en", "fr"], name: str) -> str:
    """A greeting in a language, for a name."""
    return {"en": "Hello", "fr": "Bonjour"}[language] + f", {name}!"


@server.prompt()
def code_review(code: str, language: str | None = None) -> list[PromptMessage]:
    """Asks for a review of some code."""
    return [PromptMessage(role="user", content=TextContent(text=f"Review this {language}: {code}"))]


@server.prompt()
def greet(name: str) -> str:
    """Greets someone."""
    return f"Say hello to {name}."


@server.prompt()
def haiku() -> str:
    """Asks for a haiku."""
    return "Write a haiku."


@server.completion(prompt="code_review", argument="language")
def complete_language(value: str, context: Mapping[str, str]) -> list[str]:
    return [name for name in ("python", "rust", "go") if name.startswith(value)]


if __name__ == "__main__":
    trio_mcp.run(server)
