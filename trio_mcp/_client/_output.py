"""Checking a tool's structured content against the ``outputSchema`` it declared (the
spec says clients SHOULD)."""

from __future__ import annotations

from typing import Any

from .._errors import ProtocolError
from .._jsonschema import SchemaValidator
from .._types._tools import CallToolResult, Tool

__all__ = ["OutputSchemas"]


class OutputSchemas:
    """The output schemas of the tools a client has listed, compiled on first use."""

    def __init__(self) -> None:
        self._schemas: dict[str, dict[str, Any] | None] = {}
        self._validators: dict[str, SchemaValidator] = {}

    def remember(self, tool: Tool) -> None:
        self._schemas[tool.name] = tool.output_schema
        self._validators.pop(tool.name, None)

    def clear(self) -> None:
        """Forget every schema (the tool list changed)."""
        self._schemas.clear()
        self._validators.clear()

    def check(self, name: str, result: CallToolResult) -> bool:
        """Check ``result`` of tool ``name`` (nothing to do for a tool without a schema).
        Returns whether the tool is known (listed); an unknown tool's result is not checked.

        Raises:
            ProtocolError: the structured content is missing or breaks the schema, or
                the schema itself is invalid.
        """
        schema = self._schemas.get(name)
        if schema is None:
            return name in self._schemas
        if result.structured_content is None:
            raise ProtocolError(
                f"tool {name!r} declares an outputSchema but returned no structured content"
            )
        validator = self._validators.get(name)
        if validator is None:
            try:
                validator = self._validators[name] = SchemaValidator(schema)
            except ValueError as exc:
                raise ProtocolError(f"tool {name!r} has an invalid outputSchema: {exc}") from None
        problems = validator.errors(result.structured_content)
        if problems:
            raise ProtocolError(
                f"tool {name!r} returned structured content that breaks its outputSchema: "
                + "; ".join(problems)
            )
        return True
