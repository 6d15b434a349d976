"""Our client and the 2025-11-25 revision's core tasks (issue 25, item 4), against the npm
reference server (the TypeScript SDK's ``server-everything``), whose
``simulate-research-query`` tool has ``taskSupport: "required"``: a task-augmented call,
``tasks/get`` polled (its status messages reach ``on_progress``), ``tasks/result`` for the
outcome, and an elicitation the task asks for answered through it. A connection without
tasks refuses ``as_task=True`` instead of making a plain call."""

from __future__ import annotations

from typing import Any

import pytest
import trio
from npm_support import NpmServer

from trio_mcp import McpError, Server, open_stdio_client
from trio_mcp.testing import connect
from trio_mcp.types import ElicitResult

TOOL = "simulate-research-query"

pytestmark = pytest.mark.slow


async def test_a_required_task_tool_of_the_typescript_server(
    npm_server_everything: NpmServer,
) -> None:
    progress: list[str | None] = []
    async with open_stdio_client(
        npm_server_everything.node_command, stderr=lambda line: None
    ) as client:
        assert client.protocol_version == "2025-11-25"
        tools = {tool.name: tool for tool in await client.list_tools()}
        assert tools[TOOL].execution is not None
        assert tools[TOOL].execution.task_support == "required"
        with trio.fail_after(60):
            result = await client.call_tool(
                TOOL,
                {"topic": "nurseries"},
                as_task=True,
                on_progress=lambda update: progress.append(update.message),
            )
    assert not result.is_error
    assert "# Research Report: nurseries" in result.content[0].text  # type: ignore[union-attr]
    assert progress and all(message for message in progress)


async def test_a_task_that_asks_for_input_is_answered_through_tasks_result(
    npm_server_everything: NpmServer,
) -> None:
    asked: list[str] = []

    async def elicitation(params: Any) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"interpretation": "historical"})

    async with open_stdio_client(
        npm_server_everything.node_command, stderr=lambda line: None, elicitation=elicitation
    ) as client:
        with trio.fail_after(60):
            result = await client.call_tool(
                TOOL, {"topic": "trio", "ambiguous": True}, as_task=True
            )
    assert len(asked) == 1 and "interpretations" in asked[0]
    assert "historical" in result.content[0].text  # type: ignore[union-attr]


async def test_as_task_without_tasks_is_refused_not_degraded() -> None:
    server = Server("plain")

    @server.tool()
    def echo(text: str) -> str:
        return text

    async with connect(server, protocol_version="2025-11-25") as client:
        with pytest.raises(McpError, match="cannot run as a task") as refused:
            await client.call_tool("echo", {"text": "x"}, as_task=True)
        assert refused.value.code == -32601
        assert (await client.call_tool("echo", {"text": "x"})).content[0].text == "x"  # type: ignore[union-attr]
