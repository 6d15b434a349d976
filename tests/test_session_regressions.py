"""Regression tests for bugs the session fuzzer (fuzz/test_session_interleavings.py) found
in the Trio session engine. Each test is named for the bug it pins down."""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.testing

from trio_mcp.jsonrpc import ErrorCode, McpError
from trio_mcp.protocol import InboundRequest
from trio_mcp.session import Session
from trio_mcp.testing import memory_session_pair


async def echo_or_garbage(session: Session, request: InboundRequest) -> Any:
    params = request.raw_params or {}
    if params.get("garbage"):
        return {"value": {"a set is not JSON"}}
    return {"value": params.get("n")}


@pytest.mark.parametrize("modern", [False, True])
async def test_unserializable_result_is_an_internal_error_not_a_dead_session(
    modern: bool, autojump_clock: trio.testing.MockClock
) -> None:
    # The TypeError from serializing the answer escaped the handler task and tore down the
    # session's nursery (and with it the caller's block); the request was never answered.
    async with memory_session_pair(
        modern=modern, server_options={"handler": echo_or_garbage}
    ) as pair:
        with pytest.raises(McpError) as caught:
            await pair.client.send_request("x/custom", {"garbage": True})
        assert caught.value.code == ErrorCode.INTERNAL_ERROR
        result = await pair.client.send_request("x/custom", {"n": 2})
        assert result["value"] == 2


@pytest.mark.parametrize("modern", [False, True])
async def test_closing_the_session_closes_its_notification_channel(
    modern: bool, autojump_clock: trio.testing.MockClock
) -> None:
    # When the session was closed (rather than its input ending) the cancel skipped the
    # aclose() of the channel feeding the notification handler: its send side stayed open
    # after the session had finished.
    async with memory_session_pair(modern=modern) as pair:
        pass
    for session in (pair.client, pair.server):
        with trio.fail_after(1):
            await session.wait_finished()
        assert session._notifications_in.statistics().open_send_channels == 0


@pytest.mark.parametrize("modern", [False, True])
async def test_cancellation_read_before_the_handler_starts_is_not_lost(
    modern: bool, autojump_clock: trio.testing.MockClock
) -> None:
    # The handler's cancel scope was registered only once its task ran. A cancellation
    # read in between (the caller gave up at once) found no scope, so the handler ran to
    # completion: for one that waits on something, an hour of work nobody wanted.
    async def slow(session: Session, request: InboundRequest) -> Any:
        await trio.sleep(3600)
        return {}

    async with memory_session_pair(modern=modern, server_options={"handler": slow}) as pair:
        for _ in range(20):
            async with pair.client.open_request("x/custom"):
                pass  # leave before the answer: the client sends notifications/cancelled
        await trio.sleep(1)
        # Whichever way each race went, no handler is still at work a second later.
        assert pair.server.connection.in_flight == 0
        assert pair.server._inbound.scopes == {}


async def waits_as_told(session: Session, request: InboundRequest) -> Any:
    params = request.raw_params or {}
    if params.get("forever"):
        await trio.sleep_forever()
    if params.get("ping_back"):
        # The handler needs the peer, and so the receive loop, to finish.
        await session.send_request("ping")
    return {"value": params.get("n")}


async def test_full_house_does_not_stop_cancellations_from_being_read(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # With every handler slot taken, the receive loop waited for a slot before reading
    # on: the cancellation that would free the slot sat unread behind the next request,
    # and the session deadlocked.
    async with memory_session_pair(
        server_options={"handler": waits_as_told, "max_concurrent_requests": 1}
    ) as pair:

        async def give_up_after_a_second() -> None:
            with trio.move_on_after(1):
                await pair.client.send_request("x/custom", {"forever": True})

        async with trio.open_nursery() as nursery:
            nursery.start_soon(give_up_after_a_second)
            await trio.sleep(0.5)
            with trio.fail_after(60):
                result = await pair.client.send_request("x/custom", {"n": 2})
        assert result["value"] == 2


async def test_full_house_does_not_stop_answers_to_the_handlers_own_requests(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # The same deadlock without any cancellation: the only running handler awaits the
    # peer's answer to its ping, and that answer sat unread behind the next request.
    async with memory_session_pair(
        server_options={"handler": waits_as_told, "max_concurrent_requests": 1}
    ) as pair:
        with trio.fail_after(60):
            async with trio.open_nursery() as nursery:
                for n in range(2):  # one runs, one waits for its turn
                    nursery.start_soon(
                        pair.client.send_request, "x/custom", {"n": n, "ping_back": True}
                    )


async def test_requests_beyond_the_backlog_are_refused_at_once(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # The other half of the fix: the receive loop no longer waits for a slot, so what it
    # cannot hold (max_concurrent_requests running and as many waiting) is refused.
    outcomes: list[Any] = []

    async def call(n: int) -> None:
        try:
            outcomes.append((await pair.client.send_request("x/custom", {"n": n}))["value"])
        except McpError as exc:
            outcomes.append(exc.code)

    async def slow(session: Session, request: InboundRequest) -> Any:
        await trio.sleep(10)
        return {"value": (request.raw_params or {})["n"]}

    async with (
        memory_session_pair(server_options={"handler": slow, "max_concurrent_requests": 2}) as pair,
        trio.open_nursery() as nursery,
    ):
        for n in range(6):
            nursery.start_soon(call, n)
    # Which four are served depends on the order the callers got going.
    refused = [o for o in outcomes if o == ErrorCode.INTERNAL_ERROR]
    served = [o for o in outcomes if o != ErrorCode.INTERNAL_ERROR]
    assert len(refused) == 2
    assert len(set(served)) == 4
    assert set(served) <= set(range(6))


async def test_lockstep_peers_pinging_each_other_at_once_do_not_deadlock(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # Each receive loop sent the protocol's own answers (ping, errors for bad input)
    # inline. Over a lockstep transport (buffer=0: a send waits for the peer's receive)
    # two simultaneous pings left each loop waiting to send its pong to the other loop,
    # which was waiting to send its own: both sessions hung.
    async with memory_session_pair(buffer=0) as pair:
        with trio.fail_after(60):
            async with trio.open_nursery() as nursery:
                for _ in range(3):
                    nursery.start_soon(pair.client.send_request, "ping")
                    nursery.start_soon(pair.server.send_request, "ping")
