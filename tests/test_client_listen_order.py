"""A subscription ends behind the notifications that came before its end, even while they
still wait in the client's notification queue.

The end (the answer to ``subscriptions/listen``, or the end of the server's input) does not
pass through that queue, so it can overtake them: here a slow log handler holds the queue
while a change and then the end arrive. The change must still reach the listener.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio
from feature_harness import MODERN

from trio_mcp import connect_client
from trio_mcp.client import Change
from trio_mcp.protocol import Connection
from trio_mcp.session import Session, connect_session
from trio_mcp.transports import memory_stream_pair
from trio_mcp.types import Implementation, ServerCapabilities, ToolsCapability

SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
LEGACY = "2025-11-25"


@pytest.mark.parametrize("version", [MODERN, LEGACY])
async def test_a_change_queued_behind_a_slow_handler_is_not_lost_when_the_end_comes(
    version: str, autojump_clock: Any
) -> None:
    subscribed = trio.Event()
    end_now = trio.Event()
    log_started = trio.Event()
    release_log = trio.Event()

    async def serve(session: Session, request: Any) -> Any:
        if request.method != "subscriptions/listen":  # pragma: no cover - not asked
            raise AssertionError(request.method)
        meta = {"_meta": {SUBSCRIPTION_ID: request.id}}
        await session.send_notification(
            "notifications/subscriptions/acknowledged",
            {"notifications": {"toolsListChanged": True}, **meta},
            related=request,
        )
        subscribed.set()
        await end_now.wait()
        await session.send_notification(
            "notifications/message", {"level": "info", "data": "slow"}, related=request
        )
        await session.send_notification("notifications/tools/list_changed", meta, related=request)
        return {"resultType": "complete", **meta}

    async def slow_log(params: Any) -> None:
        log_started.set()
        await release_log.wait()

    client_end, server_end = memory_stream_pair()
    server_conn = Connection(
        "server",
        info=Implementation(name="scripted", version="0"),
        capabilities=ServerCapabilities(tools=ToolsCapability(list_changed=True), logging={}),
    )
    async with trio.open_nursery() as nursery:
        server = await connect_session(nursery, server_end, server_conn, handler=serve)
        client = await connect_client(
            nursery, client_end, protocol_version=version, on_log=slow_log
        )
        async with client.listen(tools=True) as changes:
            if version == LEGACY:
                # Unasked in this era; the end is the end of the server's input.
                await server.send_notification(
                    "notifications/message", {"level": "info", "data": "slow"}
                )
                await server.send_notification("notifications/tools/list_changed")
                await log_started.wait()
                await server.aclose()
            else:
                await subscribed.wait()
                end_now.set()
                await log_started.wait()
            await trio.sleep(1)  # the end has arrived; the change still waits
            assert not changes.ended
            release_log.set()
            with trio.fail_after(5):
                received = [change async for change in changes]
        assert received == [Change("tools")]
        await client.aclose()
        await server.aclose()
