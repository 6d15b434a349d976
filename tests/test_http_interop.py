"""Interoperability over HTTP: the official ``mcp`` SDK client (both eras) against our
server, and a trio_mcp Client over a minimal in-test HTTP stream."""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
import trio
from http_support import LEGACY, MODERN, make_server, running

from trio_mcp import Client, connect_client, jsonrpc
from trio_mcp.http import asgi_app
from trio_mcp.transports import MessageStream

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


class _ModernHttpStream(MessageStream):
    """Just enough of a stateless HTTP client transport for a trio_mcp Client: every request
    is a POST with the metadata headers; answers (JSON or SSE) come back on receive()."""

    def __init__(self, client: httpx.AsyncClient, url: str, nursery: trio.Nursery) -> None:
        self._client = client
        self._url = url
        self._nursery = nursery
        self._send, self._receive = trio.open_memory_channel[Any](16)

    async def send(self, message: jsonrpc.Message, *, related: Any = None) -> None:
        if not isinstance(message, jsonrpc.Request):
            await trio.lowlevel.checkpoint()
            return  # no client notifications over stateless HTTP
        self._nursery.start_soon(self._post, message)

    async def _post(self, message: jsonrpc.Request) -> None:
        params = message.params or {}
        headers = {
            "mcp-protocol-version": MODERN,
            "mcp-method": message.method,
            "accept": "application/json, text/event-stream",
        }
        name = params.get("name", params.get("uri"))
        if message.method in ("tools/call", "prompts/get", "resources/read") and name:
            headers["mcp-name"] = name
        response = await self._client.post(
            self._url, content=jsonrpc.dumps(message), headers=headers
        )
        if response.headers["content-type"].startswith("text/event-stream"):
            lines = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
            for data in lines:
                if data.strip():
                    await self._send.send(jsonrpc.parse(data))
        else:
            await self._send.send(jsonrpc.parse(response.content))

    async def receive(self) -> Any:
        return await self._receive.receive()

    async def aclose(self) -> None:
        await self._send.aclose()
        await self._receive.aclose()


@asynccontextmanager
async def trio_mcp_client(url: str) -> AsyncIterator[Client]:
    async with httpx.AsyncClient() as http, trio.open_nursery() as nursery:
        stream = _ModernHttpStream(http, url, nursery)
        client = await connect_client(nursery, stream, protocol_version=MODERN, cache=False)
        try:
            yield client
        finally:
            await client.aclose()
            nursery.cancel_scope.cancel()


async def test_a_trio_mcp_client_round_trip() -> None:
    server, _ = make_server()
    app = asgi_app(server)
    async with running(app) as base, trio_mcp_client(base + "/mcp") as client:
        result = await client.call_tool("echo", {"text": "ours"})
        assert result.content[0].text == "ours"
        tools = await client.list_tools()
        assert [t.name for t in tools][:2] == ["echo", "progress"]
