"""The keep-alive race: a server closes a connection it kept idle just as the client sends
the next request on it (Node closes idle connections after 5 s, so a client that took 5 s
to log in meets it). Such a request, which failed on a pooled connection before any byte
of its answer, is sent once more on a new connection; any other failure is reported as
what it was, never sent again.

The server here is a real HTTP/1.1 server on 127.0.0.1 (h11 over a Trio socket) whose
script decides, request by request, to answer, to close the connection without a word,
or to cut the answer short: hypercorn and the httptools front end cannot close a
connection at a chosen moment.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, Literal
from urllib.parse import parse_qs

import attrs
import h11
import httpx
import orjson
import pytest
import trio
from scripted_http import initialize_result

from trio_mcp import jsonrpc as rpc
from trio_mcp._auth._client._requester import Requester
from trio_mcp._resend import stream_resending
from trio_mcp.http import HttpClientStream, open_http_stream

Action = Literal["answer", "close", "cut"]

INITIALIZE = rpc.JsonRpcRequest(
    1,
    "initialize",
    {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
)
MODERN_META = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}


@attrs.define
class Request:
    """One request as the server read it: on which connection (counted from 0), and which
    request of that connection it was."""

    connection: int
    index: int
    method: str
    body: Any


@attrs.define
class KeepAliveServer:
    """Answers every JSON-RPC request with an empty result (``initialize`` with a legacy
    session), notifications with 202, GET with 405, a token request (a form) with a token
    and any other JSON (a client registration) with a ``client_id``, on keep-alive
    connections;
    ``script`` may instead close the connection once it has read a request, or cut the
    answer short after its headers."""

    script: Callable[[Request], Action]
    seen: list[Request] = attrs.Factory(list)
    _connections: Any = attrs.Factory(itertools.count)

    async def handle(self, stream: trio.SocketStream) -> None:
        connection = next(self._connections)
        wire = h11.Connection(h11.SERVER)
        async with stream:
            for index in itertools.count():
                request = await _read_request(stream, wire, connection, index)
                if request is None:
                    return
                self.seen.append(request)
                action = self.script(request)
                if action == "close":
                    return
                status, headers, body = _answer(request)
                if action == "cut":
                    headers.append(("content-length", str(len(body) + 100)))
                    await stream.send_all(
                        wire.send(h11.Response(status_code=status, headers=headers))
                    )
                    await stream.send_all(wire.send(h11.Data(data=body)))
                    return
                headers.append(("content-length", str(len(body))))
                await stream.send_all(wire.send(h11.Response(status_code=status, headers=headers)))
                await stream.send_all(
                    wire.send(h11.Data(data=body)) + wire.send(h11.EndOfMessage())
                )
                wire.start_next_cycle()

    def methods(self) -> list[tuple[int, str]]:
        """(connection, JSON-RPC method or HTTP method) of every request, in order."""
        return [
            (r.connection, r.body.get("method", "?") if isinstance(r.body, dict) else r.method)
            for r in self.seen
        ]


async def _read_request(
    stream: trio.SocketStream, wire: h11.Connection, connection: int, index: int
) -> Request | None:
    method = ""
    body = b""
    while True:
        event = wire.next_event()
        if event is h11.NEED_DATA:
            wire.receive_data(await stream.receive_some(65536))
        elif isinstance(event, h11.Request):
            method = event.method.decode()
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage):
            return Request(connection, index, method, _parsed(body))
        else:  # ConnectionClosed: the client is done with this connection
            return None


def _parsed(body: bytes) -> Any:
    """A JSON body parsed; a form (a token request) as ``{"form": ...}``."""
    if not body:
        return None
    if body.startswith(b"{"):
        return orjson.loads(body)
    return {"form": parse_qs(body.decode())}


def _answer(request: Request) -> tuple[int, list[tuple[str, str]], bytes]:
    message = request.body
    if request.method != "POST":
        return 405, [], b""
    json = [("content-type", "application/json")]
    if "form" in message:
        token = {"access_token": "t0k3n", "token_type": "Bearer", "expires_in": 60}
        return 200, json, orjson.dumps(token)
    if "method" not in message:  # a client registration
        return 201, json, orjson.dumps({"client_id": "c1", **message})
    if "id" not in message:
        return 202, [], b""
    if message["method"] == "initialize":
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": initialize_result()}
        return 200, [*json, ("mcp-session-id", "s1")], orjson.dumps(answer)
    return 200, json, orjson.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {}})


@asynccontextmanager
async def serving(
    script: Callable[[Request], Action],
) -> AsyncIterator[tuple[str, KeepAliveServer]]:
    server = KeepAliveServer(script)
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, server.handle, 0, host="127.0.0.1"))
        port = listeners[0].socket.getsockname()[1]
        yield f"http://127.0.0.1:{port}/mcp", server
        nursery.cancel_scope.cancel()


def close_pooled(method: str) -> Callable[[Request], Action]:
    """Close the first connection when ``method`` arrives on it after another request (the
    keep-alive race); answer everything else."""

    def script(request: Request) -> Action:
        named = isinstance(request.body, dict) and request.body.get("method") == method
        return "close" if named and request.connection == 0 and request.index > 0 else "answer"

    return script


async def answer_to(stream: HttpClientStream, id: int) -> rpc.ResultResponse | rpc.ErrorResponse:
    """The answer to request ``id`` (what else the server sends is skipped)."""
    with trio.fail_after(10):
        while True:
            message = await stream.receive()
            if isinstance(message, rpc.ResultResponse | rpc.ErrorResponse) and message.id == id:
                return message


@pytest.mark.timeout(30)
async def test_a_legacy_request_the_server_dropped_on_a_pooled_connection_is_sent_again() -> None:
    async with (
        serving(close_pooled("ping")) as (url, server),
        open_http_stream(url) as stream,
    ):
        await stream.send(INITIALIZE)
        assert isinstance(await answer_to(stream, 1), rpc.ResultResponse)
        await stream.send(rpc.JsonRpcRequest(2, "ping", None))
        answer = await answer_to(stream, 2)
    assert answer == rpc.ResultResponse(2, {})
    pings = [r for r in server.seen if r.body and r.body.get("method") == "ping"]
    # The same request, id and all, once on each connection.
    assert [(r.connection, r.body["id"]) for r in pings] == [(0, 2), (1, 2)]


@pytest.mark.timeout(30)
async def test_a_modern_request_the_server_dropped_is_sent_again_under_its_own_id() -> None:
    async with (
        serving(close_pooled("tools/list")) as (url, server),
        open_http_stream(url, reissue_attempts=0) as stream,
    ):
        await stream.send(rpc.JsonRpcRequest(1, "server/discover", MODERN_META))
        await answer_to(stream, 1)
        await stream.send(rpc.JsonRpcRequest(2, "tools/list", MODERN_META))
        answer = await answer_to(stream, 2)
    assert answer == rpc.ResultResponse(2, {})
    lists = [r for r in server.seen if r.body.get("method") == "tools/list"]
    assert [(r.connection, r.body["id"]) for r in lists] == [(0, 2), (1, 2)]


@pytest.mark.timeout(30)
async def test_a_notification_the_server_dropped_is_delivered_on_a_new_connection() -> None:
    async with (
        serving(close_pooled("notifications/initialized")) as (url, server),
        open_http_stream(url) as stream,
    ):
        await stream.send(INITIALIZE)
        await answer_to(stream, 1)
        await stream.send(rpc.JsonRpcNotification("notifications/initialized"))
        await stream.send(rpc.JsonRpcRequest(2, "ping", None))
        await answer_to(stream, 2)
    assert server.methods()[:3] == [
        (0, "initialize"),
        (0, "notifications/initialized"),
        (1, "notifications/initialized"),
    ]


@pytest.mark.timeout(30)
async def test_a_request_dropped_on_a_new_connection_is_not_sent_again_and_says_why() -> None:
    async with (
        serving(lambda request: "close") as (url, server),
        open_http_stream(url) as stream,
    ):
        await stream.send(INITIALIZE)
        answer = await answer_to(stream, 1)
    assert isinstance(answer, rpc.ErrorResponse)
    assert "RemoteProtocolError" in answer.error.message
    assert "without sending a response" in answer.error.message
    assert server.methods() == [(0, "initialize")]


@pytest.mark.timeout(30)
async def test_a_request_is_sent_again_once_at_most() -> None:
    """The pooled connection is dropped, and so is the new one: the second failure is
    the caller's."""

    def script(request: Request) -> Action:
        return "answer" if request.connection == 0 and request.index == 0 else "close"

    async with serving(script) as (url, server), httpx.AsyncClient() as http:
        await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        with pytest.raises(httpx.RemoteProtocolError):
            async with stream_resending(http, "POST", url, json={"id": 2, "method": "ping"}):
                pass
    assert [(r.connection, r.index) for r in server.seen] == [(0, 0), (0, 1), (1, 0)]


@pytest.mark.timeout(30)
async def test_an_answer_cut_short_on_a_pooled_connection_is_not_sent_again() -> None:
    """Once the answer's headers came, the server has acted on the request."""

    def script(request: Request) -> Action:
        return "cut" if request.index == 1 else "answer"

    async with serving(script) as (url, server), httpx.AsyncClient() as http:
        await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        statuses = []

        async def read() -> None:
            async with stream_resending(
                http, "POST", url, json={"jsonrpc": "2.0", "id": 2, "method": "ping"}
            ) as response:
                statuses.append(response.status_code)
                await response.aread()

        with pytest.raises(httpx.RemoteProtocolError):
            await read()
        assert statuses == [200]
    assert [(r.connection, r.index) for r in server.seen] == [(0, 0), (0, 1)]


@pytest.mark.timeout(30)
async def test_a_get_the_server_dropped_on_a_pooled_connection_is_sent_again() -> None:
    def script(request: Request) -> Action:
        return "close" if request.connection == 0 and request.index == 1 else "answer"

    async with serving(script) as (url, server), httpx.AsyncClient() as http:
        await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        async with stream_resending(http, "GET", url) as response:
            assert response.status_code == 405
    assert [(r.connection, r.method) for r in server.seen] == [(0, "POST"), (0, "GET"), (1, "GET")]


@pytest.mark.timeout(30)
async def test_a_token_request_the_server_dropped_on_a_pooled_connection_is_sent_again() -> None:
    """After the user took their time to log in, the authorization server may close the
    connection the flow's discovery left in the pool as the token request goes out."""

    def script(request: Request) -> Action:
        is_form = isinstance(request.body, dict) and "form" in request.body
        return "close" if is_form and request.connection == 0 else "answer"

    requester = Requester()
    async with serving(script) as (url, server), httpx.AsyncClient() as http:
        registration = await requester.post_json(http, url, {"client_name": "t"})
        assert registration["client_id"] == "c1"
        form = {"grant_type": "authorization_code", "code": "c0de"}
        tokens = await requester.token_request(http, url, form)
    assert tokens.access_token == "t0k3n"
    assert [(r.connection, r.method) for r in server.seen] == [
        (0, "POST"),
        (0, "POST"),
        (1, "POST"),
    ]
    assert (
        server.seen[1].body
        == server.seen[2].body
        == {"form": {"grant_type": ["authorization_code"], "code": ["c0de"]}}
    )
