"""``trio-mcp demo``: start the everything server over stdio and show a tour of MCP."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from .._client._stdio import open_stdio_client
from .._types._content import TextContent
from .._types._elicitation import ElicitRequestFormParams, ElicitRequestURLParams, ElicitResult
from .._types._sampling import CreateMessageRequestParams, CreateMessageResult
from . import _lazy
from ._errors import CliError
from ._output import describe_block, one_line

if TYPE_CHECKING:
    from .._types._roots import Root

#: The everything server shipped in the package (``examples/everything_server.py`` is its
#: readable copy), run as a module: it works from any install and any directory.
_DEFAULT_SERVER = "trio_mcp._everything_server"


async def _elicit(params: ElicitRequestFormParams | ElicitRequestURLParams) -> ElicitResult:
    """The demo's stand-in for a user: accepts, filling each field with its default."""
    if isinstance(params, ElicitRequestURLParams):
        print(f"    (the server asks to open {params.url}; the demo says yes)")
        return ElicitResult(action="accept")
    properties = params.requested_schema.get("properties", {})
    answer = {name: spec.get("default", "demo") for name, spec in properties.items()}
    print(f"    (the server asks: {params.message!r}; the demo answers {answer})")
    return ElicitResult(action="accept", content=answer)


async def _sample(params: CreateMessageRequestParams) -> CreateMessageResult:
    """The demo's stand-in for a model."""
    print("    (the server asks our model for a completion; the demo's model answers)")
    return CreateMessageResult(
        role="assistant", content=TextContent(text="A demo answer."), model="demo-model"
    )


async def run_demo(args: argparse.Namespace) -> int:
    if args.server:
        script = trio.Path(args.server)
        if not await script.exists():
            raise CliError(f"no server script at {script}")
        command, name = [sys.executable, str(script)], script.name
    else:
        command, name = [sys.executable, "-m", _DEFAULT_SERVER], "the everything server"
    options = {"protocol_version": args.protocol_version} if args.protocol_version else {}
    print(f"Starting {name} over stdio (its own process group)...")
    async with open_stdio_client(
        command,
        grace=args.shutdown_grace,
        elicitation=_elicit,
        sampling=_sample,
        roots=_roots,
        stderr=lambda line: None,
        **options,
    ) as client:
        server = client.server_info
        name = server.name if server else "a server"
        print(f"Connected to {name}: protocol {client.protocol_version} ({client.era} era)")
        tools = await client.list_tools()
        print(f"\n{len(tools)} tools:")
        for tool in tools:
            print(f"  {tool.name:20} {one_line(tool.description, 66)}")
        resources = await client.list_resources()
        templates = await client.list_resource_templates()
        prompts = await client.list_prompts()
        print(f"{len(resources)} resources, {len(templates)} templates, {len(prompts)} prompts")
        names = {tool.name for tool in tools}

        async def show(tool: str, arguments: dict[str, object], note: str) -> None:
            if tool not in names:
                return
            print(f"\n{note}\n  call {tool}({arguments})")
            result = await client.call_tool(
                tool,
                arguments,
                on_progress=lambda p: print(f"    progress {p.progress:g}/{p.total or 0:g}"),
            )
            for block in result.content:
                print(f"  -> {one_line(describe_block(block), 70)}")

        await show("echo", {"text": "Hello from trio-mcp!"}, "A plain tool:")
        await show(
            "forecast",
            {"city": "Lisbon"},
            "Structured output, checked against the tool's outputSchema:",
        )
        await show(
            "long_task", {"steps": 3}, "Progress notifications (a callback in the calling task):"
        )
        await show("register", {}, "The server asks the user (elicitation):")
        await show(
            "summarize",
            {"text": "Trio is a friendly async library."},
            "The server asks our model (sampling):",
        )
        await show("workspace", {}, "The server asks for our roots:")
        if "increment" in names and any(r.uri == "counter://value" for r in resources):
            print("\nA subscription: listen for updates to counter://value, then change it")
            async with client.listen(resource_uris=["counter://value"]) as changes:
                await client.call_tool("increment")
                with trio.move_on_after(5):
                    change = await changes.__anext__()
                    print(f"  -> notified: {change.uri} was updated")
            value = (await client.read_resource("counter://value")).contents[0]
            print(f"  -> it now reads {getattr(value, 'text', '?')}")
        if templates:
            uri = (
                "greetings://fr/Ada"
                if any("greetings" in t.uri_template for t in templates)
                else None
            )
            if uri:
                text = getattr((await client.read_resource(uri)).contents[0], "text", "?")
                print(f"\nA resource template: read {uri} -> {text}")
        if prompts:
            prompt = prompts[0]
            arguments = {a.name: "print('hi')" for a in prompt.arguments or [] if a.required}
            result = await client.get_prompt(prompt.name, arguments)
            print(f"\nA prompt: {prompt.name} -> {len(result.messages)} message(s)")
            completion = await client.complete(
                _lazy.PromptReference(name=prompt.name), "language", "py"
            )
            print(f"  completion of 'language' from 'py': {completion.values}")
        print("\nClosing: stdin closes, the server finishes what it was doing and exits.")
    print("Done.")
    return 0


async def _roots() -> list[Root]:
    await trio.lowlevel.checkpoint()
    return [_lazy.Root(uri=Path.cwd().as_uri(), name="current directory")]
