"""The deprecated HTTP+SSE transport of 2024-11-05: GET /sse, an endpoint event, POSTs."""

from __future__ import annotations

import json
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
import trio
from http_support import make_server, open_sse, running
from sse_server_end import ServedByTheTest

from trio_mcp.http import HttpClientStream, asgi_app, open_http_stream
from trio_mcp.testing import check_transport
from trio_mcp.transports import MessageStream

#: Every test here runs on both HTTP front ends.
pytestmark = pytest.mark.usefixtures("front_end")

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2024-11-05",
        "capabilities": {},
        "clientInfo": {"name": "old", "version": "1"},
    },
}


async def test_an_old_client_session() -> None:
    server, _ = make_server()
    app = asgi_app(server)
    async with running(app) as base, httpx.AsyncClient(timeout=10) as client:
        async with open_sse(client, "GET", base + "/sse") as reader:
            (endpoint,) = await reader.wait_for(1)
            assert endpoint.event == "endpoint"
            assert endpoint.data.startswith("/messages?session_id=")
            post_url = base + endpoint.data
            r = await client.post(post_url, json=INITIALIZE)
            assert (r.status_code, r.text) == (202, "Accepted")
            events = await reader.wait_for(2)
            answer = json.loads(events[1].data)
            assert answer["result"]["protocolVersion"] == "2024-11-05"
            await client.post(
                post_url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}
            )
            call = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "old"}},
            }
            assert (await client.post(post_url, json=call)).status_code == 202
            events = await reader.wait_for(3)
            assert json.loads(events[2].data)["result"]["content"][0]["text"] == "old"
            assert app.sse is not None and len(app.sse.sessions) == 1
            bad = await client.post(
                post_url, content=b"{oops", headers={"content-type": "application/json"}
            )
            assert bad.status_code == 400
        # The client left: the session ended.
        with trio.fail_after(5):
            while app.sse.sessions:
                await trio.sleep(0.01)
        r = await client.post(post_url, json=call)
        assert r.status_code == 404


async def test_the_session_cap_gives_503() -> None:
    server, _ = make_server()
    app = asgi_app(server, max_sessions=2)
    async with running(app) as base, httpx.AsyncClient(timeout=10) as client:
        async with (
            open_sse(client, "GET", base + "/sse") as first,
            open_sse(client, "GET", base + "/sse") as second,
        ):
            await first.wait_for(1)
            await second.wait_for(1)
            r = await client.get(base + "/sse", headers={"accept": "text/event-stream"})
            assert r.status_code == 503
            assert r.headers["retry-after"]
            assert r.json()["error"]["code"] == -32600
            assert app.sse is not None and len(app.sse.sessions) == 2
        with trio.fail_after(5):
            while app.sse.sessions:
                await trio.sleep(0.01)
        async with open_sse(client, "GET", base + "/sse") as third:  # room again
            (endpoint,) = await third.wait_for(1)
            assert endpoint.event == "endpoint"


async def test_unknown_sessions_and_wrong_methods() -> None:
    server, _ = make_server()
    app = asgi_app(server)
    async with running(app) as base, httpx.AsyncClient() as client:
        assert (
            await client.post(base + "/messages?session_id=x", json=INITIALIZE)
        ).status_code == 404
        assert (await client.post(base + "/sse")).status_code == 405
        assert (await client.get(base + "/messages")).status_code == 405
        r = await client.get(base + "/sse", headers={"accept": "application/json"})
        assert r.status_code == 406


async def test_the_transport_can_be_turned_off() -> None:
    server, _ = make_server()
    app = asgi_app(server, sse_path=None)
    async with running(app) as base, httpx.AsyncClient() as client:
        assert (await client.get(base + "/sse")).status_code == 404


async def test_the_sdk_sse_client() -> None:
    mcp = pytest.importorskip("mcp")
    from mcp.client.sse import sse_client

    server, _ = make_server()
    app = asgi_app(server)
    async with running(app) as base:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            async with mcp.Client(sse_client(base + "/sse"), mode="legacy") as sdk:
                result: Any = await sdk.call_tool("echo", {"text": "via sse"})
                assert result.content[0].text == "via sse"


@asynccontextmanager
async def one_worker_session(
    buffer: int,
) -> AsyncIterator[tuple[HttpClientStream, MessageStream]]:
    """A 2024-11-05 HTTP+SSE client stream on one worker, and the session's own stream."""
    server = ServedByTheTest()
    async with (
        running(asgi_app(server)) as base,
        httpx.AsyncClient(timeout=None) as http,
        open_http_stream(base + "/sse", transport="sse", buffer=buffer, http_client=http) as client,
    ):
        peer = await server.streams.receive()
        try:
            yield client, peer
        finally:
            await peer.aclose()


@asynccontextmanager
async def one_worker_server_first(
    buffer: int,
) -> AsyncIterator[tuple[MessageStream, MessageStream]]:
    async with one_worker_session(buffer) as (client, peer):
        yield peer, client


@pytest.mark.timeout(120)
async def test_the_server_end_passes_check_transport() -> None:
    """Both ends of a session, each as ``a``: when the client closes its stream, the
    server's end still receives what was POSTed (answered 202), then EndOfChannel (not
    ClosedResourceError); a cancelled send on it leaves no part of an event on the stream."""
    await check_transport(lambda: one_worker_session(16), lambda: one_worker_session(0))
    await check_transport(lambda: one_worker_server_first(16), lambda: one_worker_server_first(0))
