"""Form-mode elicitation schemas: what the spec allows, what each revision can read, and
checking an answer against the schema that asked for it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._jsonschema import SchemaValidator

__all__ = ["check_form_schema", "form_schema_for_2025_06_18", "schema_problems"]

_PRIMITIVE_TYPES = frozenset({"string", "number", "integer", "boolean"})


def check_form_schema(schema: Mapping[str, Any]) -> None:
    """Refuse a form-mode schema the spec does not allow (nested objects, arrays of
    anything but enum choices), before anything is sent.

    Raises:
        ValueError: what is wrong.
    """
    if schema.get("type") != "object":
        raise ValueError("an elicitation schema must be an object schema")
    properties = schema.get("properties", {})
    for name, prop in dict(properties).items():
        kind = prop.get("type") if isinstance(prop, Mapping) else None
        if kind in _PRIMITIVE_TYPES:
            continue
        items = prop.get("items") if kind == "array" else None
        if isinstance(items, Mapping) and ("enum" in items or "anyOf" in items):
            continue
        raise ValueError(
            f"elicitation property {name!r} must be a string, number, integer, boolean, or an "
            "array of enum choices (form mode allows flat objects of primitives only)"
        )


def form_schema_for_2025_06_18(schema: dict[str, Any]) -> dict[str, Any]:
    """A form schema as 2025-06-18 has them: a titled single-select (``oneOf`` of
    ``const``/``title``) becomes ``enum`` with ``enumNames``; multi-select enums did not
    exist yet.

    Raises:
        ValueError: the schema has a multi-select (array) property.
    """
    properties = dict(schema.get("properties", {}))
    for name, prop in properties.items():
        if prop.get("type") == "array":
            raise ValueError(
                f"elicitation property {name!r} is a multi-select, which protocol version "
                "2025-06-18 does not have"
            )
        if "oneOf" in prop:
            options = prop["oneOf"]
            converted = {k: v for k, v in prop.items() if k != "oneOf"}
            converted["enum"] = [option["const"] for option in options]
            converted["enumNames"] = [option.get("title", option["const"]) for option in options]
            properties[name] = converted
    return {**schema, "properties": properties}


def schema_problems(schema: Mapping[str, Any], value: Any) -> list[str]:
    """How ``value`` breaks ``schema`` (empty when it conforms)."""
    try:
        return SchemaValidator(schema).errors(value)
    except ValueError as exc:
        return [str(exc)]
