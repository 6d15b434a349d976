"""Keyword options are typed: a misspelt option is an error a type checker reports at the
call (one mypy run over one snippet of calls), and every options type names exactly the
options of the function it stands for (so that the two cannot drift apart)."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest

from trio_mcp import Server, connect_client
from trio_mcp._http.client._exchange import ExchangeStream
from trio_mcp._server._stdio import RunOptions, run_stdio
from trio_mcp.client import ClientOptions, StdioClientOptions
from trio_mcp.fuzz import FuzzOptions, FuzzSettings
from trio_mcp.host import Host, HostOptions
from trio_mcp.http import (
    AppOptions,
    HttpClientOptions,
    HttpClientStreamOptions,
    HttpStreamOptions,
    McpAsgiApp,
    connect_http_stream,
)
from trio_mcp.server import (
    DirectoryOptions,
    DirectoryResources,
    ServeOptions,
    ToolOptions,
    ToolSpec,
)
from trio_mcp.session import Session, SessionOptions, SessionSettings
from trio_mcp.transports import (
    LineStreamOptions,
    ProcessOptions,
    StdioServerStreamOptions,
    connect_line_stream,
    connect_process_stream,
    connect_stdio_server_stream,
)
from trio_mcp.websocket import WebSocketClientOptions, connect_websocket_client

ROOT = Path(__file__).resolve().parent.parent

# Each call marked ``# misspelt: word`` carries that misspelt option; mypy must report an
# error on that very line, naming the word (for a misspelt key of a dictionary of options,
# ``# misspelt: word in option``, mypy names the option whose type the dictionary fails). The calls in ``correct``
# use the same entry points with options spelt right, and must type-check clean.
SNIPPET = """\
from trio_mcp import Server, open_client, open_stdio_client, run
from trio_mcp.server import run_stdio
from trio_mcp.host import InProcessServerConfig, open_host
from trio_mcp.http import open_http_client, serve
from trio_mcp.session import open_session
from trio_mcp.protocol import Connection
from trio_mcp.fuzz import FuzzSettings, StdioTarget, fuzz
from trio_mcp.testing import connect
from trio_mcp.transports import MessageStream, open_process_stream
from trio_mcp.websocket import open_websocket_client


async def correct(stream: MessageStream, server: Server, connection: Connection) -> None:
    async with open_client(stream, protocol_version="2025-11-25", request_timeout=5.0):
        pass
    async with open_http_client("http://127.0.0.1/mcp", headers={}, max_retry=3.0, name="x"):
        pass
    async with open_stdio_client(["server"], grace=1.0, env={}, drain_timeout=1.0):
        pass
    async with open_websocket_client("ws://127.0.0.1/", max_message_size=10, cache=False):
        pass
    async with open_host({}, restart=False, client_options={"handshake_timeout": 1.0}):
        pass
    await serve(server, port=0, max_sessions=3, session_options={"drain_timeout": 1.0})
    await fuzz(StdioTarget(command=["server"]), max_examples=5, skip_tools=["rm"])
    await fuzz(StdioTarget(command=["server"]), FuzzSettings(seed=1), verify=False)
    async with open_process_stream(["server"], kill_timeout=1.0):
        pass
    async with open_session(stream, connection, handler=None, drain_timeout=1.0):
        pass
    await run_stdio(server, handle_signals=False, max_concurrent_requests=4)
    run(server, drain_timeout=1.0)
    async with connect(server, server_options={"principal": "alice", "drain_timeout": 1.0}):
        pass
    InProcessServerConfig(server=server, server_options={"max_concurrent_requests": 2})


async def misspelt(stream: MessageStream, server: Server, connection: Connection) -> None:
    async with open_client(stream, protocol_verison="2025-11-25"):  # misspelt: protocol_verison
        pass
    async with open_http_client("http://127.0.0.1/mcp", heders={}):  # misspelt: heders
        pass
    async with open_stdio_client(["server"], gracee=1.0):  # misspelt: gracee
        pass
    async with open_websocket_client("ws://127.0.0.1/", max_mesage_size=10):  # misspelt: max_mesage_size
        pass
    async with open_host({}, restrat=False):  # misspelt: restrat
        pass
    async with open_host({}, client_options={"handshake_timout": 1.0}):  # misspelt: handshake_timout in client_options
        pass
    await serve(server, port=0, max_sesions=3)  # misspelt: max_sesions
    await serve(server, session_options={"drain_timout": 1.0})  # misspelt: drain_timout in session_options
    await fuzz(StdioTarget(command=["server"]), max_exampels=5)  # misspelt: max_exampels
    async with open_process_stream(["server"], kill_timout=1.0):  # misspelt: kill_timout
        pass
    async with open_session(stream, connection, handlr=None):  # misspelt: handlr
        pass
    await run_stdio(server, handle_signal=False)  # misspelt: handle_signal
    run(server, drain_timout=1.0)  # misspelt: drain_timout
    async with connect(server, server_options={"principle": "alice"}):  # misspelt: principle in server_options
        pass
    InProcessServerConfig(server=server, server_options={"max_concurent_requests": 2})  # misspelt: max_concurent_requests in server_options
"""

ERROR = re.compile(r"^snippet\.py:(\d+): error: (.*)$")


def _misspelt_words() -> dict[int, str]:
    """Line number -> the word mypy must name on it, as its comment says."""
    return {
        number: line.rpartition("# misspelt: ")[2].rpartition(" in ")[2]
        for number, line in enumerate(SNIPPET.splitlines(), start=1)
        if "# misspelt: " in line
    }


@pytest.mark.timeout(300)
def test_a_misspelt_option_is_a_type_error_at_the_call(tmp_path: Path) -> None:
    (tmp_path / "snippet.py").write_text(SNIPPET)
    # The project's configuration (mypy strict) and cache: a warm cache makes this quick.
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(ROOT / ".mypy_cache"),
            "--no-pretty",
            "--hide-error-context",
            "--no-error-summary",
            "snippet.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=280,
    )
    errors: dict[int, list[str]] = {}
    for line in run.stdout.splitlines():
        if match := ERROR.match(line):
            errors.setdefault(int(match[1]), []).append(match[2])
    assert run.returncode in (0, 1), run.stdout + run.stderr  # 2: mypy itself failed
    expected = _misspelt_words()
    assert len(expected) == 15
    # Every misspelt call is reported, on its own line, naming the word...
    for number, word in expected.items():
        assert any(f'"{word}"' in message for message in errors.get(number, [])), (
            number,
            word,
            errors.get(number),
            run.stdout,
        )
    # ...and nothing else is: the correct spellings type-check.
    assert set(errors) == set(expected), run.stdout


def _keywords(fn: Callable[..., Any], *leave_out: str) -> set[str]:
    """The keyword options ``fn`` names itself (not its ``**options``)."""
    return {
        p.name
        for p in inspect.signature(fn).parameters.values()
        if p.kind is inspect.Parameter.KEYWORD_ONLY and p.name not in leave_out
    }


def _keys(options: Any) -> set[str]:
    return set(options.__optional_keys__) | set(options.__required_keys__)


@pytest.mark.parametrize(
    ("options", "names"),
    [
        pytest.param(SessionOptions, lambda: _keywords(Session), id="Session"),
        pytest.param(
            SessionSettings,
            lambda: _keywords(
                Session, "handler", "notification_handler", "on_input_ended", "immediate"
            ),
            id="SessionSettings",
        ),
        pytest.param(
            ClientOptions,
            lambda: _keywords(connect_client) | _keys(SessionSettings),
            id="connect_client",
        ),
        pytest.param(ProcessOptions, lambda: _keywords(connect_process_stream), id="process"),
        pytest.param(
            StdioClientOptions,
            lambda: _keys(ProcessOptions) | _keys(ClientOptions),
            id="connect_stdio_client",
        ),
        pytest.param(
            HttpClientStreamOptions,
            lambda: _keywords(ExchangeStream.__init__, "owns_http"),
            id="HttpClientStream",
        ),
        pytest.param(
            HttpStreamOptions,
            lambda: _keywords(connect_http_stream) | _keys(HttpClientStreamOptions),
            id="connect_http_stream",
        ),
        pytest.param(
            HttpClientOptions,
            lambda: _keys(HttpStreamOptions) | _keys(ClientOptions),
            id="connect_http_client",
        ),
        pytest.param(
            WebSocketClientOptions,
            lambda: _keywords(connect_websocket_client) | _keys(ClientOptions),
            id="connect_websocket_client",
        ),
        pytest.param(HostOptions, lambda: _keywords(Host), id="Host"),
        pytest.param(AppOptions, lambda: _keywords(McpAsgiApp), id="asgi_app"),
        pytest.param(
            RunOptions, lambda: _keywords(run_stdio) | _keys(SessionSettings), id="run_stdio"
        ),
        pytest.param(
            ServeOptions,
            lambda: _keywords(Server.serve, "task_status") | _keys(SessionSettings),
            id="serve",
        ),
        pytest.param(ToolOptions, lambda: _keywords(ToolSpec.from_function), id="add_tool"),
        pytest.param(DirectoryOptions, lambda: _keywords(DirectoryResources), id="directory"),
        pytest.param(LineStreamOptions, lambda: _keywords(connect_line_stream), id="line"),
        pytest.param(
            StdioServerStreamOptions,
            lambda: _keywords(connect_stdio_server_stream),
            id="stdio_server_stream",
        ),
        pytest.param(FuzzOptions, lambda: {f.name for f in attrs.fields(FuzzSettings)}, id="fuzz"),
    ],
)
def test_each_options_type_names_exactly_the_options_of_its_function(
    options: Any, names: Callable[[], set[str]]
) -> None:
    assert _keys(options) == names()
