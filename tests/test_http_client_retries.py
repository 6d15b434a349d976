"""The HTTP client's retry limits against scripted failing servers: how many times it tries,
how long it waits in between (the server's ``retry`` or ``default_retry``, doubling, capped
by ``max_retry``), and how it gives up.

The servers are reached in process (:func:`scripted_http.in_process`), so every wait is a
Trio sleep and ``autojump_clock`` makes the gaps exact.
"""

from __future__ import annotations

import itertools
import logging
from typing import Any

import pytest
import trio
from scripted_http import (
    DISCOVER,
    Reply,
    ScriptedApp,
    Seen,
    in_process,
    initialize_result,
    result,
)

from trio_mcp import McpError
from trio_mcp.http import open_http_client

URL = "http://mcp.test/mcp"
LEGACY = "2025-11-25"


def gaps(times: list[float]) -> list[float]:
    return [round(later - earlier, 6) for earlier, later in itertools.pairwise(times)]


def resumptions(app: ScriptedApp) -> list[Seen]:
    return [r for r in app.requests if r.method == "GET" and "last-event-id" in r.headers]


async def legacy_basics(seen: Seen, reply: Reply, session: str = "s1") -> bool:
    """Answer what every legacy test server answers alike; returns whether it did."""
    if seen.rpc_method == "initialize":
        await reply.json(result(seen, initialize_result()), headers={"mcp-session-id": session})
    elif seen.method == "DELETE" or (seen.method == "POST" and "id" not in seen.json):
        await reply.empty(202 if seen.method == "POST" else 200)  # notifications, DELETE
    elif seen.method == "GET" and "last-event-id" not in seen.headers:
        await reply.empty(405)  # no standalone stream
    else:
        return False
    return True


async def test_resuming_an_answer_stream_gives_up_after_reconnect_attempts(
    autojump_clock: Any,
) -> None:
    ended_at: list[float] = []

    async def script(seen: Seen, reply: Reply) -> None:
        if await legacy_basics(seen, reply):
            return
        if seen.method == "GET":  # a resumption: the server is failing
            await reply.empty(503)
            return
        await reply.sse()  # tools/call: a priming event, then the stream ends
        await reply.event(id="call-1", retry=100, data="")
        ended_at.append(trio.current_time())

    app = ScriptedApp(script)
    async with (
        in_process(app) as http,
        open_http_client(
            URL, http_client=http, protocol_version=LEGACY, reconnect_attempts=5, max_retry=0.5
        ) as client,
    ):
        with pytest.raises(McpError) as caught:
            await client.call_tool("t", {})
        give_up_at = trio.current_time()
    assert caught.value.code == -32603
    assert caught.value.message == "could not resume the response stream (5 attempts)"
    resumed = resumptions(app)
    assert len(resumed) == 5
    assert all(r.headers["last-event-id"] == "call-1" for r in resumed)
    # The server's retry (100 ms), doubling, capped by max_retry (0.5 s).
    assert gaps([ended_at[0]] + [r.at for r in resumed]) == [0.1, 0.2, 0.4, 0.5, 0.5]
    assert give_up_at == resumed[-1].at  # no wait after the last failure


async def test_only_failures_in_a_row_count_against_reconnect_attempts(
    autojump_clock: Any,
) -> None:
    async def script(seen: Seen, reply: Reply) -> None:
        if await legacy_basics(seen, reply):
            return
        await reply.sse()
        if seen.method == "POST":
            await reply.event(id="e0", retry=100, data="")
            return
        count = len(resumptions(app))
        if count <= 3:  # three resumptions make progress (an event each), then none
            await reply.event(id=f"e{count}", data="")

    app = ScriptedApp(script)
    async with (
        in_process(app) as http,
        open_http_client(
            URL, http_client=http, protocol_version=LEGACY, reconnect_attempts=2
        ) as client,
    ):
        with pytest.raises(McpError, match=r"\(2 attempts\)"):
            await client.call_tool("t", {})
    resumed = resumptions(app)
    assert [r.headers["last-event-id"] for r in resumed] == ["e0", "e1", "e2", "e3", "e3"]
    # Back to the base delay after each stream that made progress; doubling only on stalls.
    assert gaps([r.at for r in resumed]) == [0.1, 0.1, 0.1, 0.2]


async def test_the_standalone_stream_gives_up_after_reconnect_attempts(
    autojump_clock: Any, caplog: pytest.LogCaptureFixture
) -> None:
    async def script(seen: Seen, reply: Reply) -> None:
        if seen.method == "GET":
            await reply.sse()
            if "last-event-id" not in seen.headers:
                await reply.event(id="get-1", data="")  # no retry: default_retry applies
            return  # every stream ends; those after the first bring nothing new
        if not await legacy_basics(seen, reply):
            await reply.json(result(seen, {"tools": []}))

    app = ScriptedApp(script)
    caplog.set_level(logging.WARNING, "trio_mcp.http.client")
    async with (
        in_process(app) as http,
        open_http_client(
            URL,
            http_client=http,
            protocol_version=LEGACY,
            reconnect_attempts=3,
            default_retry=0.25,
        ) as client,
    ):
        await trio.sleep(600)  # long past any backoff
        assert await client.list_tools() == []  # the session goes on without the stream
    gets = [r for r in app.requests if r.method == "GET"]
    assert len(gets) == 1 + 3
    assert [g.headers.get("last-event-id") for g in gets] == [None, "get-1", "get-1", "get-1"]
    assert gaps([g.at for g in gets]) == [0.25, 0.5, 1.0]
    assert "giving up the standalone GET stream" in caplog.text


async def test_a_forgotten_session_is_replaced_at_most_reinitialize_attempts_times(
    autojump_clock: Any,
) -> None:
    sessions = 0

    async def script(seen: Seen, reply: Reply) -> None:
        nonlocal sessions
        if seen.rpc_method == "initialize":
            sessions += 1
            await legacy_basics(seen, reply, f"s{sessions}")
        elif not await legacy_basics(seen, reply):
            await reply.empty(404)  # every session is forgotten at once

    app = ScriptedApp(script)
    async with (
        in_process(app) as http,
        open_http_client(
            URL, http_client=http, protocol_version=LEGACY, reinitialize_attempts=2
        ) as client,
    ):
        for _ in range(3):
            with pytest.raises(McpError) as caught:
                await client.list_tools()
            assert caught.value.data == {"httpStatus": 404}
    listings = app.rpc("tools/list")
    # Each of the first two requests got one new session to retry with; the third none.
    assert [r.headers["mcp-session-id"] for r in listings] == ["s1", "s2", "s2", "s3", "s3"]
    assert len(app.rpc("initialize")) == 1 + 2
    assert len(app.rpc("notifications/initialized")) == 1 + 2


async def test_a_modern_request_is_reissued_at_most_reissue_attempts_times(
    autojump_clock: Any,
) -> None:
    async def script(seen: Seen, reply: Reply) -> None:
        if seen.rpc_method == "server/discover":
            await reply.json(result(seen, DISCOVER))
            return
        await reply.sse()  # tools/call: every stream ends without the answer
        await reply.event(id="1", data="")

    app = ScriptedApp(script)
    async with (
        in_process(app) as http,
        open_http_client(URL, http_client=http, reissue_attempts=2) as client,
    ):
        with pytest.raises(McpError, match="the response stream ended without an answer"):
            await client.call_tool("t", {})
    calls = app.rpc("tools/call")
    assert len(calls) == 1 + 2
    assert len({c.json["id"] for c in calls}) == 3  # a fresh id each time


@pytest.mark.parametrize(
    "refusal",
    [
        (b"Bad Request: No valid session ID provided", "text/plain"),
        (
            b'{"jsonrpc": "2.0", "id": "server-error", "error": '
            b'{"code": -32600, "message": "Bad Request: No valid session ID provided"}}',
            "application/json",
        ),
    ],
    ids=["text", "json-rpc"],
)
async def test_a_400_no_valid_session_starts_a_new_session_like_a_404(
    autojump_clock: Any, refusal: tuple[bytes, str]
) -> None:
    """Servers that answer an unknown session with 400 rather than 404 (as some SDKs do):
    the client starts a new session and retries, as it does for 404."""
    body, content_type = refusal
    sessions = 0
    current = "s1"

    async def script(seen: Seen, reply: Reply) -> None:
        nonlocal sessions, current
        if seen.rpc_method == "initialize":
            sessions += 1
            current = f"s{sessions}"
            await legacy_basics(seen, reply, current)
        elif await legacy_basics(seen, reply):
            return
        elif seen.headers.get("mcp-session-id") != current:
            await reply.text(body.decode(), status=400, content_type=content_type)
        else:
            await reply.json(result(seen, {"tools": []}))

    app = ScriptedApp(script)
    async with (
        in_process(app) as http,
        open_http_client(URL, http_client=http, protocol_version=LEGACY) as client,
    ):
        current = "restarted"  # the server forgot s1
        assert await client.list_tools() == []
    listings = app.rpc("tools/list")
    assert [r.headers["mcp-session-id"] for r in listings] == ["s1", "s2"]
    assert len(app.rpc("initialize")) == 2


async def test_a_400_about_something_else_is_answered_as_it_stands(autojump_clock: Any) -> None:
    async def script(seen: Seen, reply: Reply) -> None:
        if not await legacy_basics(seen, reply):
            await reply.json(
                {
                    "jsonrpc": "2.0",
                    "id": seen.json["id"],
                    "error": {"code": -32602, "message": "bad cursor"},
                },
                status=400,
            )

    app = ScriptedApp(script)
    async with (
        in_process(app) as http,
        open_http_client(URL, http_client=http, protocol_version=LEGACY) as client,
    ):
        with pytest.raises(McpError, match="bad cursor") as caught:
            await client.list_tools()
    assert caught.value.code == -32602
    assert len(app.rpc("initialize")) == 1
