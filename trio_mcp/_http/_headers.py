"""The MCP request headers of Streamable HTTP (2026-07-28): names, value encoding, and the
tool parameters mirrored into ``Mcp-Param-*`` headers by ``x-mcp-header``.

Both sides use this module: a client encodes, a server decodes and checks
headers against the body.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import Any, Final

import attrs

__all__ = [
    "MCP_METHOD",
    "MCP_NAME",
    "MCP_PARAM_PREFIX",
    "MCP_PROTOCOL_VERSION",
    "MCP_SESSION_ID",
    "HeaderParam",
    "decode_value",
    "encode_value",
    "header_params",
    "name_source",
    "param_value_text",
]

MCP_PROTOCOL_VERSION: Final = "mcp-protocol-version"
MCP_METHOD: Final = "mcp-method"
MCP_NAME: Final = "mcp-name"
MCP_SESSION_ID: Final = "mcp-session-id"
MCP_PARAM_PREFIX: Final = "mcp-param-"
LAST_EVENT_ID: Final = "last-event-id"

_PREFIX: Final = "=?base64?"
_SUFFIX: Final = "?="
#: RFC 9110 ``tchar``.
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_STRICT_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")
_SAFE_CHARS = re.compile(r"[\x20-\x7e]*")
#: JavaScript's ``Number.MAX_SAFE_INTEGER``: integers beyond it are not header-safe.
MAX_SAFE_INTEGER: Final = 2**53 - 1


def encode_value(value: str) -> str:
    """A header value for ``value``: as is when it is plain visible ASCII with no leading or
    trailing whitespace (and does not look like the sentinel), else ``=?base64?...?=``."""
    plain = (
        _SAFE_CHARS.fullmatch(value) is not None
        and value == value.strip(" \t")
        and not (value.startswith(_PREFIX) and value.endswith(_SUFFIX))
    )
    if plain:
        return value
    return _PREFIX + base64.b64encode(value.encode("utf-8")).decode("ascii") + _SUFFIX


def decode_value(header: str) -> str:
    """The value a header carries: surrounding whitespace trimmed, the Base64 sentinel decoded
    (strict: padding required, standard alphabet).

    Raises:
        ValueError: an invalid character, or a sentinel whose Base64 (or UTF-8) is invalid.
    """
    value = header.strip(" \t")
    if any((ord(c) < 0x20 and c != "\t") or ord(c) == 0x7F for c in value):
        raise ValueError("header value contains control characters")
    if (
        value.startswith(_PREFIX)
        and value.endswith(_SUFFIX)
        and len(value) >= len(_PREFIX) + len(_SUFFIX)
    ):
        encoded = value[len(_PREFIX) : -len(_SUFFIX)]
        if not _STRICT_BASE64.fullmatch(encoded):
            raise ValueError("invalid Base64 in header value")
        try:
            return base64.b64decode(encoded, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            raise ValueError("invalid Base64 in header value") from None
    return value


def name_source(method: str, params: Mapping[str, Any] | None) -> str | None:
    """The body value ``Mcp-Name`` mirrors for ``method``, if it has one."""
    if params is None:
        return None
    if method in ("tools/call", "prompts/get"):
        name = params.get("name")
    elif method == "resources/read":
        name = params.get("uri")
    elif method in ("tasks/get", "tasks/update", "tasks/cancel"):
        name = params.get("taskId")  # the tasks extension's routing header
    else:
        return None
    return name if isinstance(name, str) else None


@attrs.frozen
class HeaderParam:
    """One tool parameter mirrored into a header: its path in the arguments, the header name
    part (``Mcp-Param-{name}``) and its JSON type."""

    path: tuple[str, ...]
    name: str
    type: str

    @property
    def header(self) -> str:
        return MCP_PARAM_PREFIX + self.name.lower()

    def value_in(self, arguments: Mapping[str, Any] | None) -> Any:
        """The value at this parameter's path in ``arguments`` (``None`` if absent)."""
        node: Any = arguments
        for key in self.path:
            if not isinstance(node, Mapping) or key not in node:
                return None
            node = node[key]
        return node


_HEADER_TYPES = ("string", "integer", "boolean")
_FORBIDDEN_PATHS = (
    "items",
    "prefixItems",
    "additionalProperties",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "$ref",
    "$defs",
    "definitions",
    "patternProperties",
    "dependentSchemas",
    "contains",
)


def header_params(input_schema: Mapping[str, Any]) -> list[HeaderParam]:
    """The ``x-mcp-header`` parameters of a tool's input schema.

    Raises:
        ValueError: an annotation breaks the spec's rules (empty, not an RFC 9110 token,
            duplicated case-insensitively, on a non-primitive or ``number`` type, or not
            statically reachable through ``properties`` keys). A client must then drop the
            tool; a server must not register it.
    """
    found: list[HeaderParam] = []
    _collect(input_schema, (), found, reachable=True)
    seen: set[str] = set()
    for param in found:
        lowered = param.name.lower()
        if lowered in seen:
            raise ValueError(f"x-mcp-header {param.name!r} is not unique (case-insensitively)")
        seen.add(lowered)
    return found


def _collect(
    schema: Any, path: tuple[str, ...], found: list[HeaderParam], *, reachable: bool
) -> None:
    if isinstance(schema, list):
        for item in schema:
            _collect(item, path, found, reachable=False)
        return
    if not isinstance(schema, Mapping):
        return
    if "x-mcp-header" in schema:
        name = schema["x-mcp-header"]
        if not reachable or not path:
            raise ValueError(
                f"x-mcp-header {name!r} is not on a property reachable through 'properties'"
            )
        if not isinstance(name, str) or not name:
            raise ValueError("x-mcp-header must be a non-empty string")
        if not _TOKEN.fullmatch(name):
            raise ValueError(f"x-mcp-header {name!r} is not an HTTP token")
        kind = schema.get("type")
        if kind not in _HEADER_TYPES:
            raise ValueError(
                f"x-mcp-header {name!r} is on a {kind or 'untyped'} parameter; only "
                "string, integer and boolean may be mirrored"
            )
        found.append(HeaderParam(path, name, kind))
    for key, value in schema.items():
        if key == "properties" and isinstance(value, Mapping):
            for prop, sub in value.items():
                _collect(sub, (*path, prop), found, reachable=reachable)
        elif key in _FORBIDDEN_PATHS or (
            isinstance(value, (Mapping, list))
            and key
            not in (
                "x-mcp-header",
                "enum",
                "const",
                "default",
                "examples",
            )
        ):
            _collect(value, path, found, reachable=False)


def param_value_text(value: Any) -> str | None:
    """The text a parameter value is mirrored as (before encoding): strings as is, integers in
    decimal, booleans as ``true``/``false``; ``None`` for null (then the header is omitted).

    Raises:
        ValueError: a value of another type, or an integer beyond the safe range.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise ValueError("integer beyond the safe range for a header")
        return str(value)
    if isinstance(value, float) and value.is_integer() and abs(value) <= MAX_SAFE_INTEGER:
        return str(int(value))
    if isinstance(value, str):
        return value
    raise ValueError(f"{type(value).__name__} values cannot be mirrored into a header")
