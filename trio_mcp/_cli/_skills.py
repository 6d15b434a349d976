"""``trio-mcp list-skills`` and ``trio-mcp get-skill``: the Skills extension from a shell.

``list-skills`` prints each skill's URI, name and description (reading no skill file);
``get-skill URI`` fetches the entry with ``skills/get`` and prints the skill's
``SKILL.md`` (or, with ``--file``, one supporting file) after verifying it against the
entry; with ``--json``, the entry alone. A file that fails verification is not printed:
the command says which file and why, and exits 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import orjson

from .._skills._fetching import (
    SkillEntry,
    SkillVerificationError,
    get_skill,
    list_skills,
    load_skill,
    read_skill_file,
)
from .._skills._format import SKILLS_EXTENSION
from ._errors import CliError
from ._output import one_line
from ._target import add_target_options, open_target

__all__ = ["SKILL_COMMANDS", "add_skill_commands"]


def add_skill_commands(commands: Any) -> None:
    """Add ``list-skills`` and ``get-skill`` to the ``trio-mcp`` subcommands."""
    listing = commands.add_parser(
        "list-skills",
        help="list the server's skills (the Skills extension)",
        description="List the server's skills: URI, name and description. No skill file is read.",
    )
    add_target_options(listing)
    get = commands.add_parser(
        "get-skill",
        help="print a skill's SKILL.md, verified against its entry",
        description="Fetch a skill's entry (skills/get) and print its SKILL.md, or one of "
        "its files with --file, after checking the file's size and digest (and SKILL.md's "
        "frontmatter) against the entry.",
    )
    get.add_argument("uri", help="the URI of the skill's SKILL.md")
    get.add_argument(
        "--file",
        metavar="PATH",
        help="print this file of the skill instead (relative to the skill's root, or a URI)",
    )
    add_target_options(get)


def _wire(entry: SkillEntry) -> dict[str, Any]:
    resources: Any = entry.resources
    if resources != "dynamic":
        resources = [{"uri": r.uri, "digest": r.digest, "size": r.size} for r in resources]
    return {"uri": entry.uri, "frontmatter": dict(entry.frontmatter), "resources": resources}


def _print_json(value: object) -> None:
    sys.stdout.write(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode() + "\n")


async def _list_skills(args: argparse.Namespace) -> int:
    async with open_target(args) as client:
        # As the other list commands: nothing for a server that offers no skills.
        offered = SKILLS_EXTENSION in (client.server_capabilities.extensions or {})
        entries = await list_skills(client) if offered else []
    if args.json:
        _print_json([_wire(entry) for entry in entries])
        return 0
    for entry in entries:
        print(f"{entry.uri}  {entry.name}  {one_line(entry.description)}".rstrip())
    return 0


async def _get_skill(args: argparse.Namespace) -> int:
    async with open_target(args) as client:
        entry = await get_skill(client, args.uri)
        if args.json:  # the entry alone: no file is read
            _print_json(_wire(entry))
            return 0
        try:
            if args.file is None:
                data = (await load_skill(client, entry)).encode("utf-8")
            else:
                uri = args.file
                if "://" not in uri:
                    uri = entry.uri.rsplit("/", 1)[0] + "/" + uri.lstrip("/")
                data = await read_skill_file(client, entry, uri)
        except SkillVerificationError as error:
            raise CliError(f"not verified, not printed: {error}") from None
    sys.stdout.buffer.write(data)
    sys.stdout.flush()
    return 0


#: The commands by name, for ``trio-mcp``'s table.
SKILL_COMMANDS: dict[str, Callable[[argparse.Namespace], Awaitable[int]]] = {
    "list-skills": _list_skills,
    "get-skill": _get_skill,
}
