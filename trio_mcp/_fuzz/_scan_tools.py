"""Which of a server's tools the scans call, and with what: plain arguments that fit a tool's
``inputSchema``, built without Hypothesis (a scan is a fixed sequence, not an example)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["minimal_arguments", "task_tools", "text_tools"]

JsonObject = dict[str, Any]


def _value(schema: Any, text: str, depth: int) -> Any:
    if not isinstance(schema, Mapping) or depth > 4:
        return text
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "string":
        return text
    if kind in ("number", "integer"):
        low = schema.get("minimum", schema.get("exclusiveMinimum"))
        high = schema.get("maximum", schema.get("exclusiveMaximum"))
        value = 1 if low is None or low <= 1 else low + (1 if "exclusiveMinimum" in schema else 0)
        if high is not None and value > high:
            value = high
        return int(value) if kind == "integer" else value
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    if kind == "array":
        return []
    if kind == "object" or "properties" in schema:
        return minimal_arguments(schema, text, depth + 1)
    return text


def minimal_arguments(schema: Any, text: str = "x", depth: int = 0) -> JsonObject:
    """Arguments for an object ``schema``: each required property, with its ``const``,
    first ``enum`` value or ``default``, else ``text`` for a string, ``1`` for a number
    (within its bounds), ``False``, ``[]`` or an object built the same way."""
    if not isinstance(schema, Mapping):
        return {}
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    required = schema.get("required")
    names = required if isinstance(required, list) else []
    return {
        name: _value(properties.get(name), text, depth) for name in names if isinstance(name, str)
    }


def text_tools(tools: Sequence[JsonObject]) -> list[tuple[str, str]]:
    """The tools with a required string argument, and its name: a marker passed there is
    likely to come back in the answer (``echo(text)``)."""
    found = []
    for tool in tools:
        schema = tool.get("inputSchema")
        if not isinstance(schema, Mapping):
            continue
        properties = schema.get("properties")
        required = schema.get("required")
        if not isinstance(properties, Mapping) or not isinstance(required, list):
            continue
        for name in required:
            prop = properties.get(name)
            if isinstance(prop, Mapping) and prop.get("type") == "string" and "enum" not in prop:
                found.append((str(tool["name"]), str(name)))
                break
    return found


def task_tools(tools: Sequence[JsonObject]) -> list[JsonObject]:
    """The tools that may run as tasks (``execution.taskSupport`` optional or required)."""
    found = []
    for tool in tools:
        execution = tool.get("execution")
        support = execution.get("taskSupport") if isinstance(execution, Mapping) else None
        if support in ("optional", "required", "always"):
            found.append(tool)
    return found
