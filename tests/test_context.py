"""What a handler's Context says about its request's cancellation: ``ctx.cancelled`` turns
true when the client cancels, readable even where ``trio.Cancelled`` cannot arrive (a shielded
section)."""

from __future__ import annotations

import httpx
import pytest
import trio
from feature_harness import ERAS, open_pair
from http_support import modern_body, modern_headers, running

from trio_mcp import Context, Server
from trio_mcp.http import asgi_app


def cleanup_server() -> tuple[Server, list[bool], trio.Event, trio.Event]:
    """A tool that, once started, finishes its work shielded and notes whether the client
    cancelled meanwhile."""
    server = Server("careful")
    seen: list[bool] = []
    started, done = trio.Event(), trio.Event()

    @server.tool()
    async def careful(ctx: Context) -> str:
        seen.append(ctx.cancelled)
        started.set()
        with trio.CancelScope(shield=True), trio.fail_after(5):
            while not ctx.cancelled:  # cleanup that only the client would have waited for
                await trio.sleep(0.01)
            seen.append(ctx.cancelled)
        done.set()
        return "finished"

    return server, seen, started, done


@pytest.mark.parametrize("version", ERAS)
async def test_ctx_cancelled_turns_true_when_the_client_cancels(
    version: str, autojump_clock: trio.testing.MockClock
) -> None:
    server, seen, started, done = cleanup_server()
    async with open_pair(server, protocol_version=version) as pair:
        with trio.move_on_after(1) as scope:
            await pair.client.call_tool("careful")
        with trio.fail_after(10):
            await done.wait()
        answers = pair.server_sent.responses_to(pair.client_sent.requests("tools/call")[0].id)
    assert scope.cancelled_caught
    assert seen == [False, True]
    assert answers == []  # a cancelled handler sends nothing


@pytest.mark.usefixtures("front_end")
async def test_over_stateless_http_a_disconnect_is_the_cancellation() -> None:
    server, seen, started, done = cleanup_server()
    body = modern_body(1, "tools/call", {"name": "careful"})
    async with running(asgi_app(server)) as base, httpx.AsyncClient(timeout=10) as client:
        async with trio.open_nursery() as nursery:

            async def call() -> None:
                await client.post(
                    base + "/mcp", json=body, headers=modern_headers("tools/call", "careful")
                )

            nursery.start_soon(call)
            with trio.fail_after(5):
                await started.wait()
            nursery.cancel_scope.cancel()  # closes the connection
        with trio.fail_after(5):
            await done.wait()
    assert seen == [False, True]
