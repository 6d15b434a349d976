"""The server side of the Skills extension: :class:`ServedSkills` holds the skills a
:class:`~trio_mcp.Server` serves (:meth:`Server.add_skills <trio_mcp.Server.add_skills>`
builds it) and answers ``skills/list``, ``skills/get`` and, when ``directoryRead`` is
declared, ``resources/directory/read``. Each skill file is an ordinary resource of the
server, read with ``resources/read``.

Nothing here blocks: the files were read when the skills were built, and every answer
is computed from what is held in memory.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .._errors import ErrorCode, McpError
from .._server._context import Context
from .._server._pagination import paginate
from .._server._resources import ResourceSpec
from .._types._resources import Resource
from ._catalog import MANIFEST, Skill

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
        self._skills: dict[str, Skill] = {}
        #: The URIs of every skill file served (a nested skill's are its enclosing one's).
        self._file_uris: set[str] = set()
        #: Directory URI -> its direct children as wire ``Resource`` objects, by URI.
        self._directories: dict[str, dict[str, dict[str, Any]]] = {}
        server.method("skills/list")(self.list_skills)
        server.method("skills/get")(self.get_skill)
        if directory_read:
            server.method("resources/directory/read")(self.read_directory)

    @property
    def skills(self) -> list[Skill]:
        """The skills served, in the order they were added."""
        return list(self._skills.values())

    def add(self, skills: Iterable[Skill]) -> None:
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
            for file in skill.files:
                uri = skill.file_uri(file.path)
                if uri in self._server.resources and uri not in self._file_uris:
                    raise ValueError(f"{uri} is a resource of the server already")
        for skill in skills:
            self._skills[skill.uri] = skill
            for file in skill.files:
                manifest = file.path == MANIFEST
                description = skill.frontmatter.get("description") if manifest else None
                resource = Resource(
                    uri=skill.file_uri(file.path),
                    name=skill.name if manifest else file.path,
                    description=description if isinstance(description, str) else None,
                    mime_type=file.mime_type,
                    size=len(file.data),
                )
                self._server.add_resource(ResourceSpec(resource, file.content, None))
                self._file_uris.add(resource.uri)
                self._add_to_tree(skill, file.path, file.mime_type, len(file.data))

    def _add_to_tree(self, skill: Skill, path: str, mime_type: str, size: int) -> None:
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
        self._directories[parent][uri] = {
            "uri": uri,
            "name": leaf,
            "mimeType": mime_type,
            "size": size,
        }

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


def _cursor(params: Any) -> str | None:
    cursor = params.get("cursor") if isinstance(params, dict) else None
    if cursor is not None and not isinstance(cursor, str):
        raise _invalid_params(f"params.cursor must be a string, got {type(cursor).__name__}")
    return cursor
