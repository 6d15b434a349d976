"""Skills as a server holds them: :class:`Skill` (a skill's files, read once, with the
frontmatter of its ``SKILL.md``), built from a mapping of files (:meth:`Skill.from_files`)
or from a directory of ``SKILL.md`` folders (:func:`skills_from_directory`).

Everything is checked when the skill is built, so a server never serves a skill that
breaks the format: the skill path and name (the Agent Skills naming rules, the last
path segment equal to ``name``), the frontmatter, the file paths, and the extension's
per-skill limits (512 files, 16 MiB; a server may lower or raise them). Each check
raises :class:`~trio_mcp.skills.SkillFormatError` naming the skill, the file or the
field, and the rule. Files are read into memory when the skill is built: the digest a
listing gives is then the digest of the bytes every read serves.
"""

from __future__ import annotations

import mimetypes
import os
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

import attrs

from ._format import (
    MAX_SKILL_BYTES,
    MAX_SKILL_FILES,
    FrontmatterValue,
    SkillFormatError,
    check_frontmatter,
    check_skill_name,
    read_frontmatter,
    skill_digest,
)

__all__ = [
    "DynamicSkill",
    "FileReader",
    "Skill",
    "SkillFile",
    "as_skills",
    "skills_from_directory",
]

MANIFEST = "SKILL.md"
_MIME_TYPES = {".md": "text/markdown", ".markdown": "text/markdown", ".py": "text/x-python"}


@attrs.frozen
class SkillFile:
    """One file of a skill: its path relative to the skill's root (``/``-separated), its
    raw bytes and MIME type."""

    path: str
    data: bytes
    mime_type: str
    #: ``sha256:`` and the hex SHA-256 of :attr:`data` (computed once).
    digest: str = attrs.field(init=False)

    @digest.default
    def _digest(self) -> str:
        return skill_digest(self.data)

    def content(self) -> str | bytes:
        """What a read serves: text when the bytes are UTF-8 (the same bytes encoded
        again), else the bytes (a base64 blob on the wire)."""
        try:
            return self.data.decode("utf-8")
        except UnicodeDecodeError:
            return self.data


class _Addressed:
    """Where a skill is: its name and URIs, from its ``path`` and ``scheme``."""

    __slots__ = ()
    path: str
    scheme: str

    @property
    def name(self) -> str:
        """The skill's name (the last segment of its path, and its frontmatter ``name``)."""
        return self.path.rsplit("/", 1)[-1]

    @property
    def root_uri(self) -> str:
        """The skill's root directory resource: ``skill://<path>``, no trailing slash."""
        return f"{self.scheme}://{self.path}"

    @property
    def uri(self) -> str:
        """The URI of its ``SKILL.md``: the skill's identity on its server."""
        return self.file_uri(MANIFEST)

    def file_uri(self, path: str) -> str:
        """The resource URI of the file at ``path`` (relative to the skill's root)."""
        return f"{self.root_uri}/{path}"


@attrs.frozen
class Skill(_Addressed):
    """A skill a server serves: its path in the server's skill namespace (``refunds``,
    or ``acme/billing/refunds`` with an organizational prefix), the frontmatter of its
    ``SKILL.md`` and its files, ``SKILL.md`` first. Build one with :meth:`from_files` or
    :func:`skills_from_directory`; both check every rule."""

    path: str
    frontmatter: Mapping[str, FrontmatterValue]
    files: tuple[SkillFile, ...]
    scheme: str = "skill"

    @property
    def size(self) -> int:
        """The bytes of all its files together."""
        return sum(len(f.data) for f in self.files)

    def entry(self) -> dict[str, Any]:
        """The skill's entry as ``skills/list`` and ``skills/get`` give it: its
        ``SKILL.md`` URI, its frontmatter verbatim and every file with its digest and
        size (``SKILL.md`` first)."""
        return {
            "uri": self.uri,
            "frontmatter": dict(self.frontmatter),
            "resources": [
                {"uri": self.file_uri(f.path), "digest": f.digest, "size": len(f.data)}
                for f in self.files
            ],
        }

    @classmethod
    def from_files(
        cls,
        path: str,
        files: Mapping[str, str | bytes],
        *,
        mime_types: Mapping[str, str] | None = None,
        scheme: str = "skill",
        max_files: int = MAX_SKILL_FILES,
        max_bytes: int = MAX_SKILL_BYTES,
    ) -> Skill:
        """A skill at ``path`` from its files by relative path (text is encoded as
        UTF-8), one of them ``SKILL.md``. A file's MIME type is ``mime_types[path]``,
        else guessed from its name (``text/markdown`` for ``.md``).

        Raises:
            SkillFormatError: naming the rule broken (see the module's docstring).
        """
        _check_skill_path(path)
        label = f"skill {path!r}"
        if len(files) > max_files:
            raise SkillFormatError(
                f"{label} has {len(files)} files, more than the limit of {max_files} "
                "files per skill (SKILL.md included)"
            )
        built: list[SkillFile] = []
        total = 0
        for relative, content in files.items():
            _check_file_path(relative, label)
            data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
            total += len(data)
            if total > max_bytes:
                raise SkillFormatError(
                    f"{label} holds more than the limit of {max_bytes} bytes per skill "
                    f"(reached at {relative!r})"
                )
            mime_type = (mime_types or {}).get(relative) or _guess_mime_type(relative, data)
            built.append(SkillFile(relative, data, mime_type))
        manifest = next((f for f in built if f.path == MANIFEST), None)
        if manifest is None:
            raise SkillFormatError(f"{label} has no {MANIFEST} at its root")
        try:
            text = manifest.data.decode("utf-8")
        except UnicodeDecodeError:
            raise SkillFormatError(f"{label}: {MANIFEST} is not UTF-8 text") from None
        try:
            frontmatter = read_frontmatter(text)
            check_frontmatter(frontmatter, directory=path.rsplit("/", 1)[-1])
        except SkillFormatError as error:
            raise SkillFormatError(f"{label}: {MANIFEST}: {error}") from None
        built.sort(key=lambda f: (f.path != MANIFEST, f.path))
        return cls(path=path, frontmatter=frontmatter, files=tuple(built), scheme=scheme)


#: What produces a dynamic skill's file on each read: text, or bytes (a blob).
FileReader = Callable[[], "str | bytes | Awaitable[str | bytes]"]


@attrs.frozen
class DynamicSkill(_Addressed):
    """A skill whose content is generated on each read, so no digests can be published:
    its entry says ``"resources": "dynamic"`` and hosts may decline it. Its files are
    known by path (for directory reads); each read calls the file's reader. The
    ``SKILL.md`` it generates must carry the declared frontmatter: one that does not is
    not served (the read fails with -32603), since a host would refuse it anyway.
    Build one with :meth:`from_readers`."""

    path: str
    frontmatter: Mapping[str, FrontmatterValue]
    readers: Mapping[str, FileReader]
    mime_types: Mapping[str, str]
    scheme: str = "skill"

    def entry(self) -> dict[str, Any]:
        """The skill's entry: its ``SKILL.md`` URI, its frontmatter, ``"dynamic"``."""
        return {"uri": self.uri, "frontmatter": dict(self.frontmatter), "resources": "dynamic"}

    @classmethod
    def from_readers(
        cls,
        path: str,
        frontmatter: Mapping[str, FrontmatterValue],
        readers: Mapping[str, FileReader],
        *,
        mime_types: Mapping[str, str] | None = None,
        scheme: str = "skill",
        max_files: int = MAX_SKILL_FILES,
    ) -> DynamicSkill:
        """A dynamic skill at ``path`` with ``frontmatter`` (checked as a ``SKILL.md``'s
        is) and a reader for each file by relative path, ``SKILL.md`` among them.

        Raises:
            SkillFormatError: naming the rule broken.
        """
        _check_skill_path(path)
        label = f"skill {path!r}"
        if len(readers) > max_files:
            raise SkillFormatError(
                f"{label} has {len(readers)} files, more than the limit of {max_files} "
                "files per skill (SKILL.md included)"
            )
        for relative in readers:
            _check_file_path(relative, label)
        if MANIFEST not in readers:
            raise SkillFormatError(f"{label} has no {MANIFEST} reader")
        try:
            check_frontmatter(frontmatter, directory=path.rsplit("/", 1)[-1])
        except SkillFormatError as error:
            raise SkillFormatError(f"{label}: {error}") from None
        types = {
            relative: (mime_types or {}).get(relative) or _guess_mime_type(relative, b"")
            for relative in readers
        }
        ordered = dict(sorted(readers.items(), key=lambda item: (item[0] != MANIFEST, item[0])))
        return cls(
            path=path,
            frontmatter=dict(frontmatter),
            readers=ordered,
            mime_types=types,
            scheme=scheme,
        )


def skills_from_directory(
    root: str | os.PathLike[str],
    *,
    prefix: str = "",
    scheme: str = "skill",
    max_files: int = MAX_SKILL_FILES,
    max_bytes: int = MAX_SKILL_BYTES,
) -> list[Skill]:
    """Every skill under ``root``: each directory holding a ``SKILL.md`` is a skill whose
    path is the directory's path relative to ``root`` (after ``prefix``, if given), and
    whose files are every file under that directory (a nested skill's files too, as
    the extension says). Names starting with a dot are left out; a symbolic link to a file
    is followed only when it stays inside ``root``, and links to directories are not
    followed. The limits are checked from the files' sizes before any is read; then every
    file is read now (blocking: call it before serving, as you would build any other
    configuration).

    Raises:
        SkillFormatError: a skill breaks a rule (naming the skill, file and rule), a
            link leads out of ``root``, or ``root`` holds no skill.
        OSError: ``root`` or a file in it cannot be read.
    """
    base = Path(root).resolve(strict=True)
    if not base.is_dir():
        raise SkillFormatError(f"{os.fspath(root)!r} is not a directory")
    skills = []
    for directory, subdirectories, filenames in os.walk(base):
        subdirectories[:] = sorted(d for d in subdirectories if not d.startswith("."))
        if MANIFEST not in filenames:
            continue
        here = Path(directory)
        relative = here.relative_to(base).as_posix()
        if relative == ".":
            raise SkillFormatError(
                f"{os.fspath(root)!r} is itself a skill: pass the directory that holds it"
            )
        path = f"{prefix.strip('/')}/{relative}" if prefix.strip("/") else relative
        files = {name: _read_inside(base, here / name) for name in _files_under(here)}
        skills.append(
            Skill.from_files(path, files, scheme=scheme, max_files=max_files, max_bytes=max_bytes)
        )
    if not skills:
        raise SkillFormatError(f"{os.fspath(root)!r} holds no skill (no {MANIFEST} below it)")
    return skills


def _files_under(directory: Path) -> list[str]:
    """The files under ``directory`` by ``/``-separated relative path, dot names left out."""
    found = []
    for here, subdirectories, filenames in os.walk(directory):
        subdirectories[:] = sorted(d for d in subdirectories if not d.startswith("."))
        for name in sorted(filenames):
            if not name.startswith("."):
                found.append((Path(here) / name).relative_to(directory).as_posix())
    return found


def _check_sizes(
    directory: Path, names: list[str], path: str, max_files: int, max_bytes: int
) -> None:
    """The limits, from the file system, before anything is read (a huge file is refused,
    not loaded)."""
    if len(names) > max_files:
        raise SkillFormatError(
            f"skill {path!r} has {len(names)} files, more than the limit of {max_files} "
            "files per skill (SKILL.md included)"
        )
    total = 0
    for name in names:
        total += (directory / name).stat().st_size
        if total > max_bytes:
            raise SkillFormatError(
                f"skill {path!r} holds more than the limit of {max_bytes} bytes per skill "
                f"(reached at {name!r})"
            )


def _read_inside(base: Path, file: Path) -> bytes:
    resolved = file.resolve(strict=True)
    if not resolved.is_relative_to(base):
        raise SkillFormatError(f"{file} leads outside {base} (a symbolic link): not served")
    return resolved.read_bytes()


def _check_skill_path(path: str) -> None:
    if not isinstance(path, str) or not path or path != path.strip("/"):
        raise SkillFormatError(
            f"skill path {path!r}: one or more '/'-separated segments, no leading or trailing '/'"
        )
    segments = path.split("/")
    for segment in segments[:-1]:
        if segment in ("", ".", "..") or "\\" in segment or "?" in segment or "#" in segment:
            raise SkillFormatError(f"skill path {path!r}: segment {segment!r} is not allowed")
    check_skill_name(
        segments[-1], where=f"skill path {path!r}: its last segment (the skill's name)"
    )


def _check_file_path(path: str, label: str) -> None:
    parts = PurePosixPath(path).parts if isinstance(path, str) else ()
    if (
        not parts
        or path.startswith("/")
        or any(p in ("", ".", "..") for p in path.split("/"))
        or "\\" in path
        or "?" in path
        or "#" in path
    ):
        raise SkillFormatError(
            f"{label}: file path {path!r} must be relative, '/'-separated, without '.', "
            "'..', '?' or '#'"
        )


def _guess_mime_type(path: str, data: bytes) -> str:
    suffix = PurePosixPath(path).suffix.lower()
    if suffix in _MIME_TYPES:
        return _MIME_TYPES[suffix]
    guessed, _ = mimetypes.guess_type(path, strict=False)
    if guessed is not None:
        return guessed
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "application/octet-stream"
    return "text/plain"


def as_skills(
    source: str | os.PathLike[str] | Skill | DynamicSkill | Iterable[Skill | DynamicSkill],
) -> list[Skill | DynamicSkill]:
    """What :meth:`Server.add_skills` accepts, as a list of skills."""
    if isinstance(source, Skill | DynamicSkill):
        return [source]
    if isinstance(source, (str, os.PathLike)):
        return list(skills_from_directory(source))
    skills = list(source)
    for skill in skills:
        if not isinstance(skill, Skill | DynamicSkill):
            raise TypeError(f"expected Skill objects or a directory, got {skill!r:.80}")
    return skills
