"""Task creation is fair between principals (issue 21, failure 8): each principal has a
share of the running and waiting slots, a principal past its share is refused with
``RetryLater`` ("quota"; over HTTP 429 and ``Retry-After``), the server's own bound with
"busy" (503), never 500, and another principal still gets its first task."""

from __future__ import annotations

import httpx
import pytest
import trio
from http_support import meta, modern_body, modern_headers, running
from test_server_tasks import Recorder, make_server, opted_in

from trio_mcp import RetryLater
from trio_mcp.http import asgi_app
from trio_mcp.server import TASKS_EXTENSION


async def test_a_principal_past_its_share_is_refused_and_others_are_not(
    autojump_clock: trio.abc.Clock,
) -> None:
    recorder = Recorder()
    server = make_server(recorder, max_running_per_principal=2, max_waiting_per_principal=1)
    slow = {"name": "slow", "arguments": {"seconds": 600}}
    async with (
        server.running_tasks() as runner,
        opted_in(server, principal="alice", task_runner=runner) as alice,
        opted_in(server, principal="bob", task_runner=runner) as bob,
        opted_in(server, task_runner=runner) as anonymous,
    ):
        mine = [await alice.request("tools/call", slow) for _ in range(3)]
        await trio.sleep(1)
        # Two of Alice's run; the third waits although 62 server slots are free.
        assert recorder.events == ["start True", "start True"]
        status = await alice.request("tasks/get", {"taskId": mine[2]["taskId"]})
        assert status["status"] == "working"
        with pytest.raises(RetryLater) as refused:
            await alice.request("tools/call", slow)
        assert refused.value.reason == "quota" and refused.value.retry_after == 5
        assert "its share" in refused.value.message
        # Bob's first task runs at once.
        await bob.request("tools/call", slow)
        await trio.sleep(1)
        assert recorder.events.count("start True") == 3
        # Requests without a principal have only the server's bounds.
        for _ in range(4):
            await anonymous.request("tools/call", slow)
        # A slot of Alice's, freed, is hers again.
        await alice.request("tasks/cancel", {"taskId": mine[0]["taskId"]})
        await trio.sleep(1)
        await alice.request("tools/call", slow)


def test_the_shares_are_checked() -> None:
    from trio_mcp.server import TaskSettings

    with pytest.raises(ValueError, match="max_running_per_principal"):
        TaskSettings(max_running_per_principal=0)
    with pytest.raises(ValueError, match="max_waiting_per_principal"):
        TaskSettings(max_waiting_per_principal=-1)


@pytest.mark.usefixtures("front_end")
async def test_over_http_a_quota_is_429_and_the_servers_bound_503() -> None:
    server = make_server(
        Recorder(),
        max_running=2,
        max_waiting=0,
        max_running_per_principal=1,
        max_waiting_per_principal=0,
    )
    app = asgi_app(
        server, principal=lambda scope: dict(scope["headers"]).get(b"x-user", b"").decode() or None
    )
    body = modern_body(1, "tools/call", {"name": "slow", "arguments": {"seconds": 600}})
    body["params"]["_meta"] = meta(extensions={TASKS_EXTENSION: {}})

    async def call(client: httpx.AsyncClient, url: str, user: str) -> httpx.Response:
        headers = modern_headers("tools/call", "slow", **{"x-user": user})
        return await client.post(url, json=body, headers=headers)

    async with running(app) as base, httpx.AsyncClient(timeout=10) as client:
        url = f"{base}/mcp"
        with trio.fail_after(20):
            first = await call(client, url, "alice")
            assert first.status_code == 200 and first.json()["result"]["resultType"] == "task"
            again = await call(client, url, "alice")
            assert again.status_code == 429
            assert again.headers["retry-after"] == "5"
            error = again.json()["error"]
            assert error["code"] == -32603
            assert error["data"] == {"retryAfter": 5, "reason": "quota"}
            assert (await call(client, url, "bob")).status_code == 200
            full = await call(client, url, "carol")
            assert full.status_code == 503 and full.headers["retry-after"] == "5"
            assert full.json()["error"]["data"]["reason"] == "busy"
