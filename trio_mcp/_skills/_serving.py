"""The server side of the Skills extension: :class:`ServedSkills` holds the skills a
:class:`~trio_mcp.Server` serves (:meth:`Server.add_skills <trio_mcp.Server.add_skills>`
builds it) and answers ``skills/list``, ``skills/get`` and, when ``directoryRead`` is
declared, ``resources/directory/read``. Each skill file is an ordinary resource of the
server, read with ``resources/read``.

Nothing here blocks: the files were read when the skills were built, and every answer
is computed from what is held in memory.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable
from functools import partial
from typing import TYPE_CHECKING, Any

from .._errors import ErrorCode, McpError
from .._server._context import Context
from .._server._pagination import paginate
from .._server._resources import ResourceSpec
from .._types._resources import Resource
from ._catalog import MANIFEST, DynamicSkill, FileReader, Skill
from ._format import SkillFormatError, read_frontmatter

if TYPE_CHECKING:
    from .._server._server import Server

__all__ = ["DIRECTORY_MIME_TYPE", "ServedSkills"]

#: The MIME type of a directory resource.
DIRECTORY_MIME_TYPE = "inode/directory"


def _invalid_params(message: str) -> McpError:
    return McpError(message, code=ErrorCode.INVALID_PARAMS)


class ServedSkills:
    """The skills one server serves, by ``SKILL.md`` URI, and the directory tree of their
    files (every directory of the skill namespaces, organizational prefixes included)."""

    def __init__(self, server: Server, *, directory_read: bool) -> None:
        self._server = server
        self.directory_read = directory_read
        self._skills: dict[str, Skill | DynamicSkill] = {}
        #: The URIs of every skill file served (a nested skill's are its enclosing one's).
        self._file_uris: set[str] = set()
        #: Directory URI -> its direct children as wire ``Resource`` objects, by URI.
        self._directories: dict[str, dict[str, dict[str, Any]]] = {}
        server.method("skills/list")(self.list_skills)
        server.method("skills/get")(self.get_skill)
        if directory_read:
            server.method("resources/directory/read")(self.read_directory)

    @property
    def skills(self) -> list[Skill | DynamicSkill]:
        """The skills served, in the order they were added."""
        return list(self._skills.values())

    def add(self, skills: Iterable[Skill | DynamicSkill]) -> None:
        """Serve ``skills`` too: each file becomes a resource of the server.

        Raises:
            ValueError: a skill with the same ``SKILL.md`` URI is served already, or one
                of its files has the URI of a resource the server has already (nothing is
                added then).
        """
        skills = list(skills)
        seen = set(self._skills)
        for skill in skills:
            if skill.uri in seen:
                raise ValueError(f"a skill is served at {skill.uri} already")
            seen.add(skill.uri)
            for path, *_ in _files_of(skill):
                uri = skill.file_uri(path)
                if uri in self._server.resources and uri not in self._file_uris:
                    raise ValueError(f"{uri} is a resource of the server already")
        for skill in skills:
            self._skills[skill.uri] = skill
            for path, mime_type, size, reader in _files_of(skill):
                manifest = path == MANIFEST
                description = skill.frontmatter.get("description") if manifest else None
                resource = Resource(
                    uri=skill.file_uri(path),
                    name=skill.name if manifest else path,
                    description=description if isinstance(description, str) else None,
                    mime_type=mime_type,
                    size=size,
                )
                self._server.add_resource(ResourceSpec(resource, reader, None))
                self._file_uris.add(resource.uri)
                self._add_to_tree(skill, path, mime_type, size)

    def _add_to_tree(
        self, skill: Skill | DynamicSkill, path: str, mime_type: str, size: int | None
    ) -> None:
        """File ``path`` of ``skill`` and every directory above it, up to the scheme root."""
        *folders, leaf = f"{skill.path}/{path}".split("/")
        parent = f"{skill.scheme}://{folders[0]}"
        self._directories.setdefault(parent, {})
        for folder in folders[1:]:
            here = f"{parent}/{folder}"
            self._directories.setdefault(here, {})
            self._directories[parent][here] = {
                "uri": here,
                "name": folder,
                "mimeType": DIRECTORY_MIME_TYPE,
            }
            parent = here
        uri = f"{parent}/{leaf}"
        child: dict[str, Any] = {"uri": uri, "name": leaf, "mimeType": mime_type}
        if size is not None:
            child["size"] = size
        self._directories[parent][uri] = child

    def _cacheable(self, ctx: Context, result: dict[str, Any]) -> dict[str, Any]:
        """``result`` with the caching hints 2026-07-28 results carry (the server's)."""
        if ctx.era == "modern":
            result["ttlMs"] = self._server.cache_ttl_ms
            result["cacheScope"] = self._server.cache_scope
        return result

    async def list_skills(self, ctx: Context, params: Any) -> dict[str, Any]:
        """``skills/list``: one page of entries, each whole (a manifest is never split)."""
        cursor = _cursor(params)
        page, following = paginate(
            "skills", list(self._skills.values()), cursor, self._server.page_size
        )
        result: dict[str, Any] = {"skills": [skill.entry() for skill in page]}
        if following is not None:
            result["nextCursor"] = following
        return self._cacheable(ctx, result)

    async def get_skill(self, ctx: Context, params: Any) -> dict[str, Any]:
        """``skills/get``: the entry of the skill whose ``SKILL.md`` is ``params.uri``."""
        uri = params.get("uri") if isinstance(params, dict) else None
        if not isinstance(uri, str):
            raise _invalid_params("skills/get needs params.uri, the URI of a skill's SKILL.md")
        skill = self._skills.get(uri)
        if skill is None:
            raise _invalid_params(f"No skill is served at {uri:.300}")
        return self._cacheable(ctx, {"skill": skill.entry()})

    async def read_directory(self, ctx: Context, params: Any) -> dict[str, Any]:
        """``resources/directory/read``: one page of a directory's direct children."""
        uri = params.get("uri") if isinstance(params, dict) else None
        if not isinstance(uri, str):
            raise _invalid_params("resources/directory/read needs params.uri, a string")
        children = self._directories.get(uri)
        if children is None:
            if uri in self._server.resources:
                raise _invalid_params(f"{uri:.300} is not a directory resource")
            raise _invalid_params(f"No directory resource at {uri:.300}")
        ordered = [children[key] for key in sorted(children)]
        page, following = paginate(
            f"directory {uri}", ordered, _cursor(params), self._server.page_size
        )
        result: dict[str, Any] = {"resources": page}
        if following is not None:
            result["nextCursor"] = following
        return result


def _files_of(
    skill: Skill | DynamicSkill,
) -> list[tuple[str, str, int | None, Callable[[], Awaitable[str | bytes] | str | bytes]]]:
    """Each file of ``skill``: its path, MIME type, size (``None``: generated) and reader."""
    if isinstance(skill, Skill):
        return [(f.path, f.mime_type, len(f.data), f.content) for f in skill.files]
    return [
        (
            path,
            skill.mime_types[path],
            None,
            partial(_checked_manifest, skill, reader) if path == MANIFEST else reader,
        )
        for path, reader in skill.readers.items()
    ]


async def _checked_manifest(skill: DynamicSkill, reader: FileReader) -> str | bytes:
    """A dynamic skill's generated ``SKILL.md``, served only when its frontmatter is the
    declared one (a host would refuse any other).

    Raises:
        McpError: -32603 (an internal error: the skill's code is wrong).
    """
    value = reader()
    content = await value if inspect.isawaitable(value) else value
    try:
        text = content.decode("utf-8") if isinstance(content, bytes) else content
        matches = read_frontmatter(text) == dict(skill.frontmatter)
    except (UnicodeDecodeError, SkillFormatError):
        matches = False
    if not matches:
        raise McpError(
            f"the generated SKILL.md of {skill.uri} does not carry the skill's frontmatter",
            code=ErrorCode.INTERNAL_ERROR,
        )
    return content


def _cursor(params: Any) -> str | None:
    cursor = params.get("cursor") if isinstance(params, dict) else None
    if cursor is not None and not isinstance(cursor, str):
        raise _invalid_params(f"params.cursor must be a string, got {type(cursor).__name__}")
    return cursor
