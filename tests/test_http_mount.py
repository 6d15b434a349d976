"""The app mounted under a prefix by an ASGI router: requests reach it whether the router
keeps the prefix in ``path`` (the ASGI spec, Starlette's ``Mount``) or strips it (older
routers), and the 2024-11-05 ``endpoint`` event names the prefixed message path."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
import trio
from http_support import (
    ACCEPT,
    initialize,
    make_server,
    modern_body,
    modern_headers,
    open_sse,
)
from scripted_http import serving
from starlette.applications import Starlette
from starlette.routing import Mount

from trio_mcp._http.server._exchange import app_path
from trio_mcp.http import McpAsgiApp, open_asgi_app, open_http_client

CALL_ECHO = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "echo", "arguments": {"text": "mounted"}},
}


def strip_prefix(prefix: str, app: Any) -> Any:
    """An old-style router: ``path`` loses the prefix, ``root_path`` gains it."""

    async def router(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":  # nothing to start: open_asgi_app owns the sessions
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
        elif scope["type"] == "http" and scope["path"].startswith(prefix + "/"):
            scope = {
                **scope,
                "path": scope["path"][len(prefix) :],
                "root_path": scope.get("root_path", "") + prefix,
            }
            await app(scope, receive, send)
        elif scope["type"] == "http":
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b""})

    return router


@asynccontextmanager
async def mounted(convention: str) -> AsyncIterator[tuple[str, McpAsgiApp]]:
    """Serve the test server's app at ``/prefix`` behind a router; yields the prefixed base
    URL and the app."""
    server, _ = make_server()
    async with open_asgi_app(server) as app:
        router: Any
        if convention == "starlette":
            router = Starlette(routes=[Mount("/prefix", app=app)])
        else:
            router = strip_prefix("/prefix", app)
        async with serving(router) as base:
            yield base + "/prefix", app


CONVENTIONS = pytest.mark.parametrize("convention", ["starlette", "stripped"])


@CONVENTIONS
async def test_a_session_under_a_prefix(convention: str) -> None:
    async with mounted(convention) as (base, app), httpx.AsyncClient(timeout=10) as client:
        headers = await initialize(client, base + "/mcp")
        r = await client.post(base + "/mcp", json=CALL_ECHO, headers=headers)
        assert r.status_code == 200, r.text
        assert r.json()["result"]["content"][0]["text"] == "mounted"
        assert app.manager is not None and len(app.manager.sessions) == 1
        assert (await client.delete(base + "/mcp", headers=headers)).status_code == 200
        assert not app.manager.sessions
        # Unprefixed and unknown paths under the prefix are not the endpoint.
        r = await client.post(base + "/prefix/mcp", json=CALL_ECHO, headers=headers)
        assert r.status_code == 404


@CONVENTIONS
async def test_a_stateless_request_under_a_prefix(convention: str) -> None:
    async with mounted(convention) as (base, _), httpx.AsyncClient(timeout=10) as client:
        r = await client.post(
            base + "/mcp",
            json=modern_body(1, "tools/call", {"name": "echo", "arguments": {"text": "hi"}}),
            headers=modern_headers("tools/call", "echo"),
        )
        assert r.status_code == 200, r.text
        assert r.json()["result"]["content"][0]["text"] == "hi"


@CONVENTIONS
async def test_our_client_in_each_era_under_a_prefix(convention: str) -> None:
    async with mounted(convention) as (base, _):
        for version in [None, "2025-11-25"]:
            async with open_http_client(base + "/mcp", protocol_version=version) as client:
                result: Any = await client.call_tool("echo", {"text": str(version)})
                assert result.content[0].text == str(version)
        async with open_http_client(
            base + "/sse", transport="sse", protocol_version="2024-11-05"
        ) as client:
            result = await client.call_tool("echo", {"text": "sse"})
            assert result.content[0].text == "sse"


@CONVENTIONS
async def test_the_endpoint_event_names_the_prefixed_path(convention: str) -> None:
    initialize_2024 = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2024-11-05",
            "capabilities": {},
            "clientInfo": {"name": "old", "version": "1"},
        },
    }
    async with (
        mounted(convention) as (base, _),
        httpx.AsyncClient(timeout=10) as client,
        open_sse(client, "GET", base + "/sse", headers={"accept": ACCEPT}) as reader,
    ):
        (endpoint,) = await reader.wait_for(1)
        assert endpoint.event == "endpoint"
        assert endpoint.data.startswith("/prefix/messages?session_id=")
        post_url = str(httpx.URL(base).join(endpoint.data))
        r = await client.post(post_url, json=initialize_2024)
        assert r.status_code == 202, r.text
        with trio.fail_after(5):
            events = await reader.wait_for(2)
        assert json.loads(events[1].data)["result"]["protocolVersion"] == "2024-11-05"


@pytest.mark.parametrize(
    ("path", "root_path", "inside"),
    [
        ("/mcp", "", "/mcp"),
        ("/prefix/mcp", "/prefix", "/mcp"),  # the ASGI spec: path includes root_path
        ("/mcp", "/prefix", "/mcp"),  # older routers: path relative to root_path
        ("/prefix/mcp", "/prefix/", "/mcp"),
        ("/prefixed/mcp", "/prefix", "/prefixed/mcp"),  # not a whole segment
        ("/prefix", "/prefix", "/"),
        ("/a/b/mcp", "/a/b", "/mcp"),
    ],
)
def test_the_path_inside_the_app(path: str, root_path: str, inside: str) -> None:
    assert app_path({"path": path, "root_path": root_path}) == inside


@pytest.mark.usefixtures("front_end")
async def test_a_root_path_with_a_trailing_slash_gives_no_scheme_relative_endpoint() -> None:
    server, _ = make_server()
    async with open_asgi_app(server) as app:

        async def root_with_slash(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                scope = {**scope, "root_path": "/p q/"}
            await app(scope, receive, send)

        async with (
            serving(root_with_slash) as base,
            httpx.AsyncClient(timeout=10) as client,
            open_sse(client, "GET", base + "/sse") as reader,
        ):
            (endpoint,) = await reader.wait_for(1)
            assert endpoint.data.startswith("/p%20q/messages?session_id=")
