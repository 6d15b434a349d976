"""The host and HTTP servers: a server that goes away is noticed (by the calls routed to it,
or by pings while nobody calls), dropped, and connected to anew when it comes back. Real
sockets on 127.0.0.1, so real (bounded) time."""

from __future__ import annotations

import math
import socket
from functools import partial

import pytest
import trio
from test_host import counting_server, next_connection

from trio_mcp import ConnectionClosed, McpError
from trio_mcp.host import Host, HttpServerConfig, open_host
from trio_mcp.server import Server


def free_port() -> int:
    """A port of 127.0.0.1 that was free a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Comeback:
    """``server`` served over HTTP on a fixed port of 127.0.0.1, stopped and started again
    at will (the same port each time, as a restarted server would be)."""

    def __init__(self, nursery: trio.Nursery, server: Server) -> None:
        self.nursery = nursery
        self.server = server
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self._scope: trio.CancelScope | None = None
        self._gone = trio.Event()

    async def start(self) -> None:
        from trio_mcp.http import serve

        self._scope, self._gone = trio.CancelScope(), trio.Event()

        async def run(
            scope: trio.CancelScope, gone: trio.Event, *, task_status: trio.TaskStatus[int]
        ) -> None:
            try:
                with scope:
                    await serve(self.server, "127.0.0.1", self.port, task_status=task_status)
            finally:
                gone.set()

        await self.nursery.start(partial(run, self._scope, self._gone))

    async def stop(self) -> None:
        """Cancel the server and wait until its port is closed."""
        assert self._scope is not None
        self._scope.cancel()
        await self._gone.wait()


@pytest.mark.slow
@pytest.mark.parametrize("version", [None, "2025-11-25"], ids=["detected", "initialize-era"])
async def test_an_http_server_that_goes_away_is_marked_down_and_restarted(
    version: str | None,
) -> None:
    """Every call to a vanished HTTP server fails with "cannot reach": after ``down_after``
    such failures the host drops the connection (no longer "connected"), and connects anew
    (a new session) with the usual backoff once the server is back."""
    options = {"protocol_version": version} if version else {}
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            web = Comeback(nursery, counting_server())
            await web.start()
            async with open_host(
                {"web": HttpServerConfig(url=web.url)},
                backoff_initial=0.05,
                backoff_max=0.2,
                ping_interval=math.inf,  # only the calls count here
                client_options=options,
            ) as host:
                await host.wait_settled()
                state = host.servers["web"]
                assert state.status == "connected"
                assert (await host.call_tool("web__increment")).structured_content == {"result": 1}
                client = state.client

                await web.stop()
                errors: list[McpError] = []
                while state.client is client and len(errors) < 10:
                    with pytest.raises(McpError) as caught:
                        await host.call_tool("web__increment")
                    errors.append(caught.value)
                assert state.status == "restarting"
                assert isinstance(state.error, ConnectionClosed)
                assert "could not be reached 3 times in a row" in str(state.error)
                assert sum("cannot reach" in e.message for e in errors) == host.down_after
                assert host.tools() == {}
                with pytest.raises(ConnectionClosed, match="is restarting"):
                    await host.call_tool("web__increment")

                await trio.sleep(0.5)  # a few failed restarts, backing off
                assert state.status == "restarting" and state.restarts >= 2
                await web.start()
                back = await next_connection(host, state, client)
                assert back is not client and state.status == "connected"
                assert (await host.call_tool("web__increment")).structured_content == {"result": 2}
                assert state.failures == 0
            nursery.cancel_scope.cancel()


@pytest.mark.slow
async def test_pings_notice_an_idle_http_server_going_away() -> None:
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            web = Comeback(nursery, counting_server())
            await web.start()
            async with open_host(
                {"web": HttpServerConfig(url=web.url)},
                backoff_initial=0.05,
                backoff_max=0.2,
                ping_interval=0.1,
            ) as host:
                await host.wait_settled()
                state = host.servers["web"]
                client = state.client
                await trio.sleep(0.5)  # pings that are answered change nothing
                assert state.client is client and state.failures == 0
                await web.stop()
                while state.status == "connected":
                    await host.wait_changed()
                assert "could not be reached 3 times in a row" in str(state.error)
                await web.start()
                await next_connection(host, state, client)
            nursery.cancel_scope.cancel()


def test_host_options_are_checked() -> None:
    with pytest.raises(ValueError, match="down_after"):
        Host({}, down_after=0)
    with pytest.raises(ValueError, match="ping_interval"):
        Host({}, ping_interval=0)
