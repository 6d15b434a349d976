"""Sessions of the initialize era belong to the principal that opened them: another caller
(an anonymous one included) who presents the session's id gets 404 on every request, as if
the session did not exist, and the refusal is logged without the session id."""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx
import pytest
import trio
from http_support import initialize, make_server, open_sse, parse_sse, running

from trio_mcp import Context
from trio_mcp.http import asgi_app

#: Every test here runs on both HTTP front ends.
pytestmark = pytest.mark.usefixtures("front_end")


def principal_from_header(scope: Any) -> str | None:
    """The test's stand-in for authentication: the ``x-user`` header names the caller."""
    for name, value in scope["headers"]:
        if name == b"x-user":
            return str(value.decode())
    return None


def call(id: int, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments or {}}
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}


@pytest.fixture
async def served() -> Any:
    server, probe = make_server()

    @server.tool()
    async def whoami(ctx: Context) -> str:
        """The caller, as the session knows it."""
        return str(ctx.principal)

    app = asgi_app(server, principal=principal_from_header, engine_linger=0.05)
    async with running(app) as base, httpx.AsyncClient(timeout=10) as client:
        yield client, base, probe, app


def refusals(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]


async def test_another_principal_cannot_touch_a_session(
    served: Any, caplog: pytest.LogCaptureFixture
) -> None:
    client, base, probe, app = served
    url = base + "/mcp"
    client.headers["x-user"] = "alice"  # (initialize sends no headers of ours)
    alice = await initialize(client, url)
    session = alice["mcp-session-id"]
    del client.headers["x-user"]
    a = {**alice, "x-user": "alice"}

    # Alice has a stream to resume: a call whose stream the tool closed early.
    r = await client.post(url, json=call(1, "poll"), headers=a)
    last_event_id = parse_sse(r.text)[-1].id
    assert last_event_id is not None

    caplog.set_level(logging.WARNING, logger="trio_mcp.http")
    for intruder in ({"x-user": "mallory"}, {}):  # another principal, and an anonymous one
        b = {**alice, **intruder}
        r = await client.post(url, json=call(2, "whoami"), headers=b)
        assert (r.status_code, r.json()["error"]["code"]) == (404, -32600)
        r = await client.post(url, json={"jsonrpc": "2.0", "method": "x/y"}, headers=b)
        assert r.status_code == 404
        assert (await client.get(url, headers=b)).status_code == 404
        r = await client.get(url, headers={**b, "last-event-id": last_event_id})
        assert r.status_code == 404
        assert (await client.delete(url, headers=b)).status_code == 404
    assert len(refusals(caplog)) == 10
    for message in refusals(caplog):
        assert session[:6] in message and session not in message
        assert "'alice'" in message and ("'mallory'" in message or "None" in message)

    # Alice's session is whole: her stream resumes, her calls run as her, her GET stream
    # opens, and she can end it.
    probe.release.set()
    with trio.fail_after(5):
        while True:
            r = await client.get(url, headers={**a, "last-event-id": last_event_id})
            if r.status_code == 200 and r.text:
                break
            await trio.sleep(0.01)
    assert (
        json.loads(parse_sse(r.text)[-1].data)["result"]["content"][0]["text"] == "after reconnect"
    )
    r = await client.post(url, json=call(3, "whoami"), headers=a)
    assert r.json()["result"]["content"][0]["text"] == "alice"
    async with open_sse(client, "GET", url, headers=a) as reader:
        assert len(await reader.wait_for(1)) == 1  # the priming event
    assert (await client.delete(url, headers=a)).status_code == 200
    assert app.manager.statistics()["sessions"] == 0


async def test_an_anonymous_session_is_not_anyone_elses(served: Any) -> None:
    client, base, _, _ = served
    url = base + "/mcp"
    anonymous = await initialize(client, url)
    r = await client.post(url, json=call(1, "whoami"), headers={**anonymous, "x-user": "bob"})
    assert r.status_code == 404
    r = await client.post(url, json=call(2, "whoami"), headers=anonymous)
    assert r.json()["result"]["content"][0]["text"] == "None"


async def test_http_sse_sessions_belong_to_their_principal(
    served: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """The 2024-11-05 transport: only the principal that opened the event stream may post
    to its session."""
    client, base, _, app = served
    caplog.set_level(logging.WARNING, logger="trio_mcp.http")
    alice = {"accept": "text/event-stream", "x-user": "alice"}
    async with open_sse(client, "GET", base + "/sse", headers=alice) as reader:
        (endpoint,) = await reader.wait_for(1)
        assert endpoint.event == "endpoint"
        messages = base + endpoint.data
        initialize = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2024-11-05",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        for intruder in ({"x-user": "mallory"}, {}):
            r = await client.post(messages, json=initialize, headers=intruder)
            assert r.status_code == 404
        assert len(refusals(caplog)) == 2
        r = await client.post(messages, json=initialize, headers={"x-user": "alice"})
        assert r.status_code == 202
        events = await reader.wait_for(2)
        assert json.loads(events[1].data)["result"]["protocolVersion"] == "2024-11-05"
        await client.post(
            messages,
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            headers={"x-user": "alice"},
        )
        r = await client.post(messages, json=call(1, "whoami"), headers={"x-user": "alice"})
        assert r.status_code == 202
        events = await reader.wait_for(3)
        assert json.loads(events[2].data)["result"]["content"][0]["text"] == "alice"
    assert app.sse is not None and len(app.sse.sessions) == 1
