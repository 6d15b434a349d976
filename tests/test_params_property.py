"""Any params, any transport: a property over every request method a client may send, with
arbitrary JSON where each field belongs (lists, objects, numbers, null, booleans, huge
strings), through the HTTP app (2026-07-28 and an initialize-era session, with and without
authorization), the WebSocket server (with authorization) and a stdio server (a line stream
over real pipes). Never a 5xx, never a closed connection (the same connection answers a
valid request afterwards), never an error or a traceback in the server's log (issue 21).

Servers are started once per example (the in-memory app and pipes cost little, the
WebSocket server a real socket); the ``ci`` profile's example count is capped here so that
each transport takes a few seconds; ``PARAMS_EXAMPLES=300 HYPOTHESIS_PROFILE=deep`` runs
300 per transport (about 35 s; clean on 2026-11-28).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
import trio
from http_support import initialize, meta, modern_headers
from hypothesis import HealthCheck, given, settings, strategies as st
from test_bad_params import (
    ask,
    http_client,
    make_server,
    protected_websocket,
    raw_websocket,
    request,
)

from trio_mcp._http._headers import encode_value, name_source
from trio_mcp._types._methods import METHODS
from trio_mcp.transports import open_line_stream

pytestmark = pytest.mark.timeout(120)

#: Every request a client may send (the tasks extension's tasks/update too).
CLIENT_REQUESTS = sorted(
    {
        method
        for method, spec in METHODS.items()
        if not method.startswith("notifications/") and spec.sender in ("client", "both")
    }
    | {"tasks/update"}
)
#: subscriptions/listen with good params streams until the client leaves: over HTTP that is
#: a response that never ends (it is fuzzed over the other transports, where it is one
#: message among others, and by tests/test_subscriptions.py).
HTTP_MODERN_REQUESTS = [m for m in CLIENT_REQUESTS if m != "subscriptions/listen"]
#: The fields any request's params may carry, each of which gets arbitrary JSON.
FIELDS = [
    "name", "uri", "arguments", "ref", "argument", "context", "cursor", "level", "taskId",
    "inputResponses", "requestState", "protocolVersion", "capabilities", "clientInfo",
    "filter", "task", "_meta", "messages", "maxTokens", "message", "requestedSchema",
]  # fmt: skip
HUGE = "x" * 100_000

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.sampled_from(["echo", "greet", "file:///a", "ref/prompt", "ref/resource", HUGE]),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
params_strategy = st.one_of(
    st.none(),
    json_values,  # params that are no object at all
    st.fixed_dictionaries({}, optional=dict.fromkeys(FIELDS, json_values)),
)
#: Per transport: a few seconds in the ci profile.
EXAMPLES = settings(
    max_examples=min(settings().max_examples, int(os.environ.get("PARAMS_EXAMPLES", "20"))),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
MESSAGES = st.integers(min_value=1, max_value=6)


def draw_requests(data: st.DataObject, methods: list[str]) -> list[tuple[str, Any]]:
    count = data.draw(MESSAGES, label="messages")
    return [
        (
            data.draw(st.sampled_from(methods), label="method"),
            data.draw(params_strategy, label="params"),
        )
        for _ in range(count)
    ]


def message(id: int, method: str, params: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        body["params"] = params
    return body


def assert_answered(answer: dict[str, Any]) -> None:
    assert "result" in answer or "error" in answer, answer
    assert "Traceback" not in json.dumps(answer)


def assert_quiet_log(caplog: pytest.LogCaptureFixture) -> None:
    assert "Traceback" not in caplog.text
    loud = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert loud == []


def http_answer(response: httpx.Response) -> dict[str, Any] | None:
    """The JSON-RPC answer of a response (``None`` for a 202 or an empty body)."""
    assert response.status_code < 500, (response.status_code, response.text[:500])
    if not response.content:
        return None
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1]) if data else None  # type: ignore[no-any-return]
    return response.json()  # type: ignore[no-any-return]


# -- HTTP ---------------------------------------------------------------------------------


@pytest.mark.parametrize("with_auth", [False, True], ids=["no-auth", "auth"])
@EXAMPLES
@given(data=st.data())
async def test_any_params_over_modern_http(
    with_auth: bool, data: st.DataObject, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    with trio.fail_after(30):
        async with http_client(with_auth=with_auth) as client:
            for id, (method, params) in enumerate(draw_requests(data, HTTP_MODERN_REQUESTS)):
                # Mostly with a good envelope, so that the params get past it.
                if isinstance(params, dict) and data.draw(st.booleans(), label="envelope"):
                    params = {**params, "_meta": meta()}
                name = name_source(method, params) if isinstance(params, dict) else None
                # As a client sends it: a name that is not plain ASCII goes base64-encoded.
                headers = modern_headers(method, None if name is None else encode_value(name))
                response = await client.post(
                    "/mcp", json=message(id, method, params), headers=headers
                )
                answer = http_answer(response)
                if answer is not None:
                    assert_answered(answer)
            discover = await client.post(
                "/mcp",
                json=message(99, "server/discover", {"_meta": meta()}),
                headers=modern_headers("server/discover"),
            )
            assert "result" in (http_answer(discover) or {})
    assert_quiet_log(caplog)


@pytest.mark.parametrize("with_auth", [False, True], ids=["no-auth", "auth"])
@EXAMPLES
@given(data=st.data())
async def test_any_params_in_a_legacy_http_session(
    with_auth: bool, data: st.DataObject, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    with trio.fail_after(30):
        async with http_client(with_auth=with_auth) as client:
            headers = await initialize(client, "/mcp")
            for id, (method, params) in enumerate(draw_requests(data, CLIENT_REQUESTS), start=1):
                response = await client.post(
                    "/mcp", json=message(id, method, params), headers=headers
                )
                answer = http_answer(response)
                if answer is not None:
                    assert_answered(answer)
            ping = await client.post("/mcp", json=message(99, "ping", None), headers=headers)
            assert "result" in (http_answer(ping) or {})
    assert_quiet_log(caplog)


# -- WebSocket ------------------------------------------------------------------------------


@EXAMPLES
@given(data=st.data())
async def test_any_params_over_websocket_with_authorization(
    data: st.DataObject, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    with trio.fail_after(30):
        async with protected_websocket() as (port, token), raw_websocket(port, token) as ws:
            for id, (method, params) in enumerate(draw_requests(data, CLIENT_REQUESTS), start=1):
                assert_answered(await ask(ws, message(id, method, params)))
            assert "result" in await ask(ws, request(99, "ping"))
    assert_quiet_log(caplog)


# -- stdio --------------------------------------------------------------------------------


class PipeClient:
    """The client's end of a stdio server: JSON lines written to and read from real pipes."""

    def __init__(self, write: trio.lowlevel.FdStream, read: trio.lowlevel.FdStream) -> None:
        self.write, self.read = write, read
        self.buffer = b""

    async def ask(self, body: dict[str, Any]) -> dict[str, Any]:
        await self.write.send_all(json.dumps(body).encode() + b"\n")
        while True:
            while b"\n" not in self.buffer:
                chunk = await self.read.receive_some(65536)
                assert chunk, "the server closed the connection"
                self.buffer += chunk
            line, self.buffer = self.buffer.split(b"\n", 1)
            answer = json.loads(line)
            if isinstance(answer, dict) and answer.get("id") == body["id"]:
                return answer  # type: ignore[no-any-return]


@asynccontextmanager
async def stdio_server() -> AsyncIterator[PipeClient]:
    to_server_r, to_server_w = os.pipe()
    to_client_r, to_client_w = os.pipe()
    FdStream = trio.lowlevel.FdStream
    async with (
        FdStream(to_server_w) as write,
        FdStream(to_client_r) as read,
        open_line_stream(FdStream(to_server_r), FdStream(to_client_w)) as stream,
        trio.open_nursery() as nursery,
    ):
        nursery.start_soon(make_server().serve, stream)
        client = PipeClient(write, read)
        hello = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }
        assert "result" in await client.ask(message(0, "initialize", hello))
        await write.send_all(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        yield client
        nursery.cancel_scope.cancel()


@EXAMPLES
@given(data=st.data())
async def test_any_params_over_stdio(data: st.DataObject, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    with trio.fail_after(30):
        async with stdio_server() as client:
            for id, (method, params) in enumerate(draw_requests(data, CLIENT_REQUESTS), start=1):
                assert_answered(await client.ask(message(id, method, params)))
            assert "result" in await client.ask(request(99, "ping"))
    assert_quiet_log(caplog)


def test_the_property_covers_every_client_request() -> None:
    # A method added to the table is fuzzed without anyone remembering to add it here.
    assert {"tools/call", "prompts/get", "completion/complete", "resources/read"} <= set(
        CLIENT_REQUESTS
    )
    assert "initialize" in CLIENT_REQUESTS and "sampling/createMessage" not in CLIENT_REQUESTS
