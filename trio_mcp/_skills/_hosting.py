"""Skills in a :class:`~trio_mcp.host.Host`: the catalog the model may see, and the loading
path that reads a skill only from the server that serves it.

A hosted skill is identified by the host's label for its server and its ``SKILL.md`` URI
(two servers may serve the same URI; names are labels). :func:`host_skills` lists the
skills of every connected server that declares the extension, keeping those its
:class:`~trio_mcp.host.ServerPolicy` allows (``allowed_skills``/``blocked_skills``) and
reading no skill file. :func:`skill_catalog` is what to put in front of the model: each
skill's name, description and origin. :func:`load_hosted_skill` and
:func:`read_hosted_skill_file` read from the skill's own server, verified
(:func:`~trio_mcp.skills.load_skill`), and refuse a skill the policy does not allow.

Each function blocks for the requests it sends; a server that fails while listing is
left out of the catalog (the others are still listed) and its error is reported with the
result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
import trio

from .._errors import McpError
from ._fetching import SkillEntry, list_skills, load_skill, read_skill_file
from ._format import MAX_SKILL_BYTES, MAX_SKILL_FILES, SKILLS_EXTENSION

if TYPE_CHECKING:
    from .._host._host import Host

__all__ = [
    "HostedSkill",
    "HostedSkills",
    "host_skills",
    "load_hosted_skill",
    "read_hosted_skill_file",
    "skill_catalog",
]


@attrs.frozen
class HostedSkill:
    """A skill as a host knows it: the host's label for the server, and the entry."""

    server: str
    entry: SkillEntry

    @property
    def key(self) -> tuple[str, str]:
        """Its identity: ``(server, SKILL.md URI)``."""
        return (self.server, self.entry.uri)


@attrs.frozen
class HostedSkills:
    """What :func:`host_skills` found: the skills allowed, and the servers whose listing
    failed (by label, with the error)."""

    skills: list[HostedSkill]
    failed: dict[str, McpError]


async def host_skills(host: Host) -> HostedSkills:
    """The skills of every connected server that declares the extension, as its policy
    allows, in server order. Reads no skill file.

    Blocks while each server is asked in turn (``skills/list``, every page).
    """
    found: list[HostedSkill] = []
    failed: dict[str, McpError] = {}
    asked = False
    for name, state in host.servers.items():
        client = state.client
        if client is None or SKILLS_EXTENSION not in (client.server_capabilities.extensions or {}):
            continue
        asked = True
        try:
            entries = await list_skills(client)
        except McpError as error:  # ProtocolError included: a malformed listing
            failed[name] = error
            continue
        policy = state.config.policy
        found += [
            HostedSkill(name, entry)
            for entry in entries
            if policy.allows_skill(entry.name, entry.uri)
        ]
    if not asked:
        await trio.lowlevel.checkpoint()  # every async function here is a checkpoint
    return HostedSkills(found, failed)


def skill_catalog(skills: list[HostedSkill]) -> list[dict[str, Any]]:
    """The skills as the model sees them before loading any: name, description, origin
    server and URI. A name two skills share is given with its server (``docs/pdf``; and
    within one server with its path, ``docs/team-a/review``) so neither replaces the
    other."""
    counts: dict[str, int] = {}
    per_server: dict[tuple[str, str], int] = {}
    for skill in skills:
        counts[skill.entry.name] = counts.get(skill.entry.name, 0) + 1
        key = (skill.server, skill.entry.name)
        per_server[key] = per_server.get(key, 0) + 1
    catalog = []
    for skill in skills:
        name = skill.entry.name
        if counts[name] > 1:
            name = f"{skill.server}/{name}"
            if per_server[(skill.server, skill.entry.name)] > 1:
                name = f"{skill.server}/{_skill_path(skill.entry.uri)}"
        catalog.append(
            {
                "name": name,
                "description": skill.entry.description,
                "server": skill.server,
                "uri": skill.entry.uri,
            }
        )
    return catalog


def _skill_path(uri: str) -> str:
    """``acme/refunds`` for ``skill://acme/refunds/SKILL.md`` (the URI if not of that form)."""
    _, separator, rest = uri.partition("://")
    path = rest.removesuffix("/SKILL.md")
    return path if separator and path != rest else uri


async def _allowed(host: Host, skill: HostedSkill) -> None:
    policy = host.servers[skill.server].config.policy
    if not policy.allows_skill(skill.entry.name, skill.entry.uri):
        await trio.lowlevel.checkpoint()  # a refusal is a checkpoint too
        raise PermissionError(
            f"the policy of server {skill.server!r} does not allow skill {skill.entry.uri}"
        )


async def load_hosted_skill(
    host: Host,
    skill: HostedSkill,
    *,
    max_files: int = MAX_SKILL_FILES,
    max_bytes: int = MAX_SKILL_BYTES,
    allow_dynamic: bool = False,
) -> str:
    """Load ``skill`` from its own server: the verified ``SKILL.md`` text
    (:func:`~trio_mcp.skills.load_skill`, whose options these are). Blocks while the
    server answers.

    Raises:
        PermissionError: the server's policy does not allow the skill.
        KeyError: no such server; ConnectionClosed: it is not connected.
        SkillVerificationError: the file is not what the entry lists.
    """
    await _allowed(host, skill)
    return await load_skill(
        host.client(skill.server),
        skill.entry,
        max_files=max_files,
        max_bytes=max_bytes,
        allow_dynamic=allow_dynamic,
    )


async def read_hosted_skill_file(host: Host, skill: HostedSkill, uri: str) -> bytes:
    """Read one file of ``skill`` from its own server, verified
    (:func:`~trio_mcp.skills.read_skill_file`): a skill never makes the host read from
    another server.

    Raises:
        PermissionError: the server's policy does not allow the skill.
        SkillVerificationError: the file is not listed, or not what the entry lists.
    """
    await _allowed(host, skill)
    return await read_skill_file(host.client(skill.server), skill.entry, uri)
