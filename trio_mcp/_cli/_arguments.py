"""Tool arguments written ``key=value`` on the command line, typed by the tool's input schema:
``n=3`` is the integer 3 where the schema says integer, the string ``"3"`` where it says
string, and JSON where it says object or array; a value that fits none of the types the
schema allows is a :exc:`CliError` naming the parameter and the types."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson

from .._types._tools import Tool
from ._errors import CliError

__all__ = ["parse_pairs", "typed_arguments"]

_INTEGER = re.compile(r"[+-]?\d+")
_ARTICLE = {"integer": "an integer", "object": "an object", "array": "an array"}


def parse_pairs(pairs: Sequence[str], what: str = "a tool argument") -> dict[str, str]:
    """``KEY=VALUE`` items as a mapping of texts (the value may contain ``=``)."""
    found: dict[str, str] = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals or not key:
            raise CliError(f"{what} is KEY=VALUE, not {pair!r}")
        if key in found:
            raise CliError(f"argument {key!r} is given twice")
        found[key] = value
    return found


def typed_arguments(tool: Tool, pairs: Mapping[str, str]) -> dict[str, Any]:
    """The values of ``pairs``, each typed by the schema of its parameter in ``tool``.

    A key the schema does not list is refused when the schema lists properties and does not
    explicitly allow others (``additionalProperties``); a parameter whose schema names no
    type is read as JSON if it is JSON, else as a string.
    """
    schema = tool.input_schema
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    extra = schema.get("additionalProperties")
    # Listed properties and no word on others: a key not listed is most likely a typo.
    closed = bool(properties) and (extra is None or extra is False)
    typed = {}
    for key, text in pairs.items():
        parameter = properties.get(key)
        if parameter is None and closed:
            raise CliError(
                f"tool {tool.name} has no parameter {key!r} (it takes {', '.join(properties)})"
            )
        if parameter is None:
            parameter = extra if isinstance(extra, Mapping) else {}
        typed[key] = _typed(tool.name, key, text, parameter)
    return typed


def _typed(tool: str, key: str, text: str, schema: Any) -> Any:
    if not isinstance(schema, Mapping):
        return _json_or_text(text)
    choices = _choices(schema)
    if choices is not None:
        for choice in choices:
            if (choice if isinstance(choice, str) else orjson.dumps(choice).decode()) == text:
                return choice
        allowed = ", ".join(c if isinstance(c, str) else orjson.dumps(c).decode() for c in choices)
        raise CliError(f"{key}={text!r}: tool {tool} takes one of {allowed} for {key}")
    types = list(dict.fromkeys(_types(schema)))
    if not types:
        return _json_or_text(text)
    for kind in ("null", "boolean", "integer", "number", "object", "array", "string"):
        if kind in types:
            found, value = _as(kind, text)
            if found:
                return value
    expected = " or ".join(_ARTICLE.get(kind, f"a {kind}") for kind in types)
    raise CliError(f"{key}={text!r}: tool {tool} expects {expected} for {key}")


def _types(schema: Mapping[str, Any]) -> Iterable[str]:
    """The JSON types ``schema`` allows (through ``type``, ``anyOf`` and ``oneOf``)."""
    kind = schema.get("type")
    if isinstance(kind, str):
        yield kind
    elif isinstance(kind, list):
        yield from (k for k in kind if isinstance(k, str))
    for combinator in ("anyOf", "oneOf"):
        branches = schema.get(combinator)
        for branch in branches if isinstance(branches, list) else ():
            if isinstance(branch, Mapping):
                yield from _types(branch)


def _choices(schema: Mapping[str, Any]) -> list[Any] | None:
    """The values an ``enum`` or ``const`` schema allows, if it is one."""
    if isinstance(schema.get("enum"), list):
        return list(schema["enum"])
    if "const" in schema:
        return [schema["const"]]
    return None


def _as(kind: str, text: str) -> tuple[bool, Any]:
    """``(True, value)`` if ``text`` reads as a value of JSON type ``kind``."""
    if kind == "string":
        return True, text
    if kind == "null":
        return text == "null", None
    if kind == "boolean":
        return text in ("true", "false"), text == "true"
    if kind == "integer":
        return (True, int(text)) if _INTEGER.fullmatch(text.strip()) else (False, None)
    if kind == "number":
        if _INTEGER.fullmatch(text.strip()):
            return True, int(text)
        try:
            number = float(text)
        except ValueError:
            return False, None
        return math.isfinite(number), number
    if kind in ("object", "array"):
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            return False, None
        return isinstance(value, dict if kind == "object" else list), value
    return False, None


def _json_or_text(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return text
