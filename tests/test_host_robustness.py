"""The host against servers that misbehave or change behind its back (issue 21): one answer
line over the stdio line limit (failure 5; real child processes, bounded real waits), a
list_changed flood, changes made without list_changed (``refresh``), ``restart``, and roots
set for a server configured without them (MockClock where no process is involved)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
import trio
import trio.testing
from feature_harness import ERAS

from trio_mcp import Client, ConnectionClosed, Context, Server, jsonrpc as rpc
from trio_mcp._host._host import _LISTS
from trio_mcp.host import (
    Host,
    InProcessServerConfig,
    ServerState,
    StdioServerConfig,
    allow_all,
    open_host,
)
from trio_mcp.transports import open_process_stream
from trio_mcp.types import Root

ROOT = Path(__file__).resolve().parent.parent
HUGE = ROOT / "tests" / "programs" / "huge_answer_server.py"
ENV = {"PYTHONPATH": str(ROOT)}


@pytest.mark.slow
async def test_an_answer_over_the_line_limit_fails_the_calls_at_once_and_restarts(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="trio_mcp")
    servers = {"big": StdioServerConfig(command=[sys.executable, str(HUGE)], env=ENV, grace=1.0)}
    async with open_host(servers, consent=allow_all(), backoff_initial=0.1) as host:
        with trio.fail_after(30):
            await host.wait_settled()
        state = host.servers["big"]
        first = state.client
        assert state.status == "connected"

        # Two calls in flight; the huge answer breaks the connection and both fail at
        # once, with the limit named (on main both waited for ever).
        failures: list[BaseException] = []

        async def call(name: str, arguments: dict[str, str] | None = None) -> None:
            try:
                await host.call_tool(name, arguments)
            except ConnectionClosed as exc:
                failures.append(exc)

        with trio.fail_after(20):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(call, "big__huge")
                nursery.start_soon(call, "big__huge")
        assert len(failures) == 2
        for failure in failures:
            assert "exceeded 4194304 bytes" in str(failure)

        # The host logged it and restarts the server like any other failure.
        with trio.fail_after(30):
            while state.client is None or state.client is first:
                await host.wait_changed()
        assert state.restarts >= 1
        assert "exceeded 4194304 bytes" in str(state.error) or state.status == "connected"
        logged = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        assert any("big" in m and "exceeded 4194304 bytes" in m for m in logged), logged

        with trio.fail_after(10):
            result = await host.call_tool("big__echo", {"text": "after"})
        assert result.content[0].text == "after"  # type: ignore[union-attr]


@pytest.mark.slow
async def test_a_stdio_server_given_a_line_over_the_limit_says_why_and_ends() -> None:
    # The other direction: the server cannot know which request the line was, so it
    # cannot answer it; going on would leave its sender waiting for ever. It answers
    # -32600 (id null) saying the limit, logs it, and ends the connection, so the client
    # sees it at once.
    stderr: list[str] = []
    async with open_process_stream(
        [sys.executable, str(HUGE)], env=ENV, grace=1.0, stderr=stderr.append
    ) as stream:
        await stream.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"p":"')
        await stream.send_raw(b"y" * 5_000_000 + b'"}}\n')
        with trio.fail_after(20):
            answer = await stream.receive()
            assert isinstance(answer, rpc.ErrorResponse)
            assert answer.id is None
            assert answer.error.code == -32600
            assert "exceeded 4194304 bytes" in answer.error.message
            with pytest.raises(trio.EndOfChannel):
                await stream.receive()
    assert any("exceeded 4194304 bytes" in line for line in stderr), stderr


# -- list_changed floods, refresh, restart, roots (issue 21, warnings) -----------------------


class CountedListings:
    """Counts the host's listings of a server's tools, and how many run at once; each
    takes ``seconds`` (of the autojump clock), as a slow server's would."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, seconds: float = 1.0) -> None:
        self.calls = 0
        self.running = 0
        self.most_at_once = 0
        original = Host._refresh

        async def refresh(
            host: Host, state: ServerState, client: Client, kinds: Sequence[str] = _LISTS
        ) -> None:
            if "tools" not in kinds:
                return await original(host, state, client, kinds)
            self.calls += 1
            self.running += 1
            self.most_at_once = max(self.most_at_once, self.running)
            try:
                await trio.sleep(seconds)
                return await original(host, state, client, kinds)
            finally:
                self.running -= 1

        monkeypatch.setattr(Host, "_refresh", refresh)


async def test_a_list_changed_flood_is_coalesced(
    autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 20,000 notifications over 10 seconds (sent raw, as a hostile server would, not
    # through the server's own coalescing) while each listing takes a second: one listing
    # in flight and one pending at most, so about one a second and none once the flood is
    # over. On main the host queued a listing per notification, up to the listener's 64,
    # and made them one by one: 74 listings, for 64 s after the flood ended.
    server = Server("flood", tools=True)

    @server.tool()
    async def flood(ctx: Context, count: int) -> str:
        for _ in range(count):
            await ctx.session.send_notification("notifications/tools/list_changed")
        return "sent"

    async with open_host(
        {"s": InProcessServerConfig(server=server)},
        consent=allow_all(),
        client_options={"protocol_version": "2025-11-25"},
    ) as host:
        await host.wait_settled()
        listings = CountedListings(monkeypatch)
        for _ in range(10):
            await host.call_tool("s__flood", {"count": 2_000})
            await trio.sleep(1)
        server.add_tool(lambda: "last", name="last")
        await trio.sleep(100)  # (the autojump clock) until every queued listing is made
        assert "s__last" in host.tools()
        assert listings.most_at_once == 1
        assert listings.calls <= 12, listings.calls
        print(f"20,000 list_changed in 10 s: {listings.calls} listings")


async def test_refresh_notices_a_change_made_without_list_changed(
    autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = Server("quiet", tools=True)
    server.add_tool(lambda: "base", name="base")
    async with open_host({"s": InProcessServerConfig(server=server)}, consent=allow_all()) as host:
        await host.wait_settled()
        # A server that changes its tools without saying so (the hub is not told).
        monkeypatch.setattr(server._hub, "publish", lambda event: None)
        server.add_tool(lambda: "extra", name="extra")
        await trio.sleep(5)
        assert sorted(host.tools()) == ["s__base"]
        listings = CountedListings(monkeypatch)
        # Two at once: one listing at a time, the second after the first.
        async with trio.open_nursery() as nursery:
            nursery.start_soon(host.refresh, "s")
            nursery.start_soon(host.refresh, "s")
        assert listings.calls == 2
        assert listings.most_at_once == 1
        assert sorted(host.tools()) == ["s__base", "s__extra"]
        with pytest.raises(KeyError):
            await host.refresh("nobody")


@pytest.mark.slow
async def test_refresh_of_a_server_that_is_down_raises() -> None:
    config = StdioServerConfig(command=[sys.executable, "-c", "import sys; sys.exit(3)"])
    async with open_host({"gone": config}, restart=False) as host:
        with trio.fail_after(20):
            await host.wait_settled()
        with pytest.raises(ConnectionClosed, match="'gone' is failed"):
            await host.refresh("gone")


@pytest.mark.parametrize("era", ERAS)
async def test_restart_replaces_the_connection_and_lists_again(
    era: str, autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = Server("restartable", tools=True)
    server.add_tool(lambda: "base", name="base")
    async with open_host(
        {"s": InProcessServerConfig(server=server)},
        consent=allow_all(),
        client_options={"protocol_version": era},
        restart=False,  # a requested restart happens all the same
        backoff_initial=60,
    ) as host:
        await host.wait_settled()
        state = host.servers["s"]
        first = state.client
        monkeypatch.setattr(server._hub, "publish", lambda event: None)
        server.add_tool(lambda: "extra", name="extra")
        started = trio.current_time()
        await host.restart("s")
        assert trio.current_time() - started < 1  # no backoff for a requested restart
        assert state.client is not None and state.client is not first
        assert state.status == "connected"
        assert state.restarts == 1
        assert sorted(host.tools()) == ["s__base", "s__extra"]
        assert any(e.kind == "restart" and e.reason == "requested" for e in host.audit.pending())
        assert (await host.call_tool("s__extra")).content[0].text == "extra"  # type: ignore[union-attr]


@pytest.mark.slow
async def test_restart_brings_back_a_failed_server_and_cuts_its_backoff(tmp_path: Path) -> None:
    # A server that fails at first and works later: failed with restart=False, then
    # restart() brings it back; with restarting on, restart() does not wait the backoff.
    flag = tmp_path / "works"
    script = (
        "import pathlib, sys\n"
        f"if not pathlib.Path({str(flag)!r}).exists(): sys.exit(3)\n"
        "import runpy; runpy.run_path(sys.argv[1], run_name='__main__')\n"
    )
    config = StdioServerConfig(command=[sys.executable, "-c", script, str(HUGE)], env=ENV)
    async with open_host({"late": config}, consent=allow_all(), restart=False) as host:
        with trio.fail_after(20):
            await host.wait_settled()
        state = host.servers["late"]
        assert state.status == "failed"
        with trio.fail_after(20), pytest.raises(ConnectionClosed, match="did not come back"):
            await host.restart("late")
        flag.touch()
        with trio.fail_after(20):
            await host.restart("late")
        assert state.status == "connected"
        assert state.restarts == 2
        assert "late__echo" in host.tools()
        # It drops again: with restart=False it stays down (the request was for once).
        first = state.client
        assert first is not None
        await first.aclose()
        with trio.fail_after(20):
            while state.status != "failed":
                await host.wait_changed()
        assert state.restarts == 2
    flag.unlink()
    async with open_host({"late": config}, consent=allow_all(), backoff_initial=600) as host:
        state = host.servers["late"]
        with trio.fail_after(20):
            await host.wait_settled()
            while state.status != "restarting":
                await host.wait_changed()
        flag.touch()
        with trio.fail_after(20):  # not the 600 s backoff
            await host.restart("late")
        assert state.status == "connected"


@pytest.mark.parametrize("era", ERAS)
async def test_set_roots_reaches_a_server_configured_without_roots(
    era: str, autojump_clock: trio.testing.MockClock
) -> None:
    async def everything() -> list[Root]:
        return [Root(uri="file:///")]

    def roots_server() -> Server:
        server = Server("roots", tools=True)

        @server.tool()
        async def roots(ctx: Context) -> str:
            return " ".join(root.uri for root in await ctx.list_roots())

        return server

    servers = {"a": InProcessServerConfig(server=roots_server())}
    # With a host-wide roots handler: the server sees it, then its own at once.
    async with open_host(
        servers, consent=allow_all(), client_options={"protocol_version": era, "roots": everything}
    ) as host:
        await host.wait_settled()
        assert (await host.call_tool("a__roots")).content[0].text == "file:///"  # type: ignore[union-attr]
        first = host.servers["a"].client
        await host.set_roots("a", ["file:///work/a"])
        assert host.servers["a"].client is first  # told, not restarted
        assert (await host.call_tool("a__roots")).content[0].text == "file:///work/a"  # type: ignore[union-attr]
    # Without any: its connection did not declare roots, so it is restarted to see them.
    async with open_host(
        servers, consent=allow_all(), client_options={"protocol_version": era}
    ) as host:
        await host.wait_settled()
        first = host.servers["a"].client
        await host.set_roots("a", ["file:///work/b"])
        assert host.servers["a"].client is not first
        assert (await host.call_tool("a__roots")).content[0].text == "file:///work/b"  # type: ignore[union-attr]
