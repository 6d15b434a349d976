"""The client side of the Skills extension: entries from ``skills/list`` and
``skills/get`` (:class:`SkillEntry`), and files read through ``resources/read`` and
verified against the entry before anyone uses them.

Nothing is fetched ahead of need: listing reads no file, :func:`load_skill` reads only
``SKILL.md``, :func:`read_skill_file` only the file asked for. Verification follows the
extension: only files the entry lists are read, each file's raw size and SHA-256 digest
must be the entry's, and ``SKILL.md``'s frontmatter must equal the entry's field by
field. A mismatch raises :class:`SkillVerificationError` naming the file; the content is
not returned. Refresh the entry with :func:`get_skill` to recover from a stale one.

Every function here blocks for the requests it sends; cancel it with the caller's cancel
scope (``trio.fail_after``), which cancels the request on the server too.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, NoReturn

import attrs
import trio

from .._errors import ErrorCode, McpError, ProtocolError
from .._types._content import BlobResourceContents, TextResourceContents
from ._format import (
    MAX_SKILL_BYTES,
    MAX_SKILL_FILES,
    SKILLS_EXTENSION,
    SkillFormatError,
    read_frontmatter,
    skill_digest,
)

if TYPE_CHECKING:
    from .._client._client import Client

__all__ = [
    "MAX_LISTED_SKILLS",
    "SkillEntry",
    "SkillResource",
    "SkillVerificationError",
    "get_skill",
    "list_skills",
    "list_skills_page",
    "load_skill",
    "read_skill_file",
]

#: The most entries :func:`list_skills` collects before it refuses a listing.
MAX_LISTED_SKILLS = 10_000
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


class SkillVerificationError(Exception):
    """A skill's file (or its entry) is not what the entry says: it must not be used.

    Attributes:
        uri: the file that failed (or the skill's ``SKILL.md`` for an entry refused).
    """

    def __init__(self, uri: str, reason: str) -> None:
        super().__init__(f"{uri}: {reason}")
        self.uri = uri
        self.reason = reason


@attrs.frozen
class SkillResource:
    """One file a skill's entry lists: its URI, digest (``sha256:<hex>``) and size."""

    uri: str
    digest: str
    size: int


@attrs.frozen
class SkillEntry:
    """A skill's entry, as the server listed it: the URI of its ``SKILL.md``, its
    frontmatter verbatim, and its files (or ``"dynamic"`` for generated content, which
    has no digests)."""

    uri: str
    frontmatter: Mapping[str, Any]
    resources: tuple[SkillResource, ...] | Literal["dynamic"]

    @property
    def name(self) -> str:
        """The frontmatter's ``name`` (a label: two skills may share it)."""
        return str(self.frontmatter.get("name", ""))

    @property
    def description(self) -> str:
        """The frontmatter's ``description``."""
        return str(self.frontmatter.get("description", ""))

    @property
    def size(self) -> int | None:
        """The bytes of all its files together (``None`` for a dynamic skill)."""
        if self.resources == "dynamic":
            return None
        return sum(r.size for r in self.resources)

    def listed(self, uri: str) -> SkillResource | None:
        """The entry's record of the file at ``uri``, if it lists that file."""
        if self.resources == "dynamic":
            return None
        return next((r for r in self.resources if r.uri == uri), None)

    @classmethod
    def from_wire(cls, data: object, where: str = "skill") -> SkillEntry:
        """An entry from its JSON form.

        Raises:
            ProtocolError: it is not a valid entry (naming the field), which a host must
                not load.
        """
        if not isinstance(data, dict):
            raise ProtocolError(f"{where}: expected a skill entry object, got {_kind(data)}")
        uri = data.get("uri")
        if not isinstance(uri, str) or not uri:
            raise ProtocolError(f"{where}.uri: expected the SKILL.md URI, got {_kind(uri)}")
        frontmatter = data.get("frontmatter")
        if not isinstance(frontmatter, dict):
            raise ProtocolError(
                f"{where}.frontmatter: expected an object, got {_kind(frontmatter)}"
            )
        for key in ("name", "description"):
            if not isinstance(frontmatter.get(key), str):
                raise ProtocolError(f"{where}.frontmatter.{key}: expected a string")
        raw = data.get("resources")
        resources: tuple[SkillResource, ...] | Literal["dynamic"]
        if raw == "dynamic":
            resources = "dynamic"
        elif isinstance(raw, list):
            resources = tuple(
                _resource(item, f"{where}.resources[{i}]") for i, item in enumerate(raw)
            )
        else:
            raise ProtocolError(
                f'{where}.resources: expected a list of files or "dynamic", got {_kind(raw)}'
            )
        return cls(uri=uri, frontmatter=frontmatter, resources=resources)


def _kind(value: object) -> str:
    return "nothing" if value is None else type(value).__name__


def _resource(item: object, where: str) -> SkillResource:
    if not isinstance(item, dict):
        raise ProtocolError(f"{where}: expected an object, got {_kind(item)}")
    uri, found, size = item.get("uri"), item.get("digest"), item.get("size")
    if not isinstance(uri, str) or not uri:
        raise ProtocolError(f"{where}.uri: expected a URI, got {_kind(uri)}")
    if not isinstance(found, str) or _DIGEST.fullmatch(found) is None:
        raise ProtocolError(f"{where}.digest: expected 'sha256:' and 64 lowercase hex digits")
    if type(size) is not int or size < 0:
        raise ProtocolError(f"{where}.size: expected a whole number of bytes, got {size!r:.40}")
    return SkillResource(uri=uri, digest=found, size=size)


async def _refuse(error: Exception) -> NoReturn:
    """Raise ``error`` after a checkpoint: a refusal made before any request is sent is
    still a checkpoint, as every async function here is."""
    await trio.lowlevel.checkpoint()
    raise error


async def _require_skills(client: Client) -> None:
    """Raises McpError (-32601) when the server has not declared the extension: a client
    sends the extension's methods only after seeing the declaration."""
    extensions = client.server_capabilities.extensions or {}
    if SKILLS_EXTENSION not in extensions:
        await _refuse(
            McpError(
                f"the server does not declare the {SKILLS_EXTENSION} extension"
                + (
                    " (extensions are declared from protocol 2026-07-28)"
                    if client.era != "modern"
                    else ""
                ),
                code=ErrorCode.METHOD_NOT_FOUND,
            )
        )


async def list_skills_page(
    client: Client, cursor: str | None = None
) -> tuple[list[SkillEntry], str | None]:
    """One page of ``skills/list``: the entries and the cursor of the next page.

    Raises:
        McpError: the server does not declare the extension (-32601), or refused.
        ProtocolError: an entry is malformed (naming it and the field).
    """
    await _require_skills(client)
    result = await client.session.send_request(
        "skills/list", {"cursor": cursor} if cursor is not None else {}
    )
    if not isinstance(result, dict) or not isinstance(result.get("skills"), list):
        raise ProtocolError("skills/list: the result has no 'skills' list")
    entries = [
        SkillEntry.from_wire(item, f"skills[{i}]") for i, item in enumerate(result["skills"])
    ]
    following = result.get("nextCursor")
    if following is not None and not isinstance(following, str):
        raise ProtocolError("skills/list: nextCursor must be a string")
    return entries, following


async def list_skills(client: Client, *, limit: int = MAX_LISTED_SKILLS) -> list[SkillEntry]:
    """Every entry of ``skills/list`` (each page in turn). Reads no skill file. An empty
    or partial listing does not mean the server has no other skills: a skill named by
    URI is fetched with :func:`get_skill`.

    Raises:
        McpError: the server does not declare the extension (-32601), or refused.
        ProtocolError: an entry is malformed, a cursor repeats, or the listing holds more
            than ``limit`` entries.
    """
    entries: list[SkillEntry] = []
    cursor: str | None = None
    seen: set[str] = set()
    while True:
        page, cursor = await list_skills_page(client, cursor)
        entries.extend(page)
        if len(entries) > limit:
            raise ProtocolError(f"skills/list: more than {limit} skills listed (the limit)")
        if cursor is None:
            return entries
        if cursor in seen:
            raise ProtocolError(f"skills/list: the server repeated cursor {cursor!r:.60}")
        seen.add(cursor)


async def get_skill(client: Client, uri: str) -> SkillEntry:
    """The entry of the skill whose ``SKILL.md`` is ``uri`` (``skills/get``): for a skill
    named by a user, another skill or the server's instructions, or to refresh a stale
    entry. Reads no skill file.

    Raises:
        McpError: the server does not declare the extension (-32601), or serves no skill
            at ``uri`` (-32602).
        ProtocolError: the entry is malformed.
    """
    await _require_skills(client)
    result = await client.session.send_request("skills/get", {"uri": uri})
    if not isinstance(result, dict):
        raise ProtocolError("skills/get: the result is not an object")
    return SkillEntry.from_wire(result.get("skill"), "skill")


async def read_skill_file(
    client: Client, entry: SkillEntry, uri: str, *, allow_dynamic: bool = False
) -> bytes:
    """Read one file of ``entry``'s skill and return its raw bytes once they are verified:
    the entry lists ``uri``, and the bytes have the listed size and digest.

    A dynamic skill (``"resources": "dynamic"``) has nothing to verify against: its files
    are refused unless ``allow_dynamic``, and then returned as read.

    Raises:
        SkillVerificationError: the file is not listed, or its bytes are not the listed
            ones (naming the file): do not use it; refresh the entry.
        McpError: the read failed (the server's error).
    """
    listed = entry.listed(uri)
    if entry.resources == "dynamic":
        if not allow_dynamic:
            await _refuse(
                SkillVerificationError(uri, "the skill is dynamic (no digests to verify)")
            )
    elif listed is None:
        await _refuse(SkillVerificationError(uri, "not listed in the skill's entry"))
    result = await client.read_resource(uri)
    if len(result.contents) != 1:
        raise SkillVerificationError(
            uri, f"expected one content in the read, got {len(result.contents)}"
        )
    content = result.contents[0]
    if content.uri != uri:
        raise SkillVerificationError(uri, f"the read returned {content.uri!r:.200} instead")
    if isinstance(content, TextResourceContents):
        data = content.text.encode("utf-8")
    elif isinstance(content, BlobResourceContents):
        try:
            data = base64.b64decode(content.blob, validate=True)
        except (binascii.Error, ValueError):
            raise SkillVerificationError(uri, "the blob is not valid base64") from None
    else:  # pragma: no cover - the converter gives one of the two
        raise SkillVerificationError(uri, "unknown content type")
    if listed is not None:
        if len(data) != listed.size:
            raise SkillVerificationError(
                uri, f"{len(data)} bytes read, the entry lists {listed.size}"
            )
        found = skill_digest(data)
        if found != listed.digest:
            raise SkillVerificationError(
                uri, f"digest {found} read, the entry lists {listed.digest}"
            )
    return data


async def load_skill(
    client: Client,
    entry: SkillEntry,
    *,
    max_files: int = MAX_SKILL_FILES,
    max_bytes: int = MAX_SKILL_BYTES,
    allow_dynamic: bool = False,
) -> str:
    """A skill's loading path: check the entry (its size against the limits, its URI
    against its name), read its ``SKILL.md`` verified (:func:`read_skill_file`) and
    compare its frontmatter field by field with the entry's. Returns the ``SKILL.md``
    text, for the model. Reads no other file: read supporting files with
    :func:`read_skill_file` when they are needed.

    Raises:
        SkillVerificationError: naming the file and what did not match; the skill must
            not be loaded (refresh the entry with :func:`get_skill`).
        McpError: the read failed.
    """
    if not entry.uri.endswith(f"/{entry.name}/SKILL.md"):
        await _refuse(
            SkillVerificationError(
                entry.uri, f"the URI does not end in the skill's name ({entry.name!r}/SKILL.md)"
            )
        )
    if entry.resources != "dynamic":
        if len(entry.resources) > max_files:
            await _refuse(
                SkillVerificationError(
                    entry.uri,
                    f"the skill lists {len(entry.resources)} files, more than the limit of "
                    f"{max_files}",
                )
            )
        if (entry.size or 0) > max_bytes:
            await _refuse(
                SkillVerificationError(
                    entry.uri,
                    f"the skill's files add up to {entry.size} bytes, more than the limit of "
                    f"{max_bytes}",
                )
            )
    data = await read_skill_file(client, entry, entry.uri, allow_dynamic=allow_dynamic)
    if entry.resources == "dynamic" and len(data) > max_bytes:
        raise SkillVerificationError(entry.uri, f"more than the limit of {max_bytes} bytes")
    try:
        text = data.decode("utf-8")
        frontmatter = read_frontmatter(text)
    except UnicodeDecodeError:
        raise SkillVerificationError(entry.uri, "SKILL.md is not UTF-8 text") from None
    except SkillFormatError as error:
        raise SkillVerificationError(entry.uri, str(error)) from None
    difference = _first_difference(frontmatter, entry.frontmatter)
    if difference is not None:
        raise SkillVerificationError(
            entry.uri, f"the frontmatter's {difference!r} differs from the entry's"
        )
    return text


def _first_difference(read: Mapping[str, Any], listed: Mapping[str, Any]) -> str | None:
    """The first key whose value differs, as JSON values differ (``true`` is not ``1``;
    ``1`` and ``1.0`` are one number)."""
    for key in sorted(set(read) | set(listed)):
        if key not in read or key not in listed or not _same(read[key], listed[key]):
            return key
    return None


def _same(a: object, b: object) -> bool:
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b
