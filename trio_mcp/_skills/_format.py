"""What a skill's server and its host agree on: the extension's identifier, the Agent
Skills naming rules, the ``SKILL.md`` frontmatter, digests and the per-skill limits.

No I/O here: both sides call these on bytes they already hold.

The frontmatter reader understands the YAML that Agent Skills frontmatter uses:
``key: scalar`` lines (plain, single- or double-quoted scalars; ``true``/``false``,
``null`` and numbers as YAML 1.2's core schema reads them, so ``yes`` and ``2024-01-01``
stay strings), ``|`` and ``>`` block scalars at the top level, and one level of nesting
(``metadata:`` followed by indented ``key: scalar`` lines). Anything else (lists,
anchors, flow collections, deeper nesting) is refused with the line
that was not understood, rather than read differently from a YAML library: on the
server a skill that cannot be read is not served, and on the host a frontmatter that
cannot be compared fails verification.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping

__all__ = [
    "COMPATIBILITY_MAX",
    "DESCRIPTION_MAX",
    "SKILLS_EXTENSION",
    "MAX_SKILL_BYTES",
    "MAX_SKILL_FILES",
    "NAME_MAX",
    "FrontmatterValue",
    "Scalar",
    "SkillFormatError",
    "check_frontmatter",
    "check_skill_name",
    "skill_digest",
    "read_frontmatter",
]

#: The extension's identifier in ``capabilities.extensions``.
SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
#: The SEP's per-skill limits: files (``SKILL.md`` included) and total bytes.
MAX_SKILL_FILES = 512
MAX_SKILL_BYTES = 16 * 1024 * 1024
#: The Agent Skills limits on ``name`` and ``description`` (characters).
NAME_MAX = 64
DESCRIPTION_MAX = 1024
COMPATIBILITY_MAX = 500

#: A frontmatter scalar, as JSON has it.
Scalar = str | int | float | bool | None
#: A frontmatter value: a scalar, or (one level down) a mapping of scalars.
FrontmatterValue = Scalar | dict[str, Scalar]

_NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
_BLOCK = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)^---[ \t]*(?:\r?\n|\Z)", re.DOTALL | re.MULTILINE)
# YAML 1.2's core schema (what YAML libraries of other languages read): ints, floats.
_INT = re.compile(r"[-+]?[0-9]+")
_OCTAL = re.compile(r"0o[0-7]+")
_HEX = re.compile(r"0x[0-9a-fA-F]+")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_BLOCK_SCALAR = re.compile(r"([|>])([-+]?)")
_NOT_JSON = re.compile(r"[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)")


class SkillFormatError(ValueError):
    """A skill that breaks a rule of the Agent Skills format or of the extension: the
    message names the file or field and the rule."""


def skill_digest(data: bytes) -> str:
    """The extension's digest of a file's raw bytes: ``sha256:`` and 64 lowercase hex."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def check_skill_name(name: object, *, where: str = "name") -> str:
    """Check a skill name against the Agent Skills rules and return it.

    Raises:
        SkillFormatError: naming the rule broken (1 to 64 characters; lowercase
            letters, digits and hyphens only; no hyphen first, last or doubled).
    """
    if not isinstance(name, str):
        raise SkillFormatError(f"{where}: a skill name is a string, got {type(name).__name__}")
    if not 1 <= len(name) <= NAME_MAX:
        raise SkillFormatError(
            f"{where}: a skill name has 1 to {NAME_MAX} characters, {name!r:.80} has {len(name)}"
        )
    if _NAME.fullmatch(name) is None:
        if name.startswith("-") or name.endswith("-"):
            rule = "must not start or end with a hyphen"
        elif "--" in name:
            rule = "must not contain two hyphens in a row"
        else:
            rule = "may hold only lowercase letters, digits and hyphens"
        raise SkillFormatError(f"{where}: a skill name {rule}, got {name!r}")
    return name


def check_frontmatter(frontmatter: Mapping[str, object], *, directory: str) -> None:
    """Check the fields the Agent Skills format requires of a ``SKILL.md``: a valid
    ``name`` equal to the skill's ``directory`` (its last path segment), a
    ``description`` of 1 to 1024 characters, and when present a ``compatibility`` of 1 to
    500 characters and a ``metadata`` mapping.

    Raises:
        SkillFormatError: naming the field and the rule.
    """
    name = check_skill_name(frontmatter.get("name"), where="frontmatter name")
    if name != directory:
        raise SkillFormatError(
            f"frontmatter name {name!r} must equal the skill's directory name {directory!r}"
        )
    description = frontmatter.get("description")
    if not isinstance(description, str) or not 1 <= len(description) <= DESCRIPTION_MAX:
        raise SkillFormatError(
            f"frontmatter description must be a string of 1 to {DESCRIPTION_MAX} characters"
        )
    compatibility = frontmatter.get("compatibility")
    if compatibility is not None and (
        not isinstance(compatibility, str) or not 1 <= len(compatibility) <= COMPATIBILITY_MAX
    ):
        raise SkillFormatError(
            f"frontmatter compatibility must be a string of 1 to {COMPATIBILITY_MAX} characters"
        )
    metadata = frontmatter.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise SkillFormatError("frontmatter metadata must be a mapping of keys to values")


def read_frontmatter(markdown: str) -> dict[str, FrontmatterValue]:
    """The YAML frontmatter at the top of a ``SKILL.md``, as JSON-compatible values.

    Raises:
        SkillFormatError: there is none, or a line is not of the form this reader
            understands (see the module's docstring); the message quotes the line.
    """
    match = _BLOCK.match(markdown)
    if match is None:
        raise SkillFormatError("SKILL.md must begin with YAML frontmatter between --- lines")
    lines = match.group(1).splitlines()
    fields: dict[str, FrontmatterValue] = {}
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if _blank(line):
            continue
        if line[0] in " \t":
            raise SkillFormatError(f"frontmatter: unexpected indentation in {line!r}")
        key, value = _key_value(line.strip(), line)
        if key in fields:
            raise SkillFormatError(f"frontmatter: key {key!r} appears twice")
        block = _BLOCK_SCALAR.fullmatch(value or "")
        if block is not None:
            fields[key], index = _block_scalar(lines, index, block.group(1), block.group(2), line)
        elif value is None:
            fields[key], index = _mapping(lines, index)
        else:
            fields[key] = _scalar(value, line)
    return fields


def _blank(line: str) -> bool:
    return not line.strip() or line.lstrip().startswith("#")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _mapping(lines: list[str], index: int) -> tuple[dict[str, Scalar] | None, int]:
    """The indented ``key: scalar`` lines from ``index`` (``None`` if there are none, as
    YAML reads an empty value), and the index after them."""
    mapping: dict[str, Scalar] = {}
    indent = 0
    while index < len(lines) and (_blank(lines[index]) or lines[index][0] in " \t"):
        line = lines[index]
        index += 1
        if _blank(line):
            continue
        if "\t" in line[: _indent(line) + 1]:
            raise SkillFormatError(f"frontmatter: a tab in indentation: {line!r}")
        indent = indent or _indent(line)
        if _indent(line) != indent:
            raise SkillFormatError(f"frontmatter: inconsistent indentation in {line!r}")
        key, value = _key_value(line.strip(), line)
        if value is None or _BLOCK_SCALAR.fullmatch(value):
            raise SkillFormatError(f"frontmatter: nesting deeper than one level in {line!r}")
        if key in mapping:
            raise SkillFormatError(f"frontmatter: key {key!r} appears twice")
        mapping[key] = _scalar(value, line)
    return (mapping or None), index


def _block_scalar(
    lines: list[str], index: int, style: str, chomping: str, opening: str
) -> tuple[str, int]:
    """A ``|`` (literal) or ``>`` (folded) block scalar whose lines start at ``index``, with
    its chomping (``-`` strip, ``+`` keep, none: one final newline), and the index after
    it. A folded scalar with lines indented deeper than its first is refused (YAML keeps
    those lines apart, which this reader does not)."""
    body: list[str] = []
    indent = 0
    while index < len(lines) and (not lines[index].strip() or lines[index][0] in " \t"):
        line = lines[index]
        index += 1
        if not line.strip():
            body.append("")
            continue
        if "\t" in line[: _indent(line) + 1]:
            raise SkillFormatError(f"frontmatter: a tab in indentation: {line!r}")
        indent = indent or _indent(line)
        if _indent(line) < indent:
            raise SkillFormatError(f"frontmatter: inconsistent indentation in {line!r}")
        if style == ">" and _indent(line) > indent:
            raise SkillFormatError(
                f"frontmatter: a folded (>) value with deeper indented lines is not "
                f"understood (use |): {line!r}"
            )
        body.append(line[indent:])
    trailing = 0
    while body and not body[-1]:
        body.pop()
        trailing += 1
    if style == "|":
        text = "\n".join(body)
    else:
        text = ""
        for position, part in enumerate(body):
            if position == 0:
                text = part
            elif part == "":
                text += "\n"
            elif body[position - 1] == "":
                text += part
            else:
                text += " " + part
    if not body:
        return ("\n" * trailing if chomping == "+" else ""), index
    if chomping == "-":
        return text, index
    if chomping == "+":
        return text + "\n" * (1 + trailing), index
    return text + "\n", index


def _key_value(text: str, line: str) -> tuple[str, str | None]:
    """``key`` and its value text, or ``None`` for a ``key:`` that opens a mapping."""
    if text.startswith(("- ", '"', "'", "?", "[", "{")):
        raise SkillFormatError(f"frontmatter: not a 'key: value' line: {line!r}")
    key, colon, rest = text.partition(":")
    if not colon or not key or key != key.strip() or (rest and rest[0] not in " \t"):
        raise SkillFormatError(f"frontmatter: not a 'key: value' line: {line!r}")
    rest = rest.strip()
    return key, (rest or None)


def _scalar(value: str, line: str) -> Scalar:
    if value.startswith('"'):
        try:
            text = json.loads(value)  # a JSON string is a YAML double-quoted scalar
        except ValueError:
            text = None
        if not isinstance(text, str):
            raise SkillFormatError(f"frontmatter: double-quoted value not understood: {line!r}")
        return text
    if value.startswith("'"):
        if len(value) < 2 or not value.endswith("'") or "'" in value[1:-1].replace("''", ""):
            raise SkillFormatError(f"frontmatter: single-quoted value not understood: {line!r}")
        return value[1:-1].replace("''", "'")
    if value[0] in "[]{}|>&*!%@`#," or ": " in value or " #" in value or value.endswith(":"):
        raise SkillFormatError(
            f"frontmatter: value not understood (quote it, or use flat 'key: value' "
            f"lines): {line!r}"
        )
    if value in ("null", "Null", "NULL", "~"):
        return None
    if value in ("true", "True", "TRUE", "false", "False", "FALSE"):
        return value.lower() == "true"
    if _INT.fullmatch(value):
        return int(value)
    if _OCTAL.fullmatch(value):
        return int(value[2:], 8)
    if _HEX.fullmatch(value):
        return int(value[2:], 16)
    if _FLOAT.fullmatch(value):
        return float(value)
    if _NOT_JSON.fullmatch(value):
        raise SkillFormatError(f"frontmatter: {value} has no JSON form (quote it): {line!r}")
    return value
