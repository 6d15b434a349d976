"""``trio-mcp``: list, call and read what an MCP server offers, from a shell.

Results go to stdout; what the server says meanwhile (progress, log messages) to stderr.

Errors are one line on stderr and a non-zero exit, never a traceback for
something that can be expected (an unreachable server, an unknown tool, bad
JSON arguments, a server that crashed: then the line ends with the last line
it wrote to stderr).
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any

import orjson
import trio

from .._client._client import Client
from .._errors import ConnectionClosed, McpError
from .._extras import MissingExtra
from .._fuzz._runner import FuzzError
from .._types._base import LOGGING_LEVELS
from .._types._content import TextResourceContents
from .._types._tools import Tool
from .._version import __version__
from . import _lazy
from ._arguments import parse_pairs, typed_arguments
from ._bench import add_bench_command, run_bench
from ._bridge import add_bridge_command, run_bridge
from ._card import add_card_command, run_card
from ._completion import add_completion_command, completion_script
from ._conformance import add_conformance_command, run_conformance
from ._demo import run_demo
from ._errors import CliError
from ._fuzz import add_fuzz_commands, run_fuzz, run_replay
from ._output import describe_block, one_line, print_json
from ._report import Reporter
from ._skills import SKILL_COMMANDS, add_skill_commands
from ._strict import StrictRecorder
from ._target import add_target_options, open_target

Command = Callable[[argparse.Namespace], Awaitable[int]]

__all__ = ["CliError", "main"]


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
        "call-tool",
        help="call a tool",
        description="Call a tool and print its result; its progress and the server's log "
        "messages go to stderr.",
    )
    call.add_argument("name", help="the tool to call")
    call.add_argument(
        "pairs",
        nargs="*",
        metavar="KEY=VALUE",
        help="an argument, typed by the tool's input schema (n=3 is a number where the "
        "schema says integer, a string where it says string; JSON for objects and arrays)",
    )
    call.add_argument(
        "--args",
        default="{}",
        metavar="JSON",
        help="the arguments, a JSON object (KEY=VALUE pairs are added to it)",
    )
    call.add_argument(
        "--log-level",
        default="info",
        choices=(*LOGGING_LEVELS, "none"),
        help="ask for and show the server's log messages from this level up (default info; "
        "none: neither ask for nor show any)",
    )
    add_target_options(call)

    read = commands.add_parser("read-resource", help="read a resource")
    read.add_argument("uri")
    add_target_options(read)

    prompt = commands.add_parser(
        "get-prompt",
        help="get a prompt",
        description="Get a prompt and print its messages. Arguments are KEY=VALUE pairs, as "
        "for call-tool (a prompt's arguments are all strings, so VALUE is taken as it is).",
    )
    prompt.add_argument("name")
    prompt.add_argument(
        "pairs", nargs="*", metavar="KEY=VALUE", help="an argument (prompt arguments are strings)"
    )
    prompt.add_argument(
        "--args",
        default="{}",
        metavar="JSON",
        help="the arguments, a JSON object of strings (KEY=VALUE pairs are added to it)",
    )
    add_target_options(prompt)

    level = commands.add_parser(
        "set-level",
        help="set the server's log level (initialize era)",
        description="Send logging/setLevel, and show the log messages that arrive before the "
        "connection closes. A 2026-07-28 server keeps no level: each request asks for its own "
        "(call-tool --log-level).",
    )
    level.add_argument("level", choices=LOGGING_LEVELS)
    add_target_options(level)

    complete = commands.add_parser(
        "complete",
        help="ask for completions of a prompt's or resource template's argument",
        description="Print the server's completion candidates, one a line.",
    )
    ref = complete.add_mutually_exclusive_group(required=True)
    ref.add_argument("--prompt", metavar="NAME", help="an argument of this prompt")
    ref.add_argument(
        "--resource-template", metavar="URI_TEMPLATE", help="a variable of this template"
    )
    complete.add_argument(
        "argument", metavar="NAME[=VALUE]", help="the argument and what is typed so far"
    )
    complete.add_argument(
        "--context",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an argument already chosen (repeatable)",
    )
    add_target_options(complete)

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
    add_conformance_command(commands)
    add_bridge_command(commands)
    add_completion_command(commands)
    add_bench_command(commands)
    add_skill_commands(commands)
    add_card_command(commands)
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
        version = client.protocol_version
    if args.json:
        print_json(tools, version)
        return 0
    for tool in tools:
        print(f"{tool.name}({_parameters(tool)})  {one_line(tool.description)}".rstrip())
    return 0


def _parameters(tool: Tool) -> str:
    """The tool's parameters, the optional ones marked ``?`` (as list-prompts does)."""
    required = tool.input_schema.get("required") or ()
    return ", ".join(
        name + ("" if name in required else "?")
        for name in tool.input_schema.get("properties") or {}
    )


async def _list_resources(args: argparse.Namespace) -> int:
    async with open_target(args) as client:
        resources = await client.list_resources() if client.server_capabilities.resources else []
        templates = (
            await client.list_resource_templates() if client.server_capabilities.resources else []
        )
        version = client.protocol_version
    if args.json:
        print_json({"resources": resources, "resourceTemplates": templates}, version)
        return 0
    for resource in resources:
        print(f"{resource.uri}  {resource.name}  {resource.mime_type or ''}".rstrip())
    for template in templates:
        print(f"{template.uri_template}  {template.name}  (template)")
    return 0


async def _list_prompts(args: argparse.Namespace) -> int:
    async with open_target(args) as client:
        prompts = await client.list_prompts() if client.server_capabilities.prompts else []
        version = client.protocol_version
    if args.json:
        print_json(prompts, version)
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
    pairs = parse_pairs(args.pairs)
    quiet = args.log_level == "none"
    reporter = Reporter(log_level=None if quiet else args.log_level)
    async with open_target(args, on_log=None if quiet else reporter.log) as client:
        if pairs:
            arguments.update(typed_arguments(await _tool(client, args.name), pairs))
        if not quiet and client.server_capabilities.logging is not None:
            try:
                await client.set_log_level(args.log_level)
            except McpError as exc:  # a wish: the call is what was asked for
                print(f"trio-mcp: could not set the log level: {exc.message}", file=sys.stderr)
        try:
            result = await client.call_tool(args.name, arguments, on_progress=reporter.progress)
        finally:
            reporter.finish()
        version = client.protocol_version
    if args.json:
        print_json(result, version)
    else:
        for block in result.content:
            print(describe_block(block))
        if result.structured_content is not None and not result.content:
            print(orjson.dumps(result.structured_content).decode())
    if result.is_error:
        print(f"trio-mcp: tool {args.name} reported an error", file=sys.stderr)
        return 1
    return 0


async def _tool(client: Client, name: str) -> Tool:
    """The tool ``name``, as the server lists it (its schema types KEY=VALUE pairs)."""
    tools = await client.list_tools() if client.server_capabilities.tools is not None else []
    for tool in tools:
        if tool.name == name:
            return tool
    raise CliError(f"the server lists no tool {name!r}, so KEY=VALUE arguments cannot be typed")


async def _set_level(args: argparse.Namespace) -> int:
    reporter = Reporter()
    async with open_target(args, on_log=reporter.log) as client:
        if client.era == "modern":
            raise CliError(
                f"a {client.protocol_version} server keeps no log level: each request asks for "
                "its own (call-tool --log-level); --protocol-version 2025-11-25 sets a session's"
            )
        if client.server_capabilities.logging is None:
            raise CliError("the server does not offer logging")
        await client.set_log_level(args.level)
    if args.json:
        print_json({"level": args.level})
    else:
        print(f"log level: {args.level}")
    return 0


async def _complete(args: argparse.Namespace) -> int:
    name, _, value = args.argument.partition("=")
    context = parse_pairs(args.context, "--context") if args.context else None
    reference = (
        _lazy.PromptReference(name=args.prompt)
        if args.prompt is not None
        else _lazy.ResourceTemplateReference(uri=args.resource_template)
    )
    async with open_target(args) as client:
        if client.server_capabilities.completions is None:
            raise CliError("the server does not offer completion")
        completion = await client.complete(reference, name, value, context=context)
        version = client.protocol_version
    if args.json:
        print_json(completion, version)
        return 0
    for candidate in completion.values:
        print(candidate)
    if completion.has_more or (completion.total or 0) > len(completion.values):
        print(f"({completion.total or 'more'} in all)", file=sys.stderr)
    return 0


async def _read_resource(args: argparse.Namespace) -> int:
    async with open_target(args) as client:
        result = await client.read_resource(args.uri)
        version = client.protocol_version
    if args.json:
        print_json(result, version)
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
    arguments.update(parse_pairs(args.pairs, "a prompt argument"))
    async with open_target(args) as client:
        result = await client.get_prompt(args.name, arguments)
        version = client.protocol_version
    if args.json:
        print_json(result, version)
        return 0
    for message in result.messages:
        print(f"{message.role}: {describe_block(message.content)}")
    return 0


async def _completion(args: argparse.Namespace) -> int:
    await trio.lowlevel.checkpoint()
    print(completion_script(_parser(), args.shell), end="")
    return 0


COMMANDS: dict[str, Command] = {
    "list-tools": _list_tools,
    "list-resources": _list_resources,
    "list-prompts": _list_prompts,
    "info": _info,
    "call-tool": _call_tool,
    "read-resource": _read_resource,
    "get-prompt": _get_prompt,
    "set-level": _set_level,
    "complete": _complete,
    "demo": run_demo,
    "fuzz": run_fuzz,
    "replay": run_replay,
    "conformance": run_conformance,
    "bridge": run_bridge,
    "completion": _completion,
    "bench": run_bench,
    **SKILL_COMMANDS,
    "card": run_card,
}


async def _run(args: argparse.Namespace) -> int:
    limit = args.timeout if args.timeout and args.timeout > 0 else math.inf
    recorder = None
    if getattr(args, "strict", False) and args.command not in ("fuzz", "replay"):
        recorder = args.strict_recorder = StrictRecorder(args.spec_dir)
    with trio.fail_after(limit), _raw_output(args):
        status = await COMMANDS[args.command](args)
    if recorder is not None:
        status = max(status, recorder.report())
    return status


@contextlib.contextmanager
def _raw_output(args: argparse.Namespace) -> Iterator[None]:
    """``--output raw``: the messages go to stdout (``args.raw_output``), and what the
    command would print there goes nowhere."""
    if getattr(args, "output", "text") != "raw":
        yield
        return
    args.raw_output = sys.stdout
    with open(os.devnull, "w") as nowhere, contextlib.redirect_stdout(nowhere):
        yield


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (also used as the console script)."""
    parser = _parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    command: list[str] = []
    if "--" in argv and "conformance" in argv[: argv.index("--")]:
        # `conformance client [options] -- CMD ARGS...`: the client's own command line.
        command = argv[argv.index("--") + 1 :]
        argv = argv[: argv.index("--")]
    args, extra = parser.parse_known_args(argv)
    if command:
        args.target.extend(command)
    if extra:
        # KEY=VALUE pairs may also come after the options (argparse takes positionals
        # in one run only).
        if args.command in ("call-tool", "get-prompt") and all(_is_pair(item) for item in extra):
            args.pairs.extend(extra)
        else:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return trio.run(_run, args)
    except (CliError, FuzzError, MissingExtra) as exc:
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


def _is_pair(item: str) -> bool:
    return "=" in item and not item.startswith("-")


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
