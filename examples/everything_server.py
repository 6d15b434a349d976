"""One server with every feature: tools (typed, structured, rich content, asking the
user, the model and the client's roots, progress and logs), resources (static,
templated, binary, a directory, one that changes), prompts, completion, a skill, a
view (MCP Apps) and the tool it renders, and tools that come and go.

This file is in two places, kept identical by a test: ``examples/everything_server.py``
to read, and ``trio_mcp/_everything_server.py``, shipped in the package, which is what
``trio-mcp demo`` runs (``python -m trio_mcp._everything_server``), from any install.

Import it and use ``server`` (``trio_mcp.testing.connect(server)`` in memory),
or run it: ``python examples/everything_server.py`` serves stdio,
``python examples/everything_server.py --http PORT`` Streamable HTTP (both eras, and the
legacy HTTP+SSE endpoint at ``/sse``, and its server card at ``/mcp/server-card``) on
127.0.0.1 until SIGTERM or Ctrl-C (port 0 picks a free one; the URL goes to stderr);
``--redis URL`` too makes it one worker of the fleet sharing that Redis.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Annotated, Literal

import attrs
import trio

import trio_mcp
from trio_mcp import Context, Server, ToolError
from trio_mcp.server import Field
from trio_mcp.skills import Skill
from trio_mcp.types import (
    Annotations,
    EmbeddedResource,
    ImageContent,
    PromptMessage,
    ResourceLink,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)

server = Server(
    "everything",
    version="1.0.0",
    title="Everything",
    instructions="A demonstration server: every MCP feature, each in its simplest form.",
    tools=True,
    resources=True,
    prompts=True,
    cache_ttl_ms=5_000,
)

# -- tools -----------------------------------------------------------------------------------


@server.tool(annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True))
def echo(text: Annotated[str, "What to say back"]) -> str:
    """Says the text back."""
    return text


@server.tool()
def add(a: int, b: Annotated[int, Field(description="The second number")] = 0) -> int:
    """Adds two numbers (structured output: {"result": a + b})."""
    return a + b


@attrs.define
class Forecast:
    city: str
    temperature: float
    conditions: Literal["sunny", "cloudy", "rain"]


@server.tool(title="Weather forecast")
def forecast(city: str) -> Forecast:
    """A typed result: the tool has an outputSchema and returns structuredContent."""
    if not city:
        raise ToolError("Which city?")
    return Forecast(city=city, temperature=21.5, conditions="sunny")


@server.tool()
def rich() -> list[object]:
    """Every kind of content block."""
    return [
        TextContent(text="some text", annotations=Annotations(audience=["user"], priority=0.9)),
        ImageContent.from_bytes(b"\x89PNG\r\n\x1a\n", "image/png"),
        ResourceLink(uri="config://settings", name="settings", mime_type="application/json"),
        EmbeddedResource(resource=TextResourceContents(uri="memo://1", text="an embedded memo")),
    ]


MAX_STEPS = 100


@server.tool()
async def long_task(
    steps: Annotated[int, Field(schema={"minimum": 0, "maximum": MAX_STEPS})], ctx: Context
) -> str:
    """Reports progress and logs as it goes."""
    # The Field's minimum and maximum are checked before this runs: steps is in range.
    await ctx.info(f"starting {steps} steps", logger="long_task")
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
    return f"finished {steps} steps"


@server.tool()
async def register(ctx: Context) -> str:
    """Asks the user for details (elicitation)."""
    answer = await ctx.elicit(
        "Who are you?",
        {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "role": {"type": "string", "enum": ["dev", "ops"], "default": "dev"},
            },
            "required": ["name"],
        },
    )
    if answer.action != "accept" or answer.content is None:
        return f"registration {answer.action}ed"
    return f"registered {answer.content['name']} ({answer.content.get('role', 'dev')})"


@server.tool()
async def summarize(text: str, ctx: Context) -> str:
    """Asks the client's model for a summary (sampling)."""
    result = await ctx.sample(f"Summarize in one line: {text}", max_tokens=50)
    return result.content.text if isinstance(result.content, TextContent) else "(no text)"


@server.tool()
async def workspace(ctx: Context) -> str:
    """Lists the client's roots."""
    return ", ".join(root.uri for root in await ctx.list_roots()) or "(no roots)"


@server.tool()
def toggle_bonus_tool() -> str:
    """Adds or removes the 'bonus' tool (clients that listen are told the list changed)."""
    if "bonus" in server.tools:
        server.remove_tool("bonus")
        return "bonus removed"
    server.add_tool(lambda: "a bonus!", name="bonus", description="Appears and disappears.")
    return "bonus added"


# -- resources -------------------------------------------------------------------------------

counter = {"value": 0}


@server.resource("config://settings", mime_type="application/json", title="Settings")
def settings() -> dict[str, object]:
    return {"theme": "dark", "language": "en"}


@server.resource("counter://value", mime_type="text/plain")
def counter_value() -> str:
    """A resource that changes: subscribe to it, then call increment."""
    return str(counter["value"])


@server.tool()
def increment() -> int:
    """Increments counter://value (subscribers are told it was updated)."""
    counter["value"] += 1
    server.notify_resource_updated("counter://value")
    return counter["value"]


@server.resource("image://pixel", mime_type="image/png")
def pixel() -> bytes:
    return b"\x89PNG\r\n\x1a\n"


@server.resource("greetings://{language}/{name}", mime_type="text/plain")
def greeting(language: Literal["en", "fr"], name: str) -> str:
    """A greeting in a language, for a name."""
    return {"en": "Hello", "fr": "Bonjour"}[language] + f", {name}!"


# The Python files beside this one, its own source among them.
server.add_directory(Path(__file__).parent, uri_prefix="source://", pattern="*.py")

# -- a skill (the Skills extension, io.modelcontextprotocol/skills, from 2026-07-28) -------

server.add_skills(
    Skill.from_files(
        "greeting",
        {
            "SKILL.md": "---\nname: greeting\ndescription: Greet a user in their language.\n"
            "---\n\nRead greetings://{language}/{name}; the languages are in languages.md.\n",
            "languages.md": "en, fr\n",
        },
    )
)

# -- a view (the MCP Apps extension, io.modelcontextprotocol/ui) ---------------------------


@server.app("ui://everything/forecast", prefers_border=True)
def forecast_view() -> str:
    """A card that shows a forecast (hosts render it in a sandboxed iframe)."""
    return (
        "<!DOCTYPE html><html><body><h1 id='city'></h1><p id='sky'></p><script>"
        "addEventListener('message', e => { const r = e.data?.params?.structuredContent;"
        " if (r) { city.textContent = r.city; sky.textContent = r.conditions; } });"
        "</script></body></html>"
    )


@server.tool(ui="ui://everything/forecast")
def show_forecast(city: str) -> Forecast:
    """The forecast for a city, shown in a card by hosts that render views."""
    return Forecast(city=city, temperature=21.5, conditions="sunny")


# -- prompts and completion -----------------------------------------------------------------


@server.prompt(title="Code review")
def code_review(code: str, language: str | None = None) -> list[PromptMessage]:
    """Asks for a review of some code."""
    return [
        PromptMessage(role="user", content=TextContent(text=f"Review this {language or 'code'}:")),
        PromptMessage(role="user", content=TextContent(text=code)),
    ]


LANGUAGES = ["python", "rust", "go", "typescript"]


@server.completion(prompt="code_review", argument="language")
def complete_language(value: str, context: Mapping[str, str]) -> list[str]:
    return [language for language in LANGUAGES if language.startswith(value)]


@server.completion(resource_template="greetings://{language}/{name}", argument="language")
def complete_greeting_language(value: str, context: Mapping[str, str]) -> list[str]:
    return [language for language in ("en", "fr") if language.startswith(value)]


async def serve_http(port: int, redis: str | None = None) -> None:
    # Imported here: a stdio server need not load the HTTP stack.
    from trio_mcp.cards import server_card
    from trio_mcp.http import serve

    # Its server card (SEP-2127) at /mcp/server-card, listed by /.well-known/mcp/catalog.json;
    # the app fills in the endpoints, at the URL each request reached.
    card = server_card(
        server,
        name="dev.trio-mcp/everything",
        description="A demonstration server: every MCP feature, each in its simplest form.",
    )
    async with trio.open_nursery() as nursery:
        bound = await nursery.start(
            partial(
                serve,
                server,
                port=port,
                shutdown_trigger=until_signalled,
                card=card,
                card_catalog=True,
                state=redis,
            )
        )
        print(f"everything server on http://127.0.0.1:{bound}/mcp", file=sys.stderr, flush=True)


async def until_signalled() -> None:
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for _ in signals:
            return


def main() -> None:
    """Over stdio without arguments; ``--http PORT`` serves Streamable HTTP."""
    if len(sys.argv) == 1:
        trio_mcp.run(server)
        return
    import argparse

    parser = argparse.ArgumentParser(
        description="The everything server: a little of every MCP feature, over stdio "
        "without arguments, or over Streamable HTTP on 127.0.0.1 with --http."
    )
    parser.add_argument("--http", type=int, required=True, metavar="PORT", help="the port")
    parser.add_argument(
        "--redis",
        metavar="URL",
        help="serve as one worker of the fleet sharing this Redis (redis://host:port/db): "
        "start several on other ports and any of them answers any request",
    )
    arguments = parser.parse_args()
    trio.run(serve_http, arguments.http, arguments.redis)


if __name__ == "__main__":
    main()
