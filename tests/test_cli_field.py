"""What a new user of the trio-mcp command met (issue 22, issue 21): WebSocket servers, prompt
arguments as KEY=VALUE, a server that wants authorization, headers the transport owns."""

from __future__ import annotations

import socket
import subprocess
import sys
from functools import partial

import pytest
import trio
from test_cli import ENV, EVERYTHING, ROOT, cli, no_traceback

from trio_mcp import Server

pytestmark = pytest.mark.slow


async def run_cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    """The command in a child process, awaited (the test's servers run meanwhile)."""
    return await trio.run_process(
        [sys.executable, "-m", "trio_mcp", *args],
        capture_stdout=True,
        capture_stderr=True,
        check=False,
        env=ENV,
        cwd=ROOT,
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# -- ws:// and wss:// URLs -------------------------------------------------------------------

WEBSOCKET_COMMANDS: list[tuple[list[str], str]] = [
    (["list-tools"], "echo(text)"),
    (["list-resources"], "config://settings"),
    (["list-prompts"], "code_review(code, language?)"),
    (["info"], "server: everything 1.0.0"),
    (["call-tool", "add", "a=2", "b=3"], "5"),
    (["read-resource", "counter://value"], ""),
    (["get-prompt", "code_review", "code=x = 1", "language=python"], "Review this python"),
    (["complete", "--prompt", "code_review", "language=py"], "python"),
    (["set-level", "debug", "--protocol-version", "2025-11-25"], "log level: debug"),
]


async def test_every_command_reaches_a_websocket_server() -> None:
    """A real ``serve_websocket``; on main ``--url ws://...`` went to the HTTP client and
    ended in ``HTTP 400 ... not an MCP endpoint``."""
    from trio_mcp._everything_server import server
    from trio_mcp.websocket import serve_websocket

    with trio.fail_after(120):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(partial(serve_websocket, server, port=0))
            url = f"ws://127.0.0.1:{port}/"
            runs = [await run_cli(*args, "--url", url) for args, _ in WEBSOCKET_COMMANDS]
            refused = await run_cli(
                "list-tools",
                "--url",
                f"ws://127.0.0.1:{port}/",
                "--header",
                "Origin: http://evil.example",
            )
            nursery.cancel_scope.cancel()
    for (args, expected), run in zip(WEBSOCKET_COMMANDS, runs, strict=True):
        assert run.returncode == 0, (args, run.stderr)
        assert expected in run.stdout.decode(), (args, run.stdout)
    assert refused.returncode == 1
    assert refused.stderr.decode().startswith(
        f"trio-mcp: ws://127.0.0.1:{port}/ refused the WebSocket connection: HTTP 403"
    ), refused.stderr
    assert refused.stderr.count(b"\n") == 1


# -- get-prompt KEY=VALUE --------------------------------------------------------------------


@pytest.mark.parametrize("version", [None, "2025-11-25"])
def test_get_prompt_takes_key_value_arguments(version: str | None) -> None:
    """As the tutorial says: prompts work like tools (on main: ``unrecognized arguments``)."""
    chosen = ["--protocol-version", version] if version else []
    run = cli(
        "get-prompt",
        "code_review",
        "code=print(1)",
        "--stdio",
        EVERYTHING,
        *chosen,
        "language=python",
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == "user: Review this python:\nuser: print(1)\n"
    # --args and pairs together, the pairs winning; a pair without "=" is a usage error.
    run = cli(
        "get-prompt",
        "code_review",
        "--args",
        '{"code": "a", "language": "go"}',
        "code=b",
        "--stdio",
        EVERYTHING,
    )
    assert run.stdout == "user: Review this go:\nuser: b\n", run.stderr
    run = cli("get-prompt", "code_review", "code", "--stdio", EVERYTHING)
    assert run.returncode == 1
    no_traceback(run)
    assert "a prompt argument is KEY=VALUE, not 'code'" in run.stderr


# -- headers the transport owns (issue 21) ---------------------------------------------------


@pytest.mark.parametrize(
    "header",
    [
        "Content-Length: 5",
        "transfer-encoding: chunked",
        "Host: x",
        "Mcp-Session-Id: s",
        "MCP-Protocol-Version: 2025-11-25",
        "Accept: text/plain",
        "Content-Type: text/plain",
        "Connection: close",
    ],
)
def test_a_header_the_transport_sets_is_refused_in_one_line(header: str) -> None:
    """On main ``Content-Length: 5`` ended in a 109-line traceback."""
    run = cli("list-tools", "--url", "http://127.0.0.1:9/mcp", "--header", header)
    assert run.returncode == 1
    no_traceback(run)
    name = header.partition(":")[0]
    assert f"--header {name}: the transport sets this header itself" in run.stderr


# -- a server that wants authorization -------------------------------------------------------


async def test_a_401_says_how_to_authorize_and_names_the_authorization_server() -> None:
    """On main: ``error -32600: Unauthorized: an access token is required`` and nothing on
    what to do."""
    from trio_mcp.auth import ProtectedResource
    from trio_mcp.http import serve

    server = Server("protected")

    @server.tool()
    def hello() -> str:
        return "hello"

    port = free_port()
    issuer = "https://issuer.example/tenant"  # never reached: no token is ever checked
    auth = ProtectedResource.for_issuer(f"http://127.0.0.1:{port}/mcp", issuer)
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            await nursery.start(partial(serve, server, "127.0.0.1", port, auth=auth))
            run = await run_cli("call-tool", "hello", "--url", f"http://127.0.0.1:{port}/mcp")
            nursery.cancel_scope.cancel()
    assert run.returncode == 1
    stderr = run.stderr.decode()
    assert "Traceback" not in stderr and stderr.count("\n") == 1, stderr
    assert "the server wants authorization: run again with --auth" in stderr
    assert "--client-credentials CLIENT_ID" in stderr
    assert f"its authorization server: {issuer}" in stderr


def test_a_refusal_that_is_not_about_authorization_gets_no_hint() -> None:
    """A server that is simply not MCP (a 404 everywhere) is not told to log in."""
    run = cli("list-tools", "--timeout", "20", "--url", f"http://127.0.0.1:{free_port()}/mcp")
    assert run.returncode == 1
    assert "authorization" not in run.stderr
