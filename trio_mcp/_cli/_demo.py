"""``trio-mcp demo``: start the everything server over stdio and show a tour of MCP."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import trio

from .._client._stdio import open_stdio_client
from .._types._content import TextContent
from .._types._elicitation import ElicitRequestFormParams, ElicitRequestURLParams, ElicitResult
from .._types._sampling import CreateMessageRequestParams, CreateMessageResult
from ._output import describe_block, one_line

_DEFAULT_SERVER = Path(__file__).resolve().parents[2] / "examples" / "everything_server.py"


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
    script = Path(args.server) if args.server else _DEFAULT_SERVER
    if not script.exists():
        from ._main import CliError

        raise CliError(
            f"no server script at {script} (run from a clone of trio_mcp, or pass --server)"
        )
    options = {"protocol_version": args.protocol_version} if args.protocol_version else {}
    print(f"Starting {script.name} over stdio...")
    async with open_stdio_client(
        [sys.executable, str(script)],
        grace=args.shutdown_grace,
        elicitation=_elicit,
        sampling=_sample,
        roots=_roots,
        **options,
    ) as client:
        server = client.server_info
        name = server.name if server else "a server"
        print(f"Connected to {name}: protocol {client.protocol_version} ({client.era} era)")
        tools = await client.list_tools()
        print(f"\n{len(tools)} tools:")
        for tool in tools:
            print(f"  {tool.name:28} {one_line(tool.description, 60)}")
        resources = await client.list_resources()
        templates = await client.list_resource_templates()
        prompts = await client.list_prompts()
        print(f"\n{len(resources)} resources, {len(templates)} templates; {len(prompts)} prompts")
        names = {tool.name for tool in tools}
        for name, arguments in (
            ("echo", {"text": "Hello from trio-mcp!"}),
            ("add", {"a": 2, "b": 3}),
        ):
            if name in names:
                result = await client.call_tool(name, arguments)
                print(f"\ncall {name}({arguments}) ->")
                for block in result.content:
                    print(f"  {describe_block(block)}")
        for name in ("long_operation", "ask_user", "summarize"):
            if name in names:
                print(f"\ncall {name} ->")
                result = await client.call_tool(
                    name,
                    {},
                    on_progress=lambda p: print(f"    progress {p.progress}/{p.total or '?'}"),
                )
                for block in result.content:
                    print(f"  {describe_block(block)}")
        if resources:
            first = resources[0]
            contents = (await client.read_resource(first.uri)).contents
            text = getattr(contents[0], "text", None) if contents else None
            print(f"\nread {first.uri} -> {one_line(text, 60) if text is not None else '(binary)'}")
        print("\nClosing: stdin closes, the server drains and exits.")
    print("Done.")
    return 0


async def _roots() -> list[object]:
    from .._types._roots import Root

    await trio.lowlevel.checkpoint()
    return [Root(uri=Path.cwd().as_uri(), name="current directory")]
