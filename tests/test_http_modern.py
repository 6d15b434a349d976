"""Stateless Streamable HTTP (2026-07-28), checked on the wire with httpx against a real
Hypercorn server."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import trio
from http_support import (
    ACCEPT,
    MODERN,
    make_server,
    meta,
    modern_body,
    modern_headers,
    open_sse,
    parse_sse,
    running,
)

from trio_mcp.http import OriginPolicy, asgi_app, open_asgi_app

#: Every test here runs on both HTTP front ends.
pytestmark = pytest.mark.usefixtures("front_end")


@pytest.fixture
async def served() -> Any:
    server, probe = make_server()
    app = asgi_app(server, keepalive_interval=0.05)
    async with running(app) as base, httpx.AsyncClient(timeout=10) as client:
        yield client, base + "/mcp", probe, app


async def test_a_call_is_answered_with_json(served: Any) -> None:
    client, url, _, _ = served
    r = await client.post(
        url,
        json=modern_body(1, "tools/call", {"name": "echo", "arguments": {"text": "hi"}}),
        headers=modern_headers("tools/call", "echo"),
    )
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/json"
    body = r.json()
    assert body["id"] == 1
    assert body["result"]["content"] == [{"type": "text", "text": "hi"}]
    assert body["result"]["resultType"] == "complete"
    assert body["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "http-test"


async def test_discover_and_lists_need_no_session(served: Any) -> None:
    client, url, _, _ = served
    r = await client.post(
        url, json=modern_body(1, "server/discover"), headers=modern_headers("server/discover")
    )
    assert r.status_code == 200
    assert MODERN in r.json()["result"]["supportedVersions"]
    assert "mcp-session-id" not in r.headers
    r = await client.post(
        url, json=modern_body(2, "tools/list"), headers=modern_headers("tools/list")
    )
    names = [t["name"] for t in r.json()["result"]["tools"]]
    assert names[:2] == ["echo", "progress"]
    assert r.json()["result"]["ttlMs"] == 0


async def test_notifications_are_accepted_and_get_and_delete_are_not(served: Any) -> None:
    client, url, _, _ = served
    r = await client.post(
        url,
        json={
            "jsonrpc": "2.0",
            "method": "notifications/roots/list_changed",
            "params": {"_meta": meta()},
        },
        headers=modern_headers("notifications/roots/list_changed"),
    )
    assert (r.status_code, r.content) == (202, b"")
    for method in ("GET", "DELETE"):
        r = await client.request(method, url, headers={"mcp-protocol-version": MODERN})
        assert r.status_code == 405
        assert r.headers["allow"] == "POST"


@pytest.mark.parametrize(
    ("body", "headers", "status", "code"),
    [
        # _meta without the envelope: -32602 before anything else
        (
            {"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {}},
            modern_headers("tools/list"),
            400,
            -32602,
        ),
        # header and _meta disagree
        (
            modern_body(5, "tools/list"),
            modern_headers("tools/list", **{"mcp-protocol-version": "2025-06-18x"}),
            400,
            -32020,
        ),
        # a version we do not speak, consistently
        (
            {
                "jsonrpc": "2.0",
                "id": 5,
                "method": "tools/list",
                "params": {
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": "v999",
                        "io.modelcontextprotocol/clientCapabilities": {},
                    }
                },
            },
            modern_headers("tools/list", **{"mcp-protocol-version": "v999"}),
            400,
            -32022,
        ),
        # Mcp-Method missing, or another method, or another case
        (modern_body(5, "tools/list"), {"mcp-protocol-version": MODERN}, 400, -32020),
        (modern_body(5, "tools/list"), modern_headers("prompts/list"), 400, -32020),
        (modern_body(5, "tools/list"), modern_headers("TOOLS/LIST"), 400, -32020),
        # Mcp-Name missing or wrong
        (
            modern_body(5, "tools/call", {"name": "echo", "arguments": {"text": "x"}}),
            modern_headers("tools/call"),
            400,
            -32020,
        ),
        (
            modern_body(5, "tools/call", {"name": "echo", "arguments": {"text": "x"}}),
            modern_headers("tools/call", "other"),
            400,
            -32020,
        ),
        # an unknown method, and the handshake a stateless server does not know
        (modern_body(5, "nope/nope"), modern_headers("nope/nope"), 404, -32601),
        (modern_body(5, "initialize"), modern_headers("initialize"), 404, -32601),
        (modern_body(5, "ping"), modern_headers("ping"), 404, -32601),
    ],
)
async def test_bad_requests_get_the_specs_status_and_error(
    served: Any, body: dict[str, Any], headers: dict[str, str], status: int, code: int
) -> None:
    client, url, _, _ = served
    r = await client.post(url, json=body, headers=headers)
    assert r.status_code == status, r.text
    error = r.json()["error"]
    assert error["code"] == code
    assert r.json()["id"] == 5
    if code == -32022:
        assert error["data"] == {"supported": [MODERN], "requested": "v999"}


async def test_the_name_header_may_be_base64_and_padded(served: Any) -> None:
    client, url, _, _ = served
    body = modern_body(1, "tools/call", {"name": "echo", "arguments": {"text": "x"}})
    for name in ("echo", "=?base64?ZWNobw==?="):  # (h11 strips surrounding spaces itself)
        r = await client.post(url, json=body, headers=modern_headers("tools/call", name))
        assert r.status_code == 200, r.text
    r = await client.post(url, json=body, headers=modern_headers("tools/call", "=?base64?ZWNobw?="))
    assert r.json()["error"]["code"] == -32020


@pytest.mark.parametrize(
    ("value", "header", "ok"),
    [
        ("us-west1", "us-west1", True),
        ("Hello", "=?base64?SGVsbG8=?=", True),
        ("Hello", "=?base64?SGVsbG8?=", False),  # padding missing
        ("Hello", "=?base64?SGVs!!!bG8=?=", False),  # not Base64
        ("SGVsbG8=", "SGVsbG8=", True),  # no sentinel: literal
        ("test-value", None, False),  # missing
        ("a", "b", False),  # mismatch
    ],
)
async def test_mirrored_parameters_must_match_the_body(
    served: Any, value: str, header: str | None, ok: bool
) -> None:
    client, url, _, _ = served
    headers = modern_headers("tools/call", "regional")
    if header is not None:
        headers["mcp-param-region"] = header
    r = await client.post(
        url,
        json=modern_body(1, "tools/call", {"name": "regional", "arguments": {"region": value}}),
        headers=headers,
    )
    if ok:
        assert r.status_code == 200
        assert r.json()["result"]["content"][0]["text"] == f"{value} x1"
    else:
        assert r.status_code == 400
        assert r.json()["error"]["code"] == -32020


async def test_progress_turns_the_answer_into_an_sse_stream(served: Any) -> None:
    client, url, _, _ = served
    body = modern_body(1, "tools/call", {"name": "progress", "arguments": {}})
    body["params"]["_meta"]["progressToken"] = "tok"
    body["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = "info"
    r = await client.post(url, json=body, headers=modern_headers("tools/call", "progress"))
    assert r.status_code == 200
    assert r.headers["content-type"] == "text/event-stream"
    assert r.headers["x-accel-buffering"] == "no"
    # One complete JSON message per data: line.
    lines = [line for line in r.text.splitlines() if line.startswith("data:")]
    messages = [json.loads(line[5:]) for line in lines]
    methods = [m.get("method") for m in messages]
    assert methods.count("notifications/progress") == 3
    assert methods.count("notifications/message") == 3
    assert messages[-1]["id"] == 1
    assert messages[-1]["result"]["content"][0]["text"] == "done"


async def test_without_a_log_level_nothing_is_logged(served: Any) -> None:
    client, url, _, _ = served
    r = await client.post(
        url,
        json=modern_body(1, "tools/call", {"name": "progress", "arguments": {}}),
        headers=modern_headers("tools/call", "progress"),
    )
    assert r.headers["content-type"] == "application/json"
    assert r.json()["result"]["content"][0]["text"] == "done"


async def test_a_client_that_disconnects_cancels_its_request(served: Any) -> None:
    client, url, probe, _ = served
    async with trio.open_nursery() as nursery:

        async def call() -> None:
            await client.post(
                url,
                json=modern_body(1, "tools/call", {"name": "block", "arguments": {}}),
                headers=modern_headers("tools/call", "block"),
            )

        nursery.start_soon(call)
        with trio.fail_after(5):
            await probe.started.wait()
        nursery.cancel_scope.cancel()  # abort the POST
    with trio.fail_after(5):
        await probe.cancelled.wait()
    assert not probe.finished.is_set()


async def test_input_required_round_trip(served: Any) -> None:
    client, url, _, _ = served
    headers = modern_headers("tools/call", "ask_name")
    body = modern_body(1, "tools/call", {"name": "ask_name", "arguments": {}})
    body["params"]["_meta"] = meta(elicitation={})
    first = (await client.post(url, json=body, headers=headers)).json()["result"]
    assert first["resultType"] == "input_required"
    assert first["inputRequests"]["who"]["method"] == "elicitation/create"
    body["id"] = 2
    body["params"]["requestState"] = first["requestState"]
    body["params"]["inputResponses"] = {"who": {"action": "accept", "content": {"name": "Ada"}}}
    done = (await client.post(url, json=body, headers=headers)).json()["result"]
    assert done["content"][0]["text"] == "Hello, Ada!"


async def test_listen_acknowledges_forwards_keeps_alive_and_ends_on_disconnect(
    served: Any,
) -> None:
    client, url, _, app = served
    server = app.server
    body = modern_body(7, "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    async with client.stream(
        "POST", url, json=body, headers=modern_headers("subscriptions/listen")
    ) as r:
        assert r.headers["content-type"] == "text/event-stream"
        raw = ""
        async for chunk in r.aiter_text():
            raw += chunk
            if "acknowledged" in raw and "list_changed" not in raw:
                server.notify_list_changed("tools")
            if "list_changed" in raw and ": keep-alive" in raw:
                break
    events = [json.loads(e.data) for e in parse_sse(raw)]
    assert events[0]["method"] == "notifications/subscriptions/acknowledged"
    assert events[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 7
    assert events[1]["method"] == "notifications/tools/list_changed"
    assert events[1]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 7
    with trio.fail_after(5):
        while server._hub.count:
            await trio.sleep(0.01)  # the disconnect ended the subscription


async def test_shutdown_ends_listen_streams_with_their_result() -> None:
    server, _ = make_server()
    app = asgi_app(server)
    async with running(app) as base, httpx.AsyncClient(timeout=10) as client:
        body = modern_body(3, "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
        async with open_sse(
            client, "POST", base + "/mcp", json=body, headers=modern_headers("subscriptions/listen")
        ) as reader:
            events = await reader.wait_for(1)
            assert "acknowledged" in events[0].data
            app.begin_shutdown()
            events = await reader.rest()
        final = json.loads(events[-1].data)
        assert final["id"] == 3
        assert final["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 3


async def test_transport_limits(served: Any) -> None:
    client, url, _, app = served
    headers = modern_headers("tools/call", "echo")
    big = modern_body(1, "tools/call", {"name": "echo", "arguments": {"text": "x" * (5 << 20)}})
    r = await client.post(url, json=big, headers=headers)
    assert r.status_code == 413
    assert r.json()["error"]["code"] == -32600
    r = await client.post(url, content=b"{}", headers={**headers, "content-type": "text/plain"})
    assert r.status_code == 415
    r = await client.post(
        url, content=b"{not json", headers={**headers, "content-type": "application/json"}
    )
    assert (r.status_code, r.json()["error"]["code"]) == (400, -32700)
    r = await client.post(
        url, json=[modern_body(1, "tools/list")], headers=modern_headers("tools/list")
    )
    assert (r.status_code, r.json()["error"]["code"]) == (400, -32600)
    r = await client.post(
        url,
        json=modern_body(1, "tools/list"),
        headers={**modern_headers("tools/list"), "accept": "text/html"},
    )
    assert r.status_code == 406
    r = await client.put(url)
    assert r.status_code == 405
    r = await client.get(url.replace("/mcp", "/elsewhere"))
    assert r.status_code == 404


async def test_sse_only_clients_get_sse(served: Any) -> None:
    client, url, _, _ = served
    r = await client.post(
        url,
        json=modern_body(1, "tools/call", {"name": "echo", "arguments": {"text": "a"}}),
        headers={**modern_headers("tools/call", "echo"), "accept": "text/event-stream"},
    )
    assert r.headers["content-type"] == "text/event-stream"
    assert json.loads(parse_sse(r.text)[-1].data)["result"]["content"][0]["text"] == "a"


@pytest.mark.parametrize(
    ("host", "origin", "status"),
    [
        ("evil.example.com", "http://evil.example.com", 403),
        ("localhost:1234", "http://evil.example.com", 403),
        ("evil.example.com", None, 403),
        ("localhost:1234", "http://localhost:5173", 200),
        ("127.0.0.1:9", None, 200),
        ("[::1]:9", "http://[::1]:9", 200),
    ],
)
async def test_dns_rebinding_protection(
    served: Any, host: str, origin: str | None, status: int
) -> None:
    client, url, _, _ = served
    headers = {**modern_headers("server/discover"), "host": host}
    if origin is not None:
        headers["origin"] = origin
    r = await client.post(url, json=modern_body(1, "server/discover"), headers=headers)
    assert r.status_code == status
    if status == 403:
        assert r.json()["error"]["code"] == -32600


async def test_a_host_policy_can_allow_other_names() -> None:
    server, _ = make_server()
    policy = OriginPolicy(
        allowed_hosts=["mcp.example.com"], allowed_origins=["https://app.example.com"]
    )
    app = asgi_app(server, origin_policy=policy)
    async with running(app) as base, httpx.AsyncClient() as client:
        headers = {**modern_headers("server/discover"), "host": "mcp.example.com"}
        ok = await client.post(
            base + "/mcp", json=modern_body(1, "server/discover"), headers=headers
        )
        assert ok.status_code == 200
        bad = await client.post(
            base + "/mcp",
            json=modern_body(1, "server/discover"),
            headers={**headers, "origin": "https://other.example.com"},
        )
        assert bad.status_code == 403


async def test_modern_requests_need_no_lifespan() -> None:
    """An app whose lifespan never ran still answers stateless requests (sessions: 503)."""
    server, _ = make_server()
    app = asgi_app(server)
    transport = httpx.ASGITransport(app=app)  # runs no lifespan
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        r = await client.post(
            "/mcp",
            json=modern_body(1, "tools/call", {"name": "echo", "arguments": {"text": "x"}}),
            headers=modern_headers("tools/call", "echo"),
        )
        assert r.json()["result"]["content"][0]["text"] == "x"
        r = await client.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
            headers={"accept": ACCEPT},
        )
        assert r.status_code == 503


async def test_stateless_requests_share_one_bound_and_the_excess_is_refused_as_busy() -> None:
    """Each stateless request has a session of its own; max_concurrent_requests bounds
    them together: one runs, one waits for its turn, the third is refused at once, with
    503 and Retry-After (a status HTTP clients retry on), never a 500."""
    server, probe = make_server()
    app = asgi_app(server, session_options={"max_concurrent_requests": 1})
    answers: dict[int, Any] = {}

    async def call(client: httpx.AsyncClient, url: str, id: int, tool: str) -> None:
        r = await client.post(
            url,
            json=modern_body(id, "tools/call", {"name": tool, "arguments": {"text": "x"}}),
            headers=modern_headers("tools/call", tool),
        )
        answers[id] = (r.status_code, r.json(), r.headers.get("retry-after"))

    async with running(app) as base, httpx.AsyncClient(timeout=10) as client:
        url = base + "/mcp"
        async with trio.open_nursery() as nursery:
            nursery.start_soon(call, client, url, 1, "block")
            with trio.fail_after(5):
                await probe.started.wait()
            nursery.start_soon(call, client, url, 2, "progress")  # waits for the slot
            with trio.fail_after(5):
                while app.modern.admission.waiting == 0:
                    await trio.sleep(0.01)
            await call(client, url, 3, "progress")  # no room to wait: refused at once
            assert 1 not in answers and 2 not in answers
            probe.release.set()
    assert answers[3][0] == 503
    assert answers[3][2] == "1"
    assert answers[3][1] == {
        "jsonrpc": "2.0",
        "id": 3,
        "error": {
            "code": -32603,
            "message": "Service Unavailable: too many requests in flight; try again later",
        },
    }
    assert answers[1][1]["result"]["content"][0]["text"] == "released"
    assert answers[2][0] == 200
    assert app.modern.admission.waiting == 0


async def test_only_requests_that_get_a_handler_get_a_disconnect_watcher() -> None:
    """A plain-function tool is answered without yielding, so nothing could cancel it: no
    task watches its client. A handler that may wait gets one (in the app's nursery)."""
    server, _ = make_server()

    @server.tool()
    def plain(text: str) -> str:
        """Echo the text, synchronously."""
        return text

    async def post(app: Any, tool: str) -> list[dict[str, Any]]:
        sent: list[dict[str, Any]] = []
        body = json.dumps(modern_body(1, "tools/call", {"name": tool, "arguments": {"text": "x"}}))
        delivered = False

        async def receive() -> dict[str, Any]:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body.encode(), "more_body": False}
            await trio.sleep_forever()  # the exchange is never reported over
            raise AssertionError("unreachable")

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)
            await trio.lowlevel.checkpoint()

        headers = {"host": "127.0.0.1", **modern_headers("tools/call", tool)}
        scope = {
            "type": "http",
            "method": "POST",
            "path": "/mcp",
            "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
        }
        with trio.fail_after(5):
            await app(scope, receive, send)
        return sent

    with trio.fail_after(5):
        async with open_asgi_app(server) as app:
            watchers = app.modern.watchers
            assert watchers is not None
            before = len(watchers.child_tasks)
            sent = await post(app, "plain")
            assert json.loads(sent[-1]["body"])["result"]["content"][0]["text"] == "x"
            assert len(watchers.child_tasks) == before
            sent = await post(app, "echo")  # an async def: it could wait
            assert json.loads(sent[-1]["body"])["result"]["content"][0]["text"] == "x"
            assert len(watchers.child_tasks) == before + 1
