"""A peer that never lets go holds a shielded section for at most its bound (issue 21).

Each shield here used to be a bare ``trio.CancelScope(shield=True)``: a stuck close held
the caller, cancelled or not, for as long as the peer liked (1,000 virtual seconds in
these tests). tests/test_architecture.py keeps new shields bounded.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

import httpx
import pytest
import trio
import trio.testing
import trio_websocket

from trio_mcp._http.client._exchange import HTTP_CLIENT_CLOSE_TIMEOUT
from trio_mcp._websocket_auth import AUTH_FLOW_CLOSE_TIMEOUT, authorized_handshake
from trio_mcp.http import HttpClientStream, connect_http_stream

STUCK = 1000.0  # seconds a stuck peer holds on, far past every bound


class StuckClose(httpx.AsyncBaseTransport):
    """A transport whose connections take ``STUCK`` seconds to close."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("not used", request=request)

    async def aclose(self) -> None:
        await trio.sleep(STUCK)


async def test_a_stuck_close_of_the_streams_own_http_client_is_bounded(
    autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    http = httpx.AsyncClient(transport=StuckClose())
    stream = HttpClientStream("http://mcp.test/mcp", http, owns_http=True, close_timeout=2.0)
    async with trio.open_nursery() as nursery:
        await nursery.start(stream.run)
        start = trio.current_time()
        nursery.cancel_scope.cancel()  # as when a host is left
    assert trio.current_time() - start <= HTTP_CLIENT_CLOSE_TIMEOUT
    assert "closing the HTTP client took more than" in caplog.text


async def test_a_stuck_close_when_connecting_fails_is_bounded(
    autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def stuck_aclose(self: httpx.AsyncClient) -> None:
        await trio.sleep(STUCK)

    monkeypatch.setattr(httpx.AsyncClient, "aclose", stuck_aclose)
    start = trio.current_time()
    async with trio.open_nursery() as nursery:
        with trio.CancelScope() as connecting:
            connecting.cancel()
            await connect_http_stream(nursery, "http://mcp.test/mcp")
    assert connecting.cancelled_caught
    # the runner's end and connect_http_stream's cleanup each close it, each bounded
    assert trio.current_time() - start <= 2 * HTTP_CLIENT_CLOSE_TIMEOUT


class StuckFlowCleanup(httpx.Auth):
    """An auth flow whose cleanup awaits ``STUCK`` seconds."""

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        try:
            yield request
        finally:
            await trio.sleep(STUCK)


async def test_a_stuck_auth_flow_holds_a_websocket_handshake_at_most_its_bound(
    autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    async def refuse(headers: list[tuple[bytes, bytes]]) -> trio_websocket.WebSocketConnection:
        await trio.sleep(1)
        raise OSError("connection refused")

    start = trio.current_time()
    with pytest.raises(OSError, match="connection refused"):
        await authorized_handshake(refuse, "ws://mcp.test/ws", StuckFlowCleanup())
    assert trio.current_time() - start <= 1 + AUTH_FLOW_CLOSE_TIMEOUT
    assert "the auth flow took more than" in caplog.text


async def test_a_cancelled_handshake_with_a_stuck_auth_flow_ends_within_its_bound(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async def hang(headers: list[tuple[bytes, bytes]]) -> trio_websocket.WebSocketConnection:
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    start = trio.current_time()
    with trio.move_on_after(3) as waited:
        await authorized_handshake(hang, "ws://mcp.test/ws", StuckFlowCleanup())
    assert waited.cancelled_caught
    assert trio.current_time() - start <= 3 + AUTH_FLOW_CLOSE_TIMEOUT
