"""The public hooks a layer built on a session (the client) uses instead of its private
members: ``send_message``, ``check_open`` and ``notifications_pending``."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from trio_mcp import ConnectionClosed
from trio_mcp.session import Session
from trio_mcp.testing import memory_session_pair
from trio_mcp.types import (
    ClientCapabilities,
    RootsCapability,
    ServerCapabilities,
    ToolsCapability,
)


async def test_notifications_pending_counts_the_queue_and_the_one_in_hand(
    autojump_clock: Any,
) -> None:
    started = trio.Event()
    release = trio.Event()
    handled: list[str] = []

    async def slow(session: Session, method: str, params: Any) -> None:
        started.set()
        await release.wait()
        handled.append(method)

    async with memory_session_pair(
        server_capabilities=ServerCapabilities(tools=ToolsCapability(list_changed=True)),
        client_options={"notification_handler": slow},
    ) as pair:
        await trio.sleep(1)
        assert pair.client.notifications_pending() == 0  # idle: waiting on the queue
        for _ in range(3):
            await pair.server.send_notification("notifications/tools/list_changed")
        await started.wait()
        await trio.sleep(1)
        assert pair.client.notifications_pending() == 3  # one in hand, two queued
        release.set()
        await trio.sleep(1)
        assert handled == ["notifications/tools/list_changed"] * 3
        assert pair.client.notifications_pending() == 0
    assert pair.client.notifications_pending() == 0  # stopped: handles no more


async def test_send_message_sends_and_check_open_says_when_it_cannot(
    autojump_clock: Any,
) -> None:
    received: list[str] = []

    async def record(session: Session, method: str, params: Any) -> None:
        received.append(method)

    async with memory_session_pair(
        client_capabilities=ClientCapabilities(roots=RootsCapability(list_changed=True)),
        server_options={"notification_handler": record},
    ) as pair:
        conn = pair.client.connection
        pair.client.check_open()  # open: does not raise
        await pair.client.send_message(conn.send_notification("notifications/roots/list_changed"))
        await trio.sleep(1)
        # notifications/initialized: the pair's handshake sent it with send_message too
        assert received == ["notifications/initialized", "notifications/roots/list_changed"]
        late = conn.send_notification("notifications/roots/list_changed")
        await pair.client.aclose()
        with pytest.raises(ConnectionClosed):
            pair.client.check_open()
        with pytest.raises(ConnectionClosed):
            await pair.client.send_message(late)
        assert received[1:] == ["notifications/roots/list_changed"]
