"""A client's capabilities count only as far as the negotiated revision defines them.

Found against the official Python SDK, which declares ``elicitation`` (with ``form`` and
``url`` modes) at every revision it negotiates. Our server used to take that at face
value: at 2025-03-26 a tool that elicited made the protocol layer refuse to send
``elicitation/create``, and the tools/call came back as -32601 "method not found"; at
2025-06-18 a URL-mode elicitation (a 2025-11-25 feature) was sent to the client.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio

from trio_mcp import Context, Server, jsonrpc as rpc
from trio_mcp.transports import MemoryMessageStream, memory_stream_pair

#: What the SDK declares whatever the revision.
SDK_CAPABILITIES: dict[str, Any] = {
    "elicitation": {"form": {}, "url": {}},
    "sampling": {},
    "roots": {},
}


def make_server() -> Server:
    server = Server("s")

    @server.tool()
    async def form(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", {"type": "object", "properties": {}})
        return answer.action

    @server.tool()
    async def url(ctx: Context) -> str:
        answer = await ctx.elicit_url("Visit", "https://example.com/")
        return answer.action

    return server


Answer = rpc.ResultResponse | rpc.ErrorResponse


async def call(
    stream: MemoryMessageStream, id: int, method: str, params: dict[str, Any]
) -> tuple[Answer, list[str]]:
    """Send a request as raw JSON; return its answer and whatever requests came first."""
    await stream.send(rpc.JsonRpcRequest(id, method, params))
    asked = []
    with trio.fail_after(5):
        while True:
            message = await stream.receive()
            if isinstance(message, rpc.JsonRpcRequest):
                asked.append(message.method)
                await stream.send(rpc.ResultResponse(message.id, {"action": "decline"}))
            elif isinstance(message, (rpc.ResultResponse, rpc.ErrorResponse)):
                return message, asked


async def call_tool_as_sdk(version: str, tool: str) -> tuple[Answer, list[str]]:
    ours, theirs = memory_stream_pair()
    server = make_server()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.serve, theirs)
        answer, _ = await call(
            ours,
            1,
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": SDK_CAPABILITIES,
                "clientInfo": {"name": "sdk-like", "version": "0"},
            },
        )
        assert isinstance(answer, rpc.ResultResponse)
        assert answer.result["protocolVersion"] == version
        await ours.send(rpc.JsonRpcNotification("notifications/initialized"))
        result = await call(ours, 2, "tools/call", {"name": tool, "arguments": {}})
        nursery.cancel_scope.cancel()
    return result


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26"])
async def test_elicitation_declared_before_its_revision_is_a_missing_capability(
    version: str,
) -> None:
    answer, asked = await call_tool_as_sdk(version, "form")
    assert asked == []
    assert isinstance(answer, rpc.ErrorResponse)
    assert answer.error.code == -32021  # not -32601: tools/call exists


async def test_url_elicitation_declared_before_its_revision_is_a_missing_capability() -> None:
    answer, asked = await call_tool_as_sdk("2025-06-18", "url")
    assert asked == []
    assert isinstance(answer, rpc.ErrorResponse)
    assert answer.error.code == -32021


async def test_elicitation_in_its_revisions_is_still_asked() -> None:
    for version, tool in [("2025-06-18", "form"), ("2025-11-25", "form"), ("2025-11-25", "url")]:
        answer, asked = await call_tool_as_sdk(version, tool)
        assert asked == ["elicitation/create"]
        assert isinstance(answer, rpc.ResultResponse)
