"""Prompts: message templates a user picks (a slash command, say), with string
arguments. A missing required argument is an "invalid params" error.

Run it: ``python examples/prompts.py``
"""

from __future__ import annotations

from typing import Annotated

import trio

from trio_mcp import McpError, Server
from trio_mcp.testing import connect
from trio_mcp.types import EmbeddedResource, PromptMessage, TextContent, TextResourceContents

server = Server("reviews")


@server.prompt(title="Request a code review")
def code_review(code: Annotated[str, "The code to review"], language: str | None = None) -> str:
    """Asks the model to review code."""
    return f"Please review this {language or 'code'}:\n{code}"


@server.prompt()
def explain_file(path: str) -> list[PromptMessage]:
    """A conversation with the file embedded in it."""
    contents = TextResourceContents(
        uri=f"file:///{path}", text="print('hi')", mime_type="text/x-python"
    )
    return [
        PromptMessage(role="user", content=TextContent(text=f"What does {path} do?")),
        PromptMessage(role="user", content=EmbeddedResource(resource=contents)),
        PromptMessage(role="assistant", content=TextContent(text="Let me look at it.")),
    ]


async def main() -> None:
    async with connect(server) as client:
        for prompt in await client.list_prompts():
            arguments = [(a.name, a.required) for a in prompt.arguments or []]
            print(f"prompt {prompt.name}: {prompt.description} {arguments}")
        review = await client.get_prompt("code_review", {"code": "x = 1", "language": "Python"})
        print("code_review ->", review.messages[0].content.text)  # type: ignore[union-attr]
        explained = await client.get_prompt("explain_file", {"path": "hello.py"})
        for message in explained.messages:
            print(f"  {message.role}: {message.content.type}")
        try:
            await client.get_prompt("code_review")
        except McpError as exc:
            print(f"missing argument -> error {exc.code}: {exc.message}")


if __name__ == "__main__":
    trio.run(main)
