"""``trio-mcp``: list, call and read what an MCP server offers, from a shell.

Errors are one line on stderr and a non-zero exit, never a traceback for
something that can be expected (an unreachable server, an unknown tool, bad
JSON arguments, a server that crashed: then the line ends with the last line
it wrote to stderr).
"""

from __future__ import annotations

import argparse
import math
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import orjson
import trio

from .._errors import ConnectionClosed, McpError
from .._fuzz._runner import FuzzError
from .._types._content import TextResourceContents
from .._version import __version__
from ._demo import run_demo
from ._fuzz import add_fuzz_commands, run_fuzz, run_replay
from ._output import describe_block, one_line, print_json
from ._target import add_target_options, open_target

Command = Callable[[argparse.Namespace], Awaitable[int]]


class CliError(Exception):
    """An expected failure: printed as one line, exit status 1."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trio-mcp", description="Talk to MCP servers from a shell."
    )
    parser.add_argument("--version", action="version", version=f"trio-mcp {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    for name, help_text in (
        ("list-tools", "list the server's tools"),
        ("list-resources", "list the server's resources and resource templates"),
        ("list-prompts", "list the server's prompts"),
        ("info", "show what the server says about itself"),
    ):
        add_target_options(commands.add_parser(name, help=help_text, description=help_text))

    call = commands.add_parser(
        "call-tool", help="call a tool", description="Call a tool and print its result."
    )
    call.add_argument("name")
    call.add_argument("--args", default="{}", metavar="JSON", help="the arguments, a JSON object")
    add_target_options(call)

    read = commands.add_parser("read-resource", help="read a resource")
    read.add_argument("uri")
    add_target_options(read)

    prompt = commands.add_parser("get-prompt", help="get a prompt")
    prompt.add_argument("name")
    prompt.add_argument(
        "--args", default="{}", metavar="JSON", help="the arguments, a JSON object of strings"
    )
    add_target_options(prompt)

    demo = commands.add_parser(
        "demo",
        help="start the everything server over stdio and show what it does",
    )
    demo.add_argument(
        "--server",
        metavar="PATH",
        help="a server script to run instead of the everything server the package ships",
    )
    demo.add_argument("--protocol-version", metavar="V", help="speak this revision")
    demo.add_argument("--shutdown-grace", type=float, default=2.0, help=argparse.SUPPRESS)
    demo.add_argument("--timeout", type=float, default=60.0, help=argparse.SUPPRESS)

    add_fuzz_commands(commands)
    return parser


def _json_object(text: str, what: str) -> dict[str, Any]:
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise CliError(f"{what} is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise CliError(f"{what} must be a JSON object, not {type(value).__name__}")
    return value


# The list commands print nothing for what a server does not offer (no capability), rather
# than fail: "no prompts" is an answer. Asking for one named thing still fails (-32601).


async def _list_tools(args: argparse.Namespace) -> int:
    async with open_target(args) as client:
        tools = await client.list_tools() if client.server_capabilities.tools else []
    if args.json:
        print_json(tools)
        return 0
    for tool in tools:
        params = ", ".join(tool.input_schema.get("properties", {}))
        print(f"{tool.name}({params})  {one_line(tool.description)}".rstrip())
    return 0


async def _list_resources(args: argparse.Namespace) -> int:
    async with open_target(args) as client:
        resources = await client.list_resources() if client.server_capabilities.resources else []
        templates = (
            await client.list_resource_templates() if client.server_capabilities.resources else []
        )
    if args.json:
        print_json({"resources": resources, "resourceTemplates": templates})
        return 0
    for resource in resources:
        print(f"{resource.uri}  {resource.name}  {resource.mime_type or ''}".rstrip())
    for template in templates:
        print(f"{template.uri_template}  {template.name}  (template)")
    return 0


async def _list_prompts(args: argparse.Namespace) -> int:
    async with open_target(args) as client:
        prompts = await client.list_prompts() if client.server_capabilities.prompts else []
    if args.json:
        print_json(prompts)
        return 0
    for prompt in prompts:
        names = ", ".join(a.name + ("" if a.required else "?") for a in prompt.arguments or [])
        print(f"{prompt.name}({names})  {one_line(prompt.description)}".rstrip())
    return 0


async def _info(args: argparse.Namespace) -> int:
    async with open_target(args) as client:
        info = {
            "era": client.era,
            "protocolVersion": client.protocol_version,
            "serverInfo": client.server_info,
            "capabilities": client.server_capabilities,
            "instructions": client.instructions,
        }
    if args.json:
        print_json(info)
        return 0
    server = client.server_info
    print(f"server: {server.name if server else '?'} {server.version if server else ''}")
    print(f"protocol: {client.protocol_version} ({client.era} era)")
    if client.instructions:
        print(f"instructions: {one_line(client.instructions)}")
    return 0


async def _call_tool(args: argparse.Namespace) -> int:
    arguments = _json_object(args.args, "--args")
    async with open_target(args) as client:
        result = await client.call_tool(args.name, arguments)
    if args.json:
        print_json(result)
    else:
        for block in result.content:
            print(describe_block(block))
        if result.structured_content is not None and not result.content:
            print(orjson.dumps(result.structured_content).decode())
    if result.is_error:
        print(f"trio-mcp: tool {args.name} reported an error", file=sys.stderr)
        return 1
    return 0


async def _read_resource(args: argparse.Namespace) -> int:
    async with open_target(args) as client:
        result = await client.read_resource(args.uri)
    if args.json:
        print_json(result)
        return 0
    for contents in result.contents:
        if isinstance(contents, TextResourceContents):
            print(contents.text)
        else:
            print(f"[binary {contents.mime_type or ''}, {len(contents.blob) * 3 // 4} bytes]")
    return 0


async def _get_prompt(args: argparse.Namespace) -> int:
    arguments = _json_object(args.args, "--args")
    if not all(isinstance(v, str) for v in arguments.values()):
        raise CliError("prompt arguments are strings: --args must map names to strings")
    async with open_target(args) as client:
        result = await client.get_prompt(args.name, arguments)
    if args.json:
        print_json(result)
        return 0
    for message in result.messages:
        print(f"{message.role}: {describe_block(message.content)}")
    return 0


COMMANDS: dict[str, Command] = {
    "list-tools": _list_tools,
    "list-resources": _list_resources,
    "list-prompts": _list_prompts,
    "info": _info,
    "call-tool": _call_tool,
    "read-resource": _read_resource,
    "get-prompt": _get_prompt,
    "demo": run_demo,
    "fuzz": run_fuzz,
    "replay": run_replay,
}


async def _run(args: argparse.Namespace) -> int:
    limit = args.timeout if args.timeout and args.timeout > 0 else math.inf
    with trio.fail_after(limit):
        return await COMMANDS[args.command](args)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (also used as the console script)."""
    args = _parser().parse_args(argv)
    try:
        return trio.run(_run, args)
    except (CliError, FuzzError) as exc:
        message = str(exc)
    except ConnectionClosed as exc:
        message = _closed(exc)
    except McpError as exc:
        message = f"error {exc.code}: {exc.message}"
    except trio.TooSlowError:
        message = f"gave up after {args.timeout} s (--timeout)"
    except FileNotFoundError as exc:
        message = str(exc)
    except (OSError, ValueError) as exc:
        message = f"{type(exc).__name__}: {exc}"
    except KeyboardInterrupt:
        message = "interrupted"
    print(f"trio-mcp: {_one_line(message)}", file=sys.stderr)
    return 1


def _closed(error: ConnectionClosed) -> str:
    """Why the connection ended, on one line: the exit status and the server's last word
    (the last line it wrote to stderr, where a traceback names the error)."""
    text = "the server closed the connection"
    if error.message not in ("the peer closed the connection", "connection closed"):
        text += f": {error.message}"
    code = error.returncode
    if code is not None and code < 0:
        try:
            text += f" (killed by {signal.Signals(-code).name})"
        except ValueError:
            text += f" (killed by signal {-code})"
    elif code is not None:
        text += f" (exit status {code})"
    last = [line for line in (error.stderr_tail or "").splitlines() if line.strip()]
    if last:
        text += f"; its stderr ends with: {last[-1].strip()}"
    return text


def _one_line(message: str) -> str:
    """An error message as one line, whatever a server or the OS put in it."""
    return " | ".join(line.strip() for line in message.splitlines() if line.strip())


if __name__ == "__main__":
    sys.exit(main())
