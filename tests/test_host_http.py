"""The host and HTTP servers: a server that goes away is noticed (by the calls routed to it,
or by pings while nobody calls), dropped, and connected to anew when it comes back. Real
sockets on 127.0.0.1, so real (bounded) time."""

from __future__ import annotations

import math
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import httpx
import pytest
import trio
from scripted_http import Reply, ScriptedApp, Seen, initialize_result, result
from test_host import counting_server, next_connection

from trio_mcp import ConnectionClosed, McpError, Server
from trio_mcp.host import Host, HttpServerConfig, allow_all, open_host


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
                consent=allow_all(),
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

                while state.restarts < 3:  # a few failed restarts, backing off
                    await host.wait_changed()
                assert state.status == "restarting"
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
                # Real time for a few pings (every 0.1 s) to be answered: they change nothing.
                await trio.sleep(0.5)
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


# -- the counting, in virtual time ------------------------------------------------------------

URL = "http://mcp.test/mcp"


class Switch(httpx.AsyncBaseTransport):
    """Reaches ``app`` in process, or, while ``gone``, refuses every connection (as a port
    nothing listens on does)."""

    def __init__(self, app: ScriptedApp) -> None:
        self.inner = httpx.ASGITransport(app)
        self.gone = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self.gone:
            raise httpx.ConnectError("connection refused", request=request)
        return await self.inner.handle_async_request(request)


def legacy_server(calls: dict[str, int]) -> ScriptedApp:
    """An initialize-era server with one tool; ``calls["status"]`` is the HTTP status its
    tool calls get (200: answered)."""

    async def script(seen: Seen, reply: Reply) -> None:
        method = seen.rpc_method
        if method == "initialize":
            await reply.json(result(seen, initialize_result()), headers={"mcp-session-id": "s"})
        elif seen.method == "GET":
            await reply.empty(405)
        elif seen.method == "DELETE" or "id" not in seen.json:
            await reply.empty(202 if seen.method == "POST" else 200)
        elif method == "tools/list":
            await reply.json(result(seen, {"tools": [{"name": "t", "inputSchema": {}}]}))
        elif method == "tools/call" and calls["status"] != 200:
            await reply.empty(calls["status"])
        else:
            await reply.json(result(seen, {"content": []} if method == "tools/call" else {}))

    return ScriptedApp(script)


@asynccontextmanager
async def hosting(switch: Switch, **options: Any) -> AsyncIterator[Host]:
    async with (
        httpx.AsyncClient(transport=switch) as http,
        open_host(
            {"web": HttpServerConfig(url=URL)},
            client_options={"http_client": http, "protocol_version": "2025-11-25"},
            consent=allow_all(),
            **options,
        ) as host,
    ):
        await host.wait_settled()
        assert host.servers["web"].status == "connected"
        yield host


async def test_only_failures_in_a_row_count(autojump_clock: Any) -> None:
    """A gateway's 502 and a refused connection count alike; any answer between them
    starts the count again; the third in a row drops the connection, which comes back with
    the usual backoff once the server answers again."""
    calls = {"status": 502}
    switch = Switch(legacy_server(calls))
    async with hosting(switch, ping_interval=math.inf, backoff_initial=1, backoff_max=4) as host:
        state = host.servers["web"]
        client = state.client
        for _ in range(2):
            with pytest.raises(McpError, match="HTTP 502"):
                await host.call_tool("web__t")
        assert (state.failures, state.status) == (2, "connected")
        calls["status"] = 200
        await host.call_tool("web__t")
        assert state.failures == 0
        calls["status"] = 400  # an answer, if not a happy one: the server is there
        with pytest.raises(McpError, match="HTTP 400"):
            await host.call_tool("web__t")
        assert state.failures == 0

        switch.gone = True
        for _ in range(2):
            with pytest.raises(McpError, match="cannot reach"):
                await host.call_tool("web__t")
        assert (state.failures, state.status) == (2, "connected")
        calls["status"] = 502
        switch.gone = False
        with pytest.raises(McpError, match="HTTP 502"):
            await host.call_tool("web__t")
        assert (state.status, state.client, state.restarts) == ("restarting", None, 0)
        assert "could not be reached 3 times in a row: HTTP 502" in str(state.error)

        switch.gone = True  # connecting fails too: attempts at 1, 3, 7 and 11 s
        dropped = trio.current_time()
        await trio.sleep(12)
        assert (state.status, state.restarts) == ("restarting", 5)  # the 5th at 15 s
        switch.gone = False
        calls["status"] = 200
        await next_connection(host, state, client)
        assert round(trio.current_time() - dropped, 6) == 1 + 2 + 4 + 4 + 4
        await host.call_tool("web__t")


async def test_pings_every_interval_count_like_calls(autojump_clock: Any) -> None:
    app = legacy_server({"status": 200})
    switch = Switch(app)
    async with hosting(switch, ping_interval=10, down_after=2) as host:
        state = host.servers["web"]
        await trio.sleep(35)
        assert len(app.rpc("ping")) == 3  # at 10, 20 and 30 s
        switch.gone = True
        gone_at = trio.current_time()
        while state.status == "connected":
            await host.wait_changed()
        # The pings at 40 and 50 s fail: down after two.
        assert round(trio.current_time() - gone_at, 6) == 15
        assert "could not be reached 2 times in a row: cannot reach" in str(state.error)
