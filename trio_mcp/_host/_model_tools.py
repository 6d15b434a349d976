"""Tools handed to a model: the host's namespaced tools in the shapes the common LLM APIs
take, and the model's tool-use blocks taken back.

The namespaced names (``weather__forecast``) are used as they are. The APIs accept names
of 1 to 64 of ``A-Z a-z 0-9 _ -``; a tool whose namespaced name is not one (a ``.`` in a
server or tool name, or too long) is left out, with a warning logged, rather than renamed
behind the model's back.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from typing import Any, Literal, TypeAlias

from .._errors import ErrorCode, McpError
from .._types._content import TextContent
from .._types._tools import CallToolResult, Tool

__all__ = ["ToolStyle", "parse_tool_use", "tool_definitions", "tool_result"]

log = logging.getLogger("trio_mcp.host")

_API_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")

#: ``"anthropic"`` (Messages API ``tools``), ``"openai"`` (Chat Completions ``tools``),
#: ``"openai-responses"`` (Responses API ``tools``).
ToolStyle: TypeAlias = Literal["anthropic", "openai", "openai-responses"]


def _description(tool: Tool) -> str:
    return tool.description or tool.title or ""


def tool_definitions(tools: Mapping[str, Tool], style: ToolStyle) -> list[dict[str, Any]]:
    """``tools`` (by namespaced name) as ``style``'s tool specifications; names the APIs
    would refuse are left out (logged)."""
    if style not in ("anthropic", "openai", "openai-responses"):
        raise ValueError(f"unknown tool style {style!r}")
    specs: list[dict[str, Any]] = []
    for name, tool in tools.items():
        if not _API_NAME.fullmatch(name):
            log.warning("tool %r left out: LLM APIs take names of 1 to 64 of A-Za-z0-9_-", name)
            continue
        schema = dict(tool.input_schema)
        if style == "anthropic":
            specs.append({"name": name, "description": _description(tool), "input_schema": schema})
        elif style == "openai":
            specs.append(
                {
                    "type": "function",
                    "function": {
                        "name": name,
                        "description": _description(tool),
                        "parameters": schema,
                    },
                }
            )
        else:
            specs.append(
                {
                    "type": "function",
                    "name": name,
                    "description": _description(tool),
                    "parameters": schema,
                }
            )
    return specs


def parse_tool_use(block: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The tool name and arguments of a model's tool-use block: an Anthropic
    ``{"type": "tool_use", "name", "input"}``, an OpenAI Chat Completions
    ``{"type": "function", "function": {"name", "arguments": "<json>"}}`` or a Responses
    ``{"type": "function_call", "name", "arguments": "<json>"}``.

    Raises:
        McpError: (-32602) a block of none of these shapes, or arguments that are not a
            JSON object.
    """
    kind = block.get("type")
    if kind == "tool_use":
        name, arguments = block.get("name"), block.get("input", {})
    elif kind == "function" and isinstance(block.get("function"), Mapping):
        name, arguments = block["function"].get("name"), block["function"].get("arguments")
    elif kind == "function_call":
        name, arguments = block.get("name"), block.get("arguments")
    else:
        raise McpError(f"not a tool-use block: type {kind!r}", code=ErrorCode.INVALID_PARAMS)
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments else {}
        except ValueError:
            raise McpError(
                "the tool-use block's arguments are not JSON", code=ErrorCode.INVALID_PARAMS
            ) from None
    if arguments is None:
        arguments = {}
    if not isinstance(name, str) or not isinstance(arguments, dict):
        raise McpError(
            "a tool-use block needs a name and an object of arguments",
            code=ErrorCode.INVALID_PARAMS,
        )
    return name, arguments


def _text(result: CallToolResult) -> str:
    parts = [block.text for block in result.content if isinstance(block, TextContent)]
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content))
    return "\n".join(parts)


def tool_result(block: Mapping[str, Any], result: CallToolResult) -> dict[str, Any]:
    """The message part that gives ``result`` back to the model, answering ``block``
    (in the block's own style): an Anthropic ``tool_result`` content block, an OpenAI
    ``{"role": "tool"}`` message, or a Responses ``function_call_output`` item. Text
    content is joined; other content is left out (an application that shows images
    builds its own)."""
    kind = block.get("type")
    text = _text(result)
    if kind == "tool_use":
        answer: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": block.get("id"),
            "content": text,
        }
        if result.is_error:
            answer["is_error"] = True
        return answer
    if kind == "function":
        return {"role": "tool", "tool_call_id": block.get("id"), "content": text}
    if kind == "function_call":
        return {"type": "function_call_output", "call_id": block.get("call_id"), "output": text}
    raise McpError(f"not a tool-use block: type {kind!r}", code=ErrorCode.INVALID_PARAMS)
