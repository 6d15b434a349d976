"""Params of the wrong type never reach routing, a scope check or a lookup (issue 21,
failure 1): ``"name": [1]`` in ``tools/call``, ``prompts/get`` or a completion reference
is answered -32602 and the connection goes on, over WebSocket with authorization (it used
to raise out of the scope check and end ``serve_websocket`` with every connection) and
over HTTP with and without it (a 500 with a traceback, before). Real sockets on
127.0.0.1, bounded waits."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import httpx
import pytest
import trio
import trio_websocket
from auth_support.issuer import ISSUER, FakeIssuer
from auth_support.oidc import free_port
from http_support import LEGACY, initialize, meta, modern_headers

from trio_mcp import Server
from trio_mcp.auth import JwtVerifier, ProtectedResource
from trio_mcp.http import open_asgi_app
from trio_mcp.websocket import SUBPROTOCOL, serve_websocket

pytestmark = pytest.mark.timeout(60)

#: (method, params) pairs whose name (or URI) is not a string.
BAD: list[tuple[str, dict[str, Any]]] = [
    ("tools/call", {"name": [1], "arguments": {}}),
    ("tools/call", {"name": {"a": 1}}),
    ("prompts/get", {"name": [1]}),
    (
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": [1]}, "argument": {"name": "a", "value": ""}},
    ),
    (
        "completion/complete",
        {"ref": {"type": "ref/resource", "uri": [1]}, "argument": {"name": "a", "value": ""}},
    ),
    ("resources/read", {"uri": [1]}),
]
IDS = ["tool-list", "tool-object", "prompt", "completion-prompt", "completion-uri", "resource"]


def make_server() -> Server:
    server = Server("strict")

    @server.tool(scopes=["mcp:tools"])
    async def echo(text: str) -> str:
        return text

    @server.prompt(scopes=["mcp:tools"])
    async def greet(name: str) -> str:
        return f"Hello {name}"

    @server.resource("file:///{path}", scopes=["mcp:tools"])
    async def files(path: str) -> str:
        return path

    return server


def request(id: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def assert_invalid_params(answer: dict[str, Any]) -> None:
    assert answer.get("error", {}).get("code") == -32602, answer
    assert "Traceback" not in json.dumps(answer)


# -- WebSocket, with authorization ---------------------------------------------------------


@asynccontextmanager
async def protected_websocket(server: Server | None = None) -> AsyncIterator[tuple[int, str]]:
    issuer = FakeIssuer()
    port = free_port()
    server = server or make_server()
    async with issuer.http_client() as keys, trio.open_nursery() as nursery:
        auth = ProtectedResource(
            f"http://127.0.0.1:{port}/mcp",
            verifier=JwtVerifier(ISSUER, http_client=keys),
            authorization_servers=[ISSUER],
        )
        await nursery.start(partial(serve_websocket, server, port=port, auth=auth))
        token = issuer.token(aud=f"http://127.0.0.1:{port}/mcp", scope="mcp:tools")
        yield port, token
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def raw_websocket(port: int, token: str) -> AsyncIterator[trio_websocket.WebSocketConnection]:
    async with trio_websocket.open_websocket(
        "127.0.0.1",
        port,
        "/mcp",
        use_ssl=False,
        subprotocols=[SUBPROTOCOL],
        extra_headers=[(b"authorization", f"Bearer {token}".encode())],
    ) as ws:
        hello = {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        }
        await ws.send_message(json.dumps(request(0, "initialize", hello)))
        assert "result" in json.loads(await ws.get_message())
        await ws.send_message(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        yield ws


async def ask(ws: trio_websocket.WebSocketConnection, message: dict[str, Any]) -> dict[str, Any]:
    await ws.send_message(json.dumps(message))
    while True:
        answer = json.loads(await ws.get_message())
        if answer.get("id") == message["id"]:
            return answer  # type: ignore[no-any-return]


async def test_a_name_of_the_wrong_type_over_websocket_is_invalid_params_and_ends_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    with trio.fail_after(20):
        async with (
            protected_websocket() as (port, token),
            raw_websocket(port, token) as bystander,
            raw_websocket(port, token) as ws,
        ):
            for id, (method, params) in enumerate(BAD, start=1):
                assert_invalid_params(await ask(ws, request(id, method, params)))
                # The same connection goes on, and so does the other one.
                assert "result" in await ask(ws, request(100 + id, "ping"))
                assert "result" in await ask(bystander, request(200 + id, "ping"))
            good = request(300, "tools/call", {"name": "echo", "arguments": {"text": "ok"}})
            assert (await ask(ws, good))["result"]["content"][0]["text"] == "ok"
    assert "Traceback" not in caplog.text
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


class Broken(Exception):
    """A bug of ours, planted."""


async def test_a_failing_scope_check_answers_its_request_and_the_connection_goes_on(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    server = make_server()

    def scopes_needed(method: str, params: object) -> frozenset[str]:
        if method == "prompts/get":
            raise Broken("planted")
        return frozenset()

    monkeypatch.setattr(server, "scopes_needed", scopes_needed)
    with trio.fail_after(20):
        async with protected_websocket(server) as (port, token), raw_websocket(port, token) as ws:
            answer = await ask(ws, request(1, "prompts/get", {"name": "greet", "arguments": {}}))
            assert answer["error"] == {"code": -32603, "message": "Internal error"}
            assert "result" in await ask(ws, request(2, "ping"))
    # Logged as what it is, with its traceback, for us (never sent to the peer).
    assert "checking the scopes of a prompts/get request failed" in caplog.text


async def test_one_failing_connection_ends_neither_another_nor_the_server(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    server = make_server()
    serve = server.serve
    calls = 0

    async def serve_failing_second(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise Broken("planted")
        return await serve(*args, **kwargs)

    monkeypatch.setattr(server, "serve", serve_failing_second)
    with trio.fail_after(20):
        async with (
            protected_websocket(server) as (port, token),
            raw_websocket(port, token) as first,
        ):
            with pytest.raises(trio_websocket.ConnectionClosed):
                async with raw_websocket(port, token):
                    pass
            assert "result" in await ask(first, request(1, "ping"))
            async with raw_websocket(port, token) as third:
                assert "result" in await ask(third, request(2, "ping"))
    assert "a WebSocket connection failed" in caplog.text


# -- HTTP, with and without authorization ----------------------------------------------------


RESOURCE = "http://localhost/mcp"


@asynccontextmanager
async def http_client(*, with_auth: bool) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the HTTP app (run in memory: an exception in the app raises here, where
    hypercorn would answer 500), sending a token the app accepts where it wants one."""
    issuer = FakeIssuer()
    async with issuer.http_client() as keys:
        auth = None
        headers: dict[str, str] = {}
        if with_auth:
            verifier = JwtVerifier(ISSUER, http_client=keys)
            auth = ProtectedResource(RESOURCE, verifier=verifier, authorization_servers=[ISSUER])
            headers["authorization"] = f"Bearer {issuer.token(aud=RESOURCE, scope='mcp:tools')}"
        async with open_asgi_app(make_server(), auth=auth) as app:
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(
                transport=transport, base_url="http://localhost", headers=headers
            ) as client:
                yield client


def answer_of(response: httpx.Response) -> dict[str, Any]:
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1])  # type: ignore[no-any-return]
    return response.json()  # type: ignore[no-any-return]


@pytest.mark.parametrize("with_auth", [False, True], ids=["no-auth", "auth"])
@pytest.mark.parametrize(("method", "params"), BAD, ids=IDS)
async def test_a_name_of_the_wrong_type_over_modern_http_is_invalid_params(
    with_auth: bool, method: str, params: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    with trio.fail_after(10):
        async with http_client(with_auth=with_auth) as client:
            body = request(1, method, {**params, "_meta": meta()})
            response = await client.post("/mcp", json=body, headers=modern_headers(method))
            assert response.status_code < 500, response.text
            assert_invalid_params(answer_of(response))
    assert "Traceback" not in caplog.text


@pytest.mark.parametrize("with_auth", [False, True], ids=["no-auth", "auth"])
async def test_a_name_of_the_wrong_type_in_a_legacy_session_is_invalid_params(
    with_auth: bool, caplog: pytest.LogCaptureFixture
) -> None:
    with trio.fail_after(10):
        async with http_client(with_auth=with_auth) as client:
            headers = await initialize(client, "/mcp")
            for id, (method, params) in enumerate(BAD, start=1):
                response = await client.post(
                    "/mcp", json=request(id, method, params), headers=headers
                )
                assert response.status_code < 500, response.text
                assert_invalid_params(answer_of(response))
            ping = await client.post("/mcp", json=request(99, "ping"), headers=headers)
            assert "result" in answer_of(ping)
    assert "Traceback" not in caplog.text
