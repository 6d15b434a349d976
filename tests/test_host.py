"""The host: several servers at once (real stdio children, and in-process servers joined in
memory), isolation, restarts with backoff, routing, list changes, resource subscriptions
that survive restarts, parallel shutdown."""

from __future__ import annotations

import sys
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
import trio
from feature_harness import ERAS

from trio_mcp import ConnectionClosed, McpError, Server
from trio_mcp.client import Change
from trio_mcp.host import (
    Host,
    InProcessServerConfig,
    ServerState,
    StdioServerConfig,
    allow_all,
    open_host,
    parse_config,
)
from trio_mcp.transports import DEFAULT_STDERR_RATE, STDERR_DROP_PAUSE, ProcessMessageStream

ROOT = Path(__file__).resolve().parent.parent
ENV = {"PYTHONPATH": str(ROOT)}
SLOW = ROOT / "tests" / "programs" / "slow_server.py"
CRASHY = ROOT / "tests" / "programs" / "crashy_server.py"
EVERYTHING = ROOT / "examples" / "everything_server.py"
COUNTER = "counter://value"


def stdio(*args: str, grace: float = 1.0) -> StdioServerConfig:
    return StdioServerConfig(command=[sys.executable, *args], env=ENV, grace=grace)


def in_memory(server: Server) -> InProcessServerConfig:
    return InProcessServerConfig(server=server)


def counting_server() -> Server:
    """A server with one tool and a resource that changes when ``increment`` is called."""
    server = Server("counting", tools=True, resources=True)
    count = {"value": 0}

    @server.tool()
    def increment() -> int:
        count["value"] += 1
        server.notify_resource_updated(COUNTER)
        return count["value"]

    @server.resource(COUNTER)
    def counter() -> str:
        return str(count["value"])

    return server


async def next_connection(host: Host, state: ServerState, previous: Any = None) -> Any:
    """Block until ``state``'s server is connected with a client other than ``previous``."""
    while state.client is None or state.client is previous:
        await host.wait_changed()
    return state.client


@pytest.mark.slow
async def test_many_servers_one_view_and_routing(tmp_path: Path) -> None:
    servers = {
        "one": stdio(str(SLOW)),
        "two": stdio(str(CRASHY), str(tmp_path / "starts")),
        "broken": stdio("-c", "import sys; sys.exit(3)"),
    }
    async with open_host(
        servers,
        consent=allow_all(),
        client_options={"protocol_version": "2025-11-25"},
        restart=False,
    ) as host:
        with trio.fail_after(30):
            await host.wait_settled()
        assert host.servers["one"].status == "connected"
        assert host.servers["broken"].status == "failed"  # and the others do not care
        assert sorted(host.tools()) == [
            "one__chatty",
            "one__echo",
            "one__slow",
            "two__crash",
            "two__starts_so_far",
        ]
        result = await host.call_tool("one__echo", {"text": "routed"})
        assert result.content[0].text == "routed"  # type: ignore[union-attr]
        assert (await host.call_tool("two__starts_so_far")).structured_content == {"result": 1}
        with pytest.raises(McpError, match="no server owns"):
            await host.call_tool("nobody__echo")
        with pytest.raises(ConnectionClosed):
            await host.call_tool("broken__anything")


@pytest.mark.slow
async def test_a_crashed_server_is_restarted_and_its_view_comes_back(tmp_path: Path) -> None:
    servers = {"two": stdio(str(CRASHY), str(tmp_path / "starts")), "one": stdio(str(SLOW))}
    async with open_host(servers, consent=allow_all(), backoff_initial=0.1) as host:
        with trio.fail_after(30):
            await host.wait_settled()
        assert "two__crash" in host.tools()
        with pytest.raises(ConnectionClosed):
            await host.call_tool("two__crash")
        with trio.fail_after(30):
            while host.servers["two"].status != "connected" or host.servers["two"].restarts < 1:
                await host.wait_changed()
        assert (await host.call_tool("two__starts_so_far")).structured_content == {"result": 2}
        assert host.servers["one"].restarts == 0
        assert (await host.call_tool("one__echo", {"text": "unaffected"})).content[
            0
        ].text == "unaffected"  # type: ignore[union-attr]


@pytest.mark.slow
async def test_a_server_flooding_stderr_costs_the_host_little_and_others_stay_responsive() -> None:
    """Issue 11, item 8: one child writes stderr as fast as it can, for ever. The host reads
    it in a few large chunks a second and logs at most its rate, counting the rest: calls
    to another server (and to the noisy one) keep coming back quickly."""
    noisy = ROOT / "tests" / "programs" / "noisy_server.py"
    servers = {"noisy": stdio(str(noisy)), "quiet": stdio(str(SLOW))}
    async with open_host(
        servers,
        consent=allow_all(),
        client_options={"protocol_version": "2025-11-25"},
        restart=False,
    ) as host:
        with trio.fail_after(30):
            await host.wait_settled()
        stream = host.client("noisy").session.stream
        assert isinstance(stream, ProcessMessageStream)
        # Past the start-up burst: the host is dropping.
        with trio.fail_after(30):
            while stream.stderr_statistics().dropped_bytes == 0:
                await host.call_tool("quiet__echo", {"text": "warming"})
        before = stream.stderr_statistics()
        cpu_before = time.process_time()
        start = trio.current_time()
        slowest = 0.0
        calls = 0
        while trio.current_time() - start < 1.0:  # one second of calls, back to back
            began = trio.current_time()
            with trio.fail_after(5):
                result = await host.call_tool("quiet__echo", {"text": str(calls)})
            assert result.content[0].text == str(calls)  # type: ignore[union-attr]
            slowest = max(slowest, trio.current_time() - began)
            calls += 1
        elapsed = trio.current_time() - start
        cpu = time.process_time() - cpu_before
        after = stream.stderr_statistics()
        with trio.fail_after(5):
            assert (await host.call_tool("noisy__echo", {"text": "still"})).content[
                0
            ].text == "still"  # type: ignore[union-attr]
        tail = stream.stderr_tail
    reads = after.reads - before.reads
    lines = after.lines - before.lines
    dropped = after.dropped_bytes - before.dropped_bytes
    print(
        f"{calls} calls in {elapsed:.2f} s, slowest {slowest * 1000:.1f} ms; host CPU "
        f"{cpu:.2f} s; stderr: {reads} reads, {lines} lines logged, {dropped} bytes dropped"
    )
    assert reads <= 2 + elapsed / STDERR_DROP_PAUSE
    # (What the budget refilled since dropping began, just before the window, is slack.)
    assert lines <= 2 + (elapsed + 0.2) * DEFAULT_STDERR_RATE
    assert dropped > 1_000_000  # the child did flood
    assert slowest < 0.5
    assert calls >= 20
    assert tail is not None and tail.splitlines()[-1].startswith("noise ")


@pytest.mark.slow
async def test_shutdown_runs_the_ladders_in_parallel() -> None:
    # Each server lingers after stdin closes, so each needs `grace` seconds and a SIGTERM:
    # closed one after another, three would take 3 x 0.6 s.
    lingering = ROOT / "tests" / "programs" / "lingering_server.py"
    servers = {f"s{i}": stdio(str(lingering), grace=0.6) for i in range(3)}
    async with open_host(servers, consent=allow_all(), restart=False) as host:
        with trio.fail_after(30):
            await host.wait_settled()
        assert all(s.status == "connected" for s in host.servers.values())
        assert len(host.tools()) == 3
        closing = time.monotonic()
    elapsed = time.monotonic() - closing
    assert 0.5 < elapsed < 1.5


def test_config_parsing() -> None:
    parsed = parse_config(
        {
            "mcpServers": {
                "files": {
                    "command": "npx",
                    "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
                    "env": {"A": "1"},
                },
                "remote": {
                    "url": "http://127.0.0.1:9/mcp",
                    "headers": {"Authorization": "Bearer x"},
                },
                "inline": {"command": "python server.py --flag"},
            }
        }
    )
    files = parsed["files"]
    assert isinstance(files, StdioServerConfig)
    assert files.command == ("npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp")
    assert parsed["inline"].command == ("python", "server.py", "--flag")  # type: ignore[union-attr]
    assert parsed["remote"].url == "http://127.0.0.1:9/mcp"  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="either"):
        parse_config({"x": {"neither": True}})
    with pytest.raises(ValueError, match="invalid server name"):
        Host({"a__b": stdio("x")})
    with pytest.raises(ValueError, match="invalid server name"):
        Host({"files\n": stdio("x")})


def test_a_command_path_with_spaces_is_kept_whole_when_args_are_given() -> None:
    # Claude Desktop's shape: `command` is the program, `args` its arguments.
    parsed = parse_config(
        {
            "mcpServers": {
                "spaced": {
                    "command": "/Applications/My Tools/node",
                    "args": ["/opt/my server/index.js", "--port", "3"],
                },
                "no_args": {"command": "/Applications/My Tools/node", "args": []},
                "listed": {"command": ["/a b/python", "-m"], "args": ["srv"]},
            }
        }
    )
    assert parsed["spaced"].command == (  # type: ignore[union-attr]
        "/Applications/My Tools/node",
        "/opt/my server/index.js",
        "--port",
        "3",
    )
    assert parsed["no_args"].command == ("/Applications/My Tools/node",)  # type: ignore[union-attr]
    assert parsed["listed"].command == ("/a b/python", "-m", "srv")  # type: ignore[union-attr]


# -- list changes ------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_a_tool_added_right_after_settling_or_restarting_shows_up(
    era: str, autojump_clock: Any
) -> None:
    server = Server("changing", tools=True)
    server.add_tool(lambda: "base", name="base")
    async with open_host(
        {"s": in_memory(server)},
        consent=allow_all(),
        client_options={"protocol_version": era},
        backoff_initial=1,
    ) as host:
        await host.wait_settled()
        assert sorted(host.tools()) == ["s__base"]
        # No scheduling point between settling and the change: the host must already be
        # listening (in the 2026-07-28 era, with the server's acknowledgement).
        server.add_tool(lambda: "extra", name="extra")
        with trio.fail_after(5):
            while "s__extra" not in host.tools():
                await host.wait_changed()

        state = host.servers["s"]
        client = state.client
        assert client is not None
        await client.aclose()
        await next_connection(host, state, client)
        assert state.restarts == 1
        assert sorted(host.tools()) == ["s__base", "s__extra"]
        server.remove_tool("extra")
        with trio.fail_after(5):
            while "s__extra" in host.tools():
                await host.wait_changed()


@pytest.mark.parametrize("era", ERAS)
async def test_a_change_made_while_the_lists_are_fetched_is_not_lost(
    era: str, autojump_clock: Any
) -> None:
    server = Server("changing", tools=True, prompts=True)
    server.add_tool(lambda: "base", name="base")
    server.prompt()(lambda: "a prompt")
    async with open_host(
        {"s": in_memory(server)}, consent=allow_all(), client_options={"protocol_version": era}
    ) as host:
        state = host.servers["s"]
        # Change the tools as soon as their list has been fetched, while the host is still
        # fetching the prompts: the host must be listening by then (in both eras).
        for _ in range(10_000):
            if state.tools:
                break
            await trio.lowlevel.checkpoint()
        assert [tool.name for tool in state.tools] == ["base"]
        assert state.status == "starting"
        server.add_tool(lambda: "extra", name="extra")
        with trio.fail_after(5):
            while "s__extra" not in host.tools():
                await host.wait_changed()


@pytest.mark.slow
@pytest.mark.parametrize("era", ERAS)
async def test_toggling_a_tool_over_stdio_right_after_settling(era: str) -> None:
    servers = {"e": stdio(str(EVERYTHING))}
    async with open_host(
        servers, consent=allow_all(), client_options={"protocol_version": era}
    ) as host:
        with trio.fail_after(30):
            await host.wait_settled()
        assert "e__bonus" not in host.tools()
        await host.call_tool("e__toggle_bonus_tool")
        with trio.fail_after(10):
            while "e__bonus" not in host.tools():
                await host.wait_changed()


# -- resource subscriptions --------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_a_subscription_is_made_again_after_each_restart(
    era: str, autojump_clock: Any
) -> None:
    async with open_host(
        {"c": in_memory(counting_server())},
        consent=allow_all(),
        client_options={"protocol_version": era},
        backoff_initial=1,
    ) as host:
        await host.wait_settled()
        state = host.servers["c"]
        async with host.listen(resource_uris=[COUNTER]) as updates:
            await host.call_tool("c__increment")
            with trio.fail_after(5):
                assert await updates.__anext__() == Change("updated", COUNTER)
            for restart in (1, 2):
                client = state.client
                await client.aclose()  # type: ignore[union-attr]
                await next_connection(host, state, client)
                assert state.restarts == restart
                with trio.fail_after(5):
                    # Subscribed again: it may have changed while the server was down.
                    assert await updates.__anext__() == Change("updated", COUNTER)
                await host.call_tool("c__increment")
                with trio.fail_after(5):
                    assert await updates.__anext__() == Change("updated", COUNTER)
        # Leaving unsubscribed: an update now reaches no one, and iteration is over.
        await host.call_tool("c__increment")
        assert [change async for change in updates] == []


@pytest.mark.slow
@pytest.mark.parametrize("era", ERAS)
async def test_a_subscription_survives_a_killed_stdio_server(era: str) -> None:
    servers = {"e": stdio(str(EVERYTHING))}
    async with open_host(
        servers, consent=allow_all(), client_options={"protocol_version": era}, backoff_initial=0.05
    ) as host:
        with trio.fail_after(30):
            await host.wait_settled()
        state = host.servers["e"]
        async with host.listen(resource_uris=[COUNTER]) as updates:
            stream = host.client("e").session.stream
            assert isinstance(stream, ProcessMessageStream)
            stream.process.kill()
            with trio.fail_after(30):
                await next_connection(host, state, stream)
                assert await updates.__anext__() == Change("updated", COUNTER)
            assert state.restarts == 1
            await host.call_tool("e__increment")
            with trio.fail_after(10):
                assert await updates.__anext__() == Change("updated", COUNTER)


async def test_subscribing_routes_each_uri_to_its_owner(autojump_clock: Any) -> None:
    one, two = counting_server(), Server("two", resources=True)
    two.add_tool(lambda: 0, name="unused")

    @two.resource("two://thing")
    def thing() -> str:
        return "thing"

    async with open_host(
        {"one": in_memory(one), "two": in_memory(two)}, consent=allow_all()
    ) as host:
        await host.wait_settled()
        assert host.resource_owner(COUNTER) == "one"
        assert host.resource_owner("two://thing") == "two"
        async with host.listen(resource_uris=["two://thing", COUNTER]) as updates:
            two.notify_resource_updated("two://thing")
            one.notify_resource_updated(COUNTER)
            with trio.fail_after(5):
                got = {await updates.__anext__(), await updates.__anext__()}
            assert got == {Change("updated", COUNTER), Change("updated", "two://thing")}
            for _ in range(3):
                one.notify_resource_updated(COUNTER)
            await trio.sleep(1)
            # Updates not yet taken are coalesced: one per URI, nothing queued without bound.
            assert await updates.__anext__() == Change("updated", COUNTER)
            with trio.move_on_after(5) as idle:
                await updates.__anext__()
            assert idle.cancelled_caught
        with pytest.raises(McpError, match="no server offers"):
            async with host.listen(resource_uris=["nowhere://x"]):
                pass


# -- restarts and backoff ----------------------------------------------------------------------


async def test_backoff_doubles_up_to_its_maximum_and_resets_after_a_stable_connection(
    autojump_clock: Any,
) -> None:
    async with open_host(
        {"s": in_memory(counting_server())},
        consent=allow_all(),
        backoff_initial=1,
        backoff_max=5,
        stable_after=10,
    ) as host:
        state = host.servers["s"]
        client = None
        connected_at = []
        for _ in range(6):
            client = await next_connection(host, state, client)
            connected_at.append(trio.current_time())
            await client.aclose()
        gaps = [round(b - a, 6) for a, b in pairwise(connected_at)]
        assert gaps == [1, 2, 4, 5, 5]
        assert state.restarts == 5

        # A connection that stays up `stable_after` seconds starts the delays afresh.
        client = await next_connection(host, state, client)
        await trio.sleep(10)
        await client.aclose()
        dropped = trio.current_time()
        client = await next_connection(host, state, client)
        assert round(trio.current_time() - dropped, 6) == 1
        await client.aclose()
        dropped = trio.current_time()
        client = await next_connection(host, state, client)
        assert round(trio.current_time() - dropped, 6) == 2


async def test_without_restarting_a_dropped_server_stays_failed(autojump_clock: Any) -> None:
    async with open_host(
        {"s": in_memory(counting_server())}, consent=allow_all(), restart=False
    ) as host:
        await host.wait_settled()
        state = host.servers["s"]
        await state.client.aclose()  # type: ignore[union-attr]
        while state.status != "failed":
            await host.wait_changed()
        await trio.sleep(100)
        assert (state.status, state.restarts, host.tools()) == ("failed", 0, {})
        assert isinstance(state.error, ConnectionClosed)
    assert state.status == "stopped"


# -- routing -------------------------------------------------------------------------------


def library(name: str, *uris: str) -> Server:
    """A server with a ``greet`` prompt and resources that say which server they come from."""
    server = Server(name, prompts=True, resources=True)

    @server.prompt()
    def greet(who: str) -> str:
        return f"{name} greets {who}"

    for uri in uris:
        server.resource(uri)(lambda uri=uri: f"{uri} from {name}")

    @server.resource(f"{name}://items/{{item}}")
    def item(item: str) -> str:
        return f"item {item} from {name}"

    return server


async def test_prompts_and_resources_are_routed_to_their_owner(autojump_clock: Any) -> None:
    servers = {
        "a": in_memory(library("a", "shared://doc", "a://only")),
        "b": in_memory(library("b", "shared://doc", "b://only")),
    }
    async with open_host(servers, consent=allow_all()) as host:
        await host.wait_settled()
        assert sorted(host.prompts()) == ["a__greet", "b__greet"]
        result = await host.get_prompt("b__greet", {"who": "you"})
        assert result.messages[0].content.text == "b greets you"  # type: ignore[union-attr]
        result = await host.get_prompt("a__greet", {"who": "me"})
        assert result.messages[0].content.text == "a greets me"  # type: ignore[union-attr]
        with pytest.raises(McpError, match="no server owns"):
            await host.get_prompt("c__greet", {"who": "me"})

        resources = host.resources()
        assert {uri: owner for uri, (owner, _) in resources.items()} == {
            "shared://doc": "a",  # listed by both: the first in the configuration wins
            "a://only": "a",
            "b://only": "b",
        }
        assert sorted(t.uri_template for _, t in host.resource_templates()) == [
            "a://items/{item}",
            "b://items/{item}",
        ]

        async def text(uri: str) -> str:
            return (await host.read_resource(uri)).contents[0].text  # type: ignore[union-attr]

        assert await text("b://only") == "b://only from b"
        assert await text("shared://doc") == "shared://doc from a"
        assert await text("b://items/7") == "item 7 from b"  # by template
        assert await text("a://items/8") == "item 8 from a"
        with pytest.raises(McpError, match="no server offers") as caught:
            await host.read_resource("c://items/1")
        assert caught.value.code == -32602

        # A server that is down owns nothing until it is back.
        state = host.servers["b"]
        client = state.client
        await client.aclose()  # type: ignore[union-attr]
        while state.client is not None:
            await host.wait_changed()
        with pytest.raises(McpError, match="no server offers"):
            await host.read_resource("b://only")
        with pytest.raises(ConnectionClosed):
            await host.get_prompt("b__greet", {"who": "you"})
        await next_connection(host, state, client)
        assert await text("b://only") == "b://only from b"


# -- leaving, with a legacy Streamable HTTP server -------------------------------------------


@pytest.mark.slow
@pytest.mark.usefixtures("front_end")
async def test_leaving_a_host_deletes_the_legacy_http_session_before_closing_its_client() -> None:
    """Leaving the host cancels everything at once; the session's DELETE must still go out
    before the HTTP client it goes out on is closed (it once raced it, losing about half the
    time with "Cannot send a request, as the client has been closed")."""
    from http_support import LEGACY, make_server, running

    from trio_mcp.host import HttpServerConfig
    from trio_mcp.http import asgi_app

    server, _ = make_server()
    app = asgi_app(server)
    async with running(app) as base:
        manager = app.manager
        assert manager is not None
        config = {"remote": HttpServerConfig(url=base + "/mcp")}
        for _ in range(25):
            with trio.fail_after(10):
                async with open_host(
                    config, client_options={"protocol_version": LEGACY}, restart=False
                ) as host:
                    await host.wait_settled()
                    state = host.servers["remote"]
                    assert state.status == "connected", state.error
                    assert manager.statistics()["sessions"] == 1
                assert state.error is None, state.error  # the close raised nothing
            assert manager.statistics()["sessions"] == 0  # the DELETE arrived, and ended it
