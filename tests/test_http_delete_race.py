"""A session that ends (``DELETE`` on another connection) while the answer of one of its
requests is being written must not cut that write: the answer completes, the keep-alive
connection that carries it serves its next request, and the caller's slot for requests
in flight is given back (issue 21, failure 10).

The race is made deterministic with an ASGI wrapper around the app: when the answer's
last body message is being sent, it waits (shielded, bounded) until the test's ``DELETE``
on the other connection was answered, then lets the real (Hypercorn) ``send`` go on. A
write made by the session's engine is then cancelled inside Hypercorn's ``send``, which
leaves the connection in the middle of a response for ever (the client waits for the
body; the request task waits for a disconnect that never comes, holding its slot)."""

from __future__ import annotations

import json
from collections.abc import MutableMapping
from functools import partial
from typing import Any

import httpx
import trio
from http_support import initialize, parse_sse
from hypercorn.config import Config
from hypercorn.trio import serve as hypercorn_serve

from trio_mcp import Context, Server
from trio_mcp._http.server._exchange import Receive, Scope, Send
from trio_mcp.http import McpAsgiApp, open_asgi_app

MARK = b"answer-being-written"
#: How many races: more than the cap on requests in flight, so that a slot leaked by each
#: would show as a 429 long before the end.
ROUNDS = 100
CAP = 4


class SlowLastWrite:
    """Wraps the app: the last body message of an answer that contains :data:`MARK` waits
    for :attr:`deleted` before it reaches the ASGI server."""

    def __init__(self, app: McpAsgiApp) -> None:
        self.app = app
        self.writing = trio.Event()
        self.deleted = trio.Event()

    def arm(self) -> None:
        self.writing = trio.Event()
        self.deleted = trio.Event()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def slow_send(message: MutableMapping[str, Any]) -> None:
            last = message["type"] == "http.response.body" and not message.get("more_body")
            if last and MARK in message.get("body", b""):
                writing, deleted = self.writing, self.deleted
                writing.set()
                # The write is under way (think of a full socket buffer) when the DELETE
                # ends the session: shielded, so that only a cancellation of the task that
                # writes can stop it, and bounded, so that the test cannot hang.
                with trio.move_on_after(10, shield=True):
                    await deleted.wait()
            await send(message)

        await self.app(scope, receive, slow_send)


def race_server() -> Server:
    server = Server("race", version="1")

    @server.tool()
    async def answer() -> str:
        """Answer at once."""
        return MARK.decode()

    return server


async def race_once(
    a: httpx.AsyncClient, b: httpx.AsyncClient, url: str, hook: SlowLastWrite, id: int
) -> int:
    """One race: initialize and call on ``a``, DELETE on ``b`` while the answer is being
    written, then a request on ``a``. Returns the status of the call's answer."""
    hook.arm()
    with trio.fail_after(5):
        headers = await initialize(a, url)
    call = {
        "jsonrpc": "2.0",
        "id": id,
        "method": "tools/call",
        "params": {"name": "answer", "arguments": {}},
    }
    answers: list[httpx.Response] = []

    async def call_on_a() -> None:
        answers.append(await a.post(url, json=call, headers=headers))

    with trio.fail_after(5):
        async with trio.open_nursery() as calls:
            calls.start_soon(call_on_a)
            await hook.writing.wait()
            gone = await b.delete(url, headers=headers)
            assert gone.status_code == 200
            hook.deleted.set()
    (answer,) = answers
    if answer.status_code == 200:
        assert MARK.decode() in answer.text
    # The connection that carried the answer serves its next request.
    with trio.fail_after(5):
        after = await a.post(url, json=call, headers=headers)
    assert after.status_code == 404  # the session ended
    assert "error" in after.json()
    return answer.status_code


async def test_a_delete_during_an_answers_write_neither_cuts_it_nor_leaks_a_slot() -> None:
    app = McpAsgiApp(race_server(), max_requests_per_principal=CAP)
    hook = SlowLastWrite(app)
    config = Config()
    config.bind = ["127.0.0.1:0"]
    config.accesslog = None
    config.loglevel = "WARNING"
    config.graceful_timeout = 1.0
    stop = trio.Event()

    async def trigger() -> None:
        await stop.wait()

    statuses: list[int] = []
    async with trio.open_nursery() as nursery:
        binds = await nursery.start(
            partial(hypercorn_serve, hook, config, shutdown_trigger=trigger, mode="asgi")  # type: ignore[arg-type]
        )
        url = binds[0] + "/mcp"
        one = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        try:
            async with (
                httpx.AsyncClient(limits=one, timeout=None) as a,
                httpx.AsyncClient(limits=one, timeout=None) as b,
            ):
                for round in range(ROUNDS):
                    statuses.append(await race_once(a, b, url, hook, round + 1))
        finally:
            stop.set()
    assert statuses == [200] * ROUNDS  # never a 429: every round gave its slot back
    assert app.requests_per_caller.counts == {}


async def test_a_batch_with_a_self_answered_request_beside_a_streaming_one_is_answered(
    autojump_clock: trio.abc.Clock,
) -> None:
    """The engine hands its writes to the POST's task; a batch's ``ping`` is answered by
    the delivering task while the engine may wait, holding the stream, for its writes to
    be taken: the batch is delivered beside the writes, so neither waits for the other."""
    server = race_server()

    @server.tool()
    async def chatty(ctx: Context) -> str:
        """Report progress without a pause, then answer."""
        for step in range(5):
            await ctx.report_progress(step, 5)
        return "done"

    async with open_asgi_app(server) as app:
        transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            headers = await initialize(client, "/mcp", version="2025-03-26")
            batch = [
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "tools/call",
                    "params": {"name": "chatty", "_meta": {"progressToken": "p"}},
                },
                # (time for the tool to write while the batch is still being delivered)
                *[{"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}] * 20,
                {"jsonrpc": "2.0", "id": 2, "method": "ping"},
            ]
            with trio.fail_after(5):
                response = await client.post("/mcp", json=batch, headers=headers)
    assert response.status_code == 200
    events = [json.loads(e.data) for e in parse_sse(response.text) if e.data]
    answers = {e["id"]: e for e in events if "id" in e}
    assert answers[2] == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert answers[1]["result"]["content"][0]["text"] == "done"
    assert sum(e.get("method") == "notifications/progress" for e in events) == 5
