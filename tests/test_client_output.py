"""The client's check of structured content against a tool's ``outputSchema``."""

from __future__ import annotations

import pytest
from schema_host import serving_schemas

from trio_mcp import ProtocolError
from trio_mcp._client._output import OutputSchemas
from trio_mcp.types import CallToolResult, TextContent, Tool


def remembering(output_schema: dict[str, object]) -> OutputSchemas:
    schemas = OutputSchemas()
    schemas.remember(Tool(name="t", input_schema={"type": "object"}, output_schema=output_schema))
    return schemas


def result(structured: object) -> CallToolResult:
    return CallToolResult(content=[TextContent(text="x")], structured_content=structured)


def test_structured_content_is_checked() -> None:
    schemas = remembering({"type": "object", "properties": {"a": {"type": "string"}}})
    schemas.check("t", result({"a": "x"}))
    with pytest.raises(ProtocolError, match="breaks its outputSchema"):
        schemas.check("t", result({"a": 1}))
    with pytest.raises(ProtocolError, match="no structured content"):
        schemas.check("t", result(None))


def test_remote_refs_are_never_fetched() -> None:
    """The ``$ref`` points at a live local server whose schema would accept the value:
    fetching it would both hit the server and let the content through."""
    with serving_schemas() as host:
        schemas = remembering(
            {"type": "object", "properties": {"a": {"$ref": f"{host.url}/schemas/a.json"}}}
        )
        with pytest.raises(ProtocolError, match="cannot validate"):
            schemas.check("t", result({"a": "x"}))
    assert host.hits == []
