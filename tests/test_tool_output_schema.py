"""A verbatim ``output_schema`` may be any JSON Schema: 2026-07-28 allows structured content
of any JSON type. Revisions 2025-06-18 and 2025-11-25 want ``"type": "object"``: their
peers get such a tool without ``outputSchema`` and its results without
``structuredContent`` (the text content still goes), and what we send validates against
each revision's schema."""

from __future__ import annotations

from typing import Any

import pytest
from feature_harness import open_pair
from jsonschema import Draft7Validator, Draft202012Validator
from spec_support import load_schema

from trio_mcp import Server, jsonrpc as rpc

MODERN = "2026-07-28"
OLDER = ["2025-11-25", "2025-06-18"]

NUMBERS = {"type": "array", "items": {"type": "integer"}}
EITHER = {"anyOf": [{"type": "object"}, {"type": "array"}]}
OBJECT = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def make_server() -> Server:
    server = Server("outputs")

    @server.tool(output_schema=NUMBERS)
    async def numbers() -> list[int]:
        return [1, 2, 3]

    @server.tool(output_schema={"type": "string"})
    async def word() -> str:
        return "hello"

    @server.tool(output_schema=EITHER)
    async def either() -> dict[str, int]:
        return {"n": 1}  # an object, but under a schema older peers may not be given

    @server.tool(output_schema=OBJECT)
    async def counted() -> dict[str, int]:
        return {"n": 2}

    @server.tool(output_schema=NUMBERS)
    async def wrong() -> Any:
        return ["not", "numbers"]

    return server


def last_results(pair: Any, method: str) -> list[Any]:
    """Every raw result the server sent for ``method``, in order."""
    ids = {
        m.id
        for m in pair.client_sent.sent
        if isinstance(m, rpc.JsonRpcRequest) and m.method == method
    }
    return [
        m.result for m in pair.server_sent.sent if isinstance(m, rpc.ResultResponse) and m.id in ids
    ]


def check(version: str, definition: str, document: Any) -> None:
    schema = load_schema(version)
    if schema is None:
        return  # the spec schemas are not here: the other assertions still hold
    key = "$defs" if "$defs" in schema else "definitions"
    root = {"$schema": schema["$schema"], key: schema[key], "$ref": f"#/{key}/{definition}"}
    cls = Draft202012Validator if "2020-12" in schema["$schema"] else Draft7Validator
    problems = [error.message for error in cls(root).iter_errors(document)]
    assert not problems, (definition, document, problems)


async def test_modern_peers_get_any_output_schema_and_structured_content() -> None:
    async with open_pair(make_server(), protocol_version=MODERN) as pair:
        tools = {tool.name: tool for tool in await pair.client.list_tools()}
        numbers = await pair.client.call_tool("numbers")
        word = await pair.client.call_tool("word")
        either = await pair.client.call_tool("either")
        wrong = await pair.client.call_tool("wrong")
        [listing] = last_results(pair, "tools/list")
        raw_results = last_results(pair, "tools/call")
    assert tools["numbers"].output_schema == NUMBERS
    assert tools["word"].output_schema == {"type": "string"}
    assert tools["either"].output_schema == EITHER
    assert (numbers.structured_content, word.structured_content) == ([1, 2, 3], "hello")
    assert either.structured_content == {"n": 1}
    assert numbers.content[0].text == "[1,2,3]"  # type: ignore[union-attr]
    # The server checks its own output against the schema, whatever its type.
    assert wrong.is_error
    assert "breaks its outputSchema" in wrong.content[0].text  # type: ignore[union-attr]
    for tool in listing["tools"]:
        check(MODERN, "Tool", tool)
    for result in raw_results:
        check(MODERN, "CallToolResult", result)


@pytest.mark.parametrize("version", OLDER)
async def test_older_peers_get_neither_the_schema_nor_structured_content(version: str) -> None:
    async with open_pair(make_server(), protocol_version=version) as pair:
        tools = {tool.name: tool for tool in await pair.client.list_tools()}
        numbers = await pair.client.call_tool("numbers")
        word = await pair.client.call_tool("word")
        either = await pair.client.call_tool("either")
        counted = await pair.client.call_tool("counted")
        [listing] = last_results(pair, "tools/list")
        raw_results = last_results(pair, "tools/call")
    for name in ("numbers", "word", "either", "wrong"):
        assert tools[name].output_schema is None
    assert tools["counted"].output_schema == OBJECT  # an object schema still goes
    for result in (numbers, word, either):
        assert result.structured_content is None
        assert not result.is_error
        assert result.content  # the text content is sent as ever
    assert word.content[0].text == '"hello"'  # type: ignore[union-attr]
    assert numbers.content[0].text == "[1,2,3]"  # type: ignore[union-attr]
    assert counted.structured_content == {"n": 2}
    for tool in listing["tools"]:
        assert "outputSchema" not in tool or tool["name"] == "counted"
        check(version, "Tool", tool)
    for result in raw_results:
        check(version, "CallToolResult", result)


async def test_the_listing_for_older_peers_follows_a_replaced_tool() -> None:
    server = make_server()
    spec = server.tools["numbers"]
    first = spec.tool_for("2025-11-25")
    assert first.output_schema is None
    assert spec.tool_for("2025-11-25") is first  # made once
    assert spec.tool_for(MODERN) is spec.tool

    async def numbers() -> list[int]:
        return [4]

    server.add_tool(numbers, output_schema={"type": "object"})
    assert server.tools["numbers"].tool_for("2025-11-25").output_schema == {"type": "object"}
