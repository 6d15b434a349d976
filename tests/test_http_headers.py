"""MCP header values and x-mcp-header annotations (Streamable HTTP, 2026-07-28)."""

from __future__ import annotations

from typing import Any

import pytest

from trio_mcp._http._headers import (
    decode_value,
    encode_value,
    header_params,
    name_source,
    param_value_text,
)


@pytest.mark.parametrize(
    ("value", "header"),
    [
        ("us-west1", "us-west1"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        ("\tindented", "=?base64?CWluZGVudGVk?="),
        ("us west 1", "us west 1"),
        ("", ""),
        ("abc\n", "=?base64?YWJjCg==?="),
    ],
)
def test_the_spec_examples_encode_and_decode(value: str, header: str) -> None:
    assert encode_value(value) == header
    assert decode_value(header) == value


@pytest.mark.parametrize(
    "header",
    ["=?base64?SGVsbG8?=", "=?base64?SGVs!!!bG8=?=", "=?base64?/w==?=", "a\x01b", "abc\n"],
)
def test_invalid_sentinels_and_characters_are_rejected(header: str) -> None:
    with pytest.raises(ValueError):
        decode_value(header)


@pytest.mark.parametrize("header", ["SGVsbG8=", "=?base64?SGVsbG8=", "  spaced out  "])
def test_values_without_the_full_sentinel_are_literal(header: str) -> None:
    assert decode_value(header) == header.strip()


def test_header_params_follow_properties_chains() -> None:
    params = header_params(
        {
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "nested": {
                    "type": "object",
                    "properties": {"level": {"type": "integer", "x-mcp-header": "Level"}},
                },
                "plain": {"type": "string"},
            },
        }
    )
    assert [(p.path, p.name, p.type, p.header) for p in params] == [
        (("region",), "Region", "string", "mcp-param-region"),
        (("nested", "level"), "Level", "integer", "mcp-param-level"),
    ]
    assert params[1].value_in({"nested": {"level": 3}}) == 3
    assert params[1].value_in({"nested": {}}) is None


@pytest.mark.parametrize(
    "schema",
    [
        {"properties": {"a": {"type": "string", "x-mcp-header": ""}}},
        {"properties": {"a": {"type": "object", "x-mcp-header": "A"}}},
        {"properties": {"a": {"type": "array", "x-mcp-header": "A"}}},
        {"properties": {"a": {"type": "null", "x-mcp-header": "A"}}},
        {"properties": {"a": {"type": "number", "x-mcp-header": "A"}}},
        {
            "properties": {
                "a": {"type": "string", "x-mcp-header": "R"},
                "b": {"type": "string", "x-mcp-header": "R"},
            }
        },
        {
            "properties": {
                "a": {"type": "string", "x-mcp-header": "MyField"},
                "b": {"type": "string", "x-mcp-header": "myfield"},
            }
        },
        {"properties": {"a": {"type": "string", "x-mcp-header": "My Region"}}},
        {"properties": {"a": {"type": "string", "x-mcp-header": "Region:Primary"}}},
        {"properties": {"a": {"type": "string", "x-mcp-header": "Région"}}},
        {"properties": {"a": {"type": "string", "x-mcp-header": "Region\t1"}}},
        {"properties": {"a": {"type": "string", "x-mcp-header": "Region\n"}}},
        {"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}},
        {"anyOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]},
        {"$defs": {"x": {"type": "string", "x-mcp-header": "A"}}},
        {"type": "string", "x-mcp-header": "Root"},
    ],
)
def test_invalid_annotations_are_rejected(schema: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        header_params(schema)


def test_values_become_text() -> None:
    assert param_value_text("x") == "x"
    assert param_value_text(42) == "42"
    assert param_value_text(-7) == "-7"
    assert param_value_text(True) == "true"
    assert param_value_text(False) == "false"
    assert param_value_text(None) is None
    for bad in (3.5, [1], {"a": 1}, 2**60):
        with pytest.raises(ValueError):
            param_value_text(bad)


def test_mcp_name_sources() -> None:
    assert name_source("tools/call", {"name": "t"}) == "t"
    assert name_source("prompts/get", {"name": "p"}) == "p"
    assert name_source("resources/read", {"uri": "file:///a%20b"}) == "file:///a%20b"
    assert name_source("tools/list", {"name": "x"}) is None
