"""The host: several real stdio servers at once, isolation, restarts, routing, parallel shutdown."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
import trio

from trio_mcp import ConnectionClosed, McpError
from trio_mcp.host import Host, StdioServerConfig, open_host, parse_config

ROOT = Path(__file__).resolve().parent.parent
ENV = {"PYTHONPATH": str(ROOT)}
SLOW = ROOT / "tests" / "stdio_servers" / "slow_server.py"
CRASHY = ROOT / "tests" / "stdio_servers" / "crashy_server.py"

pytestmark = pytest.mark.slow


def stdio(*args: str, grace: float = 1.0) -> StdioServerConfig:
    return StdioServerConfig(command=[sys.executable, *args], env=ENV, grace=grace)


async def test_many_servers_one_view_and_routing(tmp_path: Path) -> None:
    servers = {
        "one": stdio(str(SLOW)),
        "two": stdio(str(CRASHY), str(tmp_path / "starts")),
        "broken": stdio("-c", "import sys; sys.exit(3)"),
    }
    async with open_host(
        servers, client_options={"protocol_version": "2025-11-25"}, restart=False
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


async def test_a_crashed_server_is_restarted_and_its_view_comes_back(tmp_path: Path) -> None:
    servers = {"two": stdio(str(CRASHY), str(tmp_path / "starts")), "one": stdio(str(SLOW))}
    async with open_host(servers, backoff_initial=0.1) as host:
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


async def test_shutdown_runs_the_ladders_in_parallel() -> None:
    # Each server lingers after stdin closes, so each needs `grace` seconds and a SIGTERM:
    # closed one after another, three would take 3 x 0.6 s.
    lingering = ROOT / "tests" / "stdio_servers" / "lingering_server.py"
    servers = {f"s{i}": stdio(str(lingering), grace=0.6) for i in range(3)}
    async with open_host(servers, restart=False) as host:
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
