"""Interoperability over HTTP: the official ``mcp`` SDK client (both eras) against our
server, and a trio_mcp Client over a minimal in-test HTTP stream."""

from __future__ import annotations

import warnings
from typing import Any

import anyio
import pytest
import trio
from http_support import LEGACY, MODERN, make_server, running

from trio_mcp.http import asgi_app, open_http_client
from trio_mcp.types import ElicitResult

#: Every test here runs on both HTTP front ends.
pytestmark = pytest.mark.usefixtures("front_end")

mcp = pytest.importorskip("mcp")
mcp_types = pytest.importorskip("mcp_types")

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.mark.parametrize(("mode", "version"), [("legacy", LEGACY), (MODERN, MODERN)])
async def test_the_sdk_client_works_in_both_eras(mode: str, version: str) -> None:
    server, _ = make_server()
    app = asgi_app(server)
    progress: list[float] = []

    async def elicit(context: Any, params: Any) -> Any:
        return mcp_types.ElicitResult(action="accept", content={"name": "SDK"})

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async with running(app) as base:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            async with mcp.Client(
                base + "/mcp", mode=mode, cache=None, elicitation_callback=elicit
            ) as client:
                assert client.protocol_version == version
                result = await client.call_tool("echo", {"text": "hi"})
                assert result.content[0].text == "hi"
                # Legacy: elicitation/create on the call's SSE stream; modern: an
                # input-required result and a retry. The same handler serves both.
                result = await client.call_tool("ask_name", {})
                assert result.content[0].text == "Hello, SDK!"
                result = await client.call_tool("progress", {}, progress_callback=on_progress)
                assert result.content[0].text == "done"
                assert progress == [0, 1, 2]
                result = await client.call_tool("regional", {"region": "eu-west 1"})
                assert result.content[0].text == "eu-west 1 x1"
                read = await client.read_resource("test://text")
                assert read.contents[0].text == "hello"
                prompt = await client.get_prompt("hello", {"name": "you"})
                assert prompt.messages[0].content.text == "Hello you"


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_cancelling_an_sdk_call_cancels_the_handler(mode: str) -> None:
    """Legacy: the SDK POSTs notifications/cancelled; modern: it aborts the POST."""
    server, probe = make_server()
    app = asgi_app(server)
    async with running(app) as base:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            async with mcp.Client(base + "/mcp", mode=mode, cache=None) as client:
                async with anyio.create_task_group() as group:

                    async def call() -> None:
                        await client.call_tool("block", {})

                    group.start_soon(call)
                    with trio.fail_after(5):
                        await probe.started.wait()
                    group.cancel_scope.cancel()
                with trio.fail_after(5):
                    await probe.cancelled.wait()


async def elicit_ours(params: Any) -> ElicitResult:
    return ElicitResult(action="accept", content={"name": "Ours"})


@pytest.mark.parametrize("version", [None, LEGACY, "2025-03-26", "2024-11-05"])
async def test_the_trio_mcp_http_client_in_every_era(version: str | None) -> None:
    server, _ = make_server()
    app = asgi_app(server)
    progress: list[float] = []
    async with running(app) as base:
        async with open_http_client(
            base + "/mcp", protocol_version=version, elicitation=elicit_ours
        ) as client:
            assert (await client.call_tool("echo", {"text": "ours"})).content[0].text == "ours"
            if version is None or version >= "2025-06-18":  # elicitation came in 2025-06-18
                assert (await client.call_tool("ask_name", {})).content[0].text == "Hello, Ours!"
            result = await client.call_tool(
                "progress", {}, on_progress=lambda p: progress.append(p.progress)
            )
            assert result.content[0].text == "done"
            regional = await client.call_tool("regional", {"region": "ünï", "count": 2})
            assert regional.content[0].text == "ünï x2"
        assert progress == [0, 1, 2]
        # Closing the client ended its session (DELETE): nothing is left behind.
        assert app.manager is not None and app.manager.sessions == {}


async def test_the_trio_mcp_client_over_http_sse_2024() -> None:
    server, _ = make_server()
    app = asgi_app(server)
    async with running(app) as base:
        async with open_http_client(base + "/sse", transport="sse") as client:
            # The old transport carries the handshake era: no modern probe over it.
            assert client.protocol_version == "2025-11-25"
            assert (await client.call_tool("echo", {"text": "old"})).content[0].text == "old"
        with trio.fail_after(5):
            while app.sse is not None and app.sse.sessions:
                await trio.sleep(0.01)
