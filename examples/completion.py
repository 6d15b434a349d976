"""Completion: suggestions while the user fills in a prompt argument or a template
variable. At most 100 values go back, with ``total`` and ``hasMore`` for the rest;
arguments already chosen arrive as context.

Run it: ``python examples/completion.py``
"""

from __future__ import annotations

from collections.abc import Mapping

import trio

from trio_mcp import Server
from trio_mcp.testing import connect
from trio_mcp.types import PromptReference, ResourceTemplateReference

FRAMEWORKS = {"python": ["flask", "fastapi", "django"], "rust": ["axum", "actix"]}

server = Server("completions")


@server.prompt()
def scaffold(language: str, framework: str) -> str:
    return f"Create a {framework} project in {language}."


@server.resource("issues://{number}")
def issue(number: int) -> str:
    return f"Issue #{number}"


@server.completion(prompt="scaffold", argument="language")
def languages(value: str, context: Mapping[str, str]) -> list[str]:
    return [name for name in FRAMEWORKS if name.startswith(value)]


@server.completion(prompt="scaffold", argument="framework")
def frameworks(value: str, context: Mapping[str, str]) -> list[str]:
    return [f for f in FRAMEWORKS.get(context.get("language", ""), []) if f.startswith(value)]


@server.completion(resource_template="issues://{number}", argument="number")
def issue_numbers(value: str, context: Mapping[str, str]) -> list[str]:
    return [str(n) for n in range(1, 1000) if str(n).startswith(value)]


async def main() -> None:
    async with connect(server) as client:
        prompt = PromptReference(name="scaffold")
        print("language 'py' ->", (await client.complete(prompt, "language", "py")).values)
        framework = await client.complete(prompt, "framework", "f", context={"language": "python"})
        print("framework 'f' (python) ->", framework.values)
        issues = await client.complete(
            ResourceTemplateReference(uri="issues://{number}"), "number", ""
        )
        shown = len(issues.values)
        print(f"issue numbers -> {shown} values, total={issues.total}, hasMore={issues.has_more}")


if __name__ == "__main__":
    trio.run(main)
