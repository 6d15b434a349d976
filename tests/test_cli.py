"""The trio-mcp command: real processes, clear errors, no tracebacks for expected failures."""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio

from trio_mcp import Server

ROOT = Path(__file__).resolve().parent.parent
SERVER = f"{sys.executable} {ROOT / 'tests' / 'programs' / 'slow_server.py'}"
ECHO_SCRIPT = ROOT / "examples" / "echo_server.py"
ECHO = f"{sys.executable} {ECHO_SCRIPT}"
#: Answers initialize (declaring tools), then dies with exit status 3 on the first call.
DIES_MIDSTREAM = f"{sys.executable} {ROOT / 'tests' / 'programs' / 'dies_midstream.py'}"
EVERYTHING = f"{sys.executable} {ROOT / 'examples' / 'everything_server.py'}"
ENV_SERVER = f"{sys.executable} {ROOT / 'tests' / 'programs' / 'env_server.py'}"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

pytestmark = pytest.mark.slow


def cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trio_mcp", *args],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=timeout,
        cwd=ROOT,
    )


def no_traceback(run: subprocess.CompletedProcess[str]) -> None:
    """An expected failure: exactly one line on stderr, no traceback."""
    assert "Traceback" not in run.stderr, run.stderr
    assert run.stderr.startswith("trio-mcp: "), run.stderr
    assert run.stderr.endswith("\n") and run.stderr.count("\n") == 1, run.stderr


@pytest.fixture(scope="module")
def echo_url() -> Iterator[str]:
    """``examples/echo_server.py`` serving Streamable HTTP on a free port of 127.0.0.1."""
    process = subprocess.Popen(
        [sys.executable, str(ECHO_SCRIPT), "--http", "0"],
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
        cwd=ROOT,
    )
    assert process.stderr is not None
    try:
        deadline = time.monotonic() + 30
        line = ""
        while "echo server on " not in line:
            left = deadline - time.monotonic()
            assert left > 0 and select.select([process.stderr], [], [], left)[0], "no URL"
            line = process.stderr.readline()
            assert line, "the echo server exited"
        yield line.split("echo server on ", 1)[1].strip()
    finally:
        process.terminate()
        process.wait(timeout=30)
        process.stderr.close()


def unused_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (it was free a moment ago)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_list_tools() -> None:
    run = cli("list-tools", "--stdio", SERVER)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0] == "echo(text)"
    assert "slow(seconds)  Sleeps, then answers" in run.stdout


def test_list_tools_as_json_in_a_chosen_version() -> None:
    run = cli("list-tools", "--stdio", SERVER, "--json", "--protocol-version", "2025-06-18")
    assert run.returncode == 0, run.stderr
    tools = json.loads(run.stdout)
    assert [t["name"] for t in tools] == ["echo", "slow", "chatty"]
    assert tools[0]["inputSchema"]["properties"] == {"text": {"type": "string"}}


def test_call_tool() -> None:
    run = cli("call-tool", "echo", "--args", '{"text": "héllo"}', "--stdio", SERVER)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "héllo\n"


def test_list_and_call_over_http(echo_url: str) -> None:
    run = cli("list-tools", "--url", echo_url)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "echo(text)  Return the text unchanged.\n"
    run = cli("call-tool", "echo", "--args", '{"text": "héllo  there"}', "--url", echo_url)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "héllo  there\n"
    run = cli("list-tools", "--json", "--protocol-version", "2025-06-18", "--url", echo_url)
    assert run.returncode == 0, run.stderr
    assert [tool["name"] for tool in json.loads(run.stdout)] == ["echo"]


@pytest.mark.parametrize("command", ["list-prompts", "list-resources"])
@pytest.mark.parametrize("as_json", [False, True])
def test_listing_what_the_server_does_not_offer_prints_nothing(command: str, as_json: bool) -> None:
    """The echo server has neither prompts nor resources: both lists are empty, not errors."""
    run = cli(command, "--stdio", ECHO, *(["--json"] if as_json else []))
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    if not as_json:
        assert run.stdout == ""
    elif command == "list-prompts":
        assert json.loads(run.stdout) == []
    else:
        assert json.loads(run.stdout) == {"resources": [], "resourceTemplates": []}


def test_info() -> None:
    run = cli("info", "--stdio", SERVER, "--protocol-version", "2025-11-25")
    assert run.returncode == 0, run.stderr
    assert "protocol: 2025-11-25 (legacy era)" in run.stdout
    assert "server: slow" in run.stdout


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["call-tool", "nope", "--stdio", SERVER], "error -32602: Unknown tool: nope"),
        (["call-tool", "echo", "--args", "{bad", "--stdio", SERVER], "--args is not valid JSON"),
        (["call-tool", "echo", "--args", "[1]", "--stdio", SERVER], "--args must be a JSON object"),
        (["list-tools", "--stdio", "no-such-mcp-server-here"], "cannot start the MCP server"),
        (
            [
                "list-tools",
                "--stdio",
                f"{sys.executable} -c 'import sys; sys.stderr.write(\"one\\ntwo\\n\"); sys.exit(4)'",
            ],
            "the server closed the connection (exit status 4); its stderr ends with: two",
        ),
        (
            ["call-tool", "echo", "--protocol-version", "2025-11-25", "--stdio", DIES_MIDSTREAM],
            "the server closed the connection (exit status 3); "
            "its stderr ends with: fatal: out of cheese",
        ),
        (
            ["list-tools", "--timeout", "20", "--url", f"http://127.0.0.1:{unused_port()}/mcp"],
            "cannot reach http://127.0.0.1:",
        ),
        (
            [
                "call-tool",
                "slow",
                "--args",
                '{"seconds": 30}',
                "--timeout",
                "1.5",
                "--stdio",
                SERVER,
            ],
            "gave up after 1.5 s",
        ),
        (
            ["list-tools", "--shutdown-grace", "-1", "--stdio", SERVER],
            "--shutdown-grace must be 0 or more seconds",
        ),
        (["list-tools", "--header", "X-Key: 1", "--stdio", SERVER], "--header is for a server"),
        (
            ["list-tools", "--env", "A=1", "--url", "http://127.0.0.1:9/mcp"],
            "--env and --cwd are for a server started with --stdio",
        ),
        (["list-tools", "--env", "A", "--stdio", SERVER], "--env expects NAME=VALUE, not 'A'"),
        (
            ["list-tools", "--header", "X-Key", "--url", "http://127.0.0.1:9/mcp"],
            "--header expects 'NAME: VALUE'",
        ),
        (["list-tools", "--cwd", "/no/such/dir", "--stdio", SERVER], "--cwd /no/such/dir: no such"),
        (
            ["call-tool", "add", "a=two", "--stdio", EVERYTHING],
            "a='two': tool add expects an integer for a",
        ),
        (["call-tool", "add", "c=1", "--stdio", EVERYTHING], "tool add has no parameter 'c'"),
        (["call-tool", "nope", "a=1", "--stdio", EVERYTHING], "the server lists no tool 'nope'"),
        (
            ["set-level", "debug", "--stdio", EVERYTHING],
            "server keeps no log level: each request asks for its own",
        ),
    ],
)
def test_expected_failures_are_one_line(args: list[str], expected: str) -> None:
    run = cli(*args)
    assert run.returncode == 1
    no_traceback(run)
    assert expected in run.stderr


def test_a_tool_error_result_exits_non_zero() -> None:
    run = cli("call-tool", "echo", "--args", '{"text": 5}', "--stdio", SERVER)
    assert run.returncode == 1
    assert "Invalid arguments for tool echo" in run.stdout
    assert "reported an error" in run.stderr


def test_usage_errors_exit_2() -> None:
    run = cli("list-tools")
    assert run.returncode == 2
    assert "one of the arguments --stdio --url --config is required" in run.stderr
    run = cli("demo", "--json")  # the demo is a tour for people: no JSON
    assert run.returncode == 2
    assert "unrecognized arguments: --json" in run.stderr
    run = cli("list-tools", "a=1", "--stdio", SERVER)  # pairs are call-tool's
    assert run.returncode == 2
    assert "unrecognized arguments: a=1" in run.stderr
    run = cli("set-level", "loud", "--stdio", SERVER)
    assert run.returncode == 2
    assert "invalid choice: 'loud'" in run.stderr


# -- options of every connecting command, and the commands added for the field ---------------


def test_list_tools_marks_optional_parameters() -> None:
    run = cli("list-tools", "--stdio", EVERYTHING)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert 'add(a, b?)  Adds two numbers (structured output: {"result": a + b}).' in lines
    assert any(line.startswith("long_task(steps)  ") for line in lines)


@pytest.mark.parametrize("version", [None, "2025-11-25"], ids=["modern", "legacy"])
def test_call_tool_with_key_value_arguments_typed_by_the_schema(version: str | None) -> None:
    pinned = ["--protocol-version", version] if version else []
    # Integers where the schema says integer (the tool adds them), before or after options.
    run = cli("call-tool", "add", "a=2", "--json", "--stdio", EVERYTHING, "b=40", *pinned)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["structuredContent"] == {"result": 42}
    # A string where the schema says string, whatever it looks like.
    run = cli("call-tool", "echo", "text=007", "--stdio", EVERYTHING, *pinned)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "007\n"
    # Pairs are added to --args.
    run = cli(
        "call-tool", "add", "--args", '{"a": 1, "b": 1}', "b=5", "--json", "--stdio", EVERYTHING
    )
    assert json.loads(run.stdout)["structuredContent"] == {"result": 6}


@pytest.mark.parametrize("version", [None, "2025-11-25"], ids=["modern", "legacy"])
def test_call_tool_shows_progress_and_log_messages_as_plain_lines(version: str | None) -> None:
    """Not on a terminal (here, a pipe): one line per update, on stderr; the result alone
    on stdout."""
    pinned = ["--protocol-version", version] if version else []
    run = cli("call-tool", "long_task", "steps=3", "--stdio", EVERYTHING, *pinned)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "finished 3 steps\n"
    assert run.stderr.splitlines() == [
        "[info] long_task: starting 3 steps",
        "progress 1/3 step 1 of 3",
        "progress 2/3 step 2 of 3",
        "progress 3/3 step 3 of 3",
    ]
    run = cli(
        "call-tool", "long_task", "steps=1", "--log-level", "none", "--stdio", EVERYTHING, *pinned
    )
    assert run.returncode == 0, run.stderr
    assert run.stderr.splitlines() == ["progress 1/1 step 1 of 1"]


def test_env_and_cwd_reach_a_stdio_server(tmp_path: Path) -> None:
    run = cli(
        "call-tool",
        "getenv",
        "name=TRIO_MCP_CLI_TEST",
        "--env",
        "TRIO_MCP_CLI_TEST=a=b c",
        "--stdio",
        ENV_SERVER,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == "a=b c\n"
    run = cli("call-tool", "getenv", "name=TRIO_MCP_CLI_TEST", "--stdio", ENV_SERVER)
    assert run.stdout == "(unset)\n"  # the server gets a minimal environment otherwise
    run = cli("call-tool", "cwd", "--cwd", str(tmp_path), "--stdio", ENV_SERVER)
    assert run.returncode == 0, run.stderr
    assert Path(run.stdout.strip()).resolve() == tmp_path.resolve()


async def test_header_reaches_an_http_server_that_requires_it() -> None:
    """An HTTP server behind a check of one header: refused without --header, served with."""
    from hypercorn.config import Config
    from hypercorn.trio import serve as hypercorn_serve

    from trio_mcp.http import asgi_app

    def guarded(app: Any) -> Any:
        async def guard(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] == "http" and dict(scope["headers"]).get(b"x-api-key") != b"k 1":
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"who are you?"})
                return
            await app(scope, receive, send)

        return guard

    server = Server("guarded")

    @server.tool()
    def hello() -> str:
        return "hello, key holder"

    config = Config()
    config.bind = ["127.0.0.1:0"]
    config.accesslog = None
    config.errorlog = None
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            binds = await nursery.start(hypercorn_serve, guarded(asgi_app(server)), config)
            url = binds[0] + "/mcp"
            refused, served = [
                await trio.run_process(
                    [sys.executable, "-m", "trio_mcp", "call-tool", "hello", "--url", url, *extra],
                    capture_stdout=True,
                    capture_stderr=True,
                    check=False,
                    env=ENV,
                    cwd=ROOT,
                )
                for extra in ([], ["--header", "X-Api-Key: k 1"])
            ]
            nursery.cancel_scope.cancel()
    assert refused.returncode == 1 and b"401" in refused.stderr, refused.stderr
    assert served.returncode == 0, served.stderr
    assert served.stdout == b"hello, key holder\n"


def test_set_level_in_the_initialize_era() -> None:
    run = cli("set-level", "debug", "--protocol-version", "2025-11-25", "--stdio", EVERYTHING)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "log level: debug\n"
    run = cli(
        "set-level", "warning", "--json", "--protocol-version", "2025-06-18", "--stdio", SERVER
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == {"level": "warning"}


@pytest.mark.parametrize("version", [None, "2025-11-25"], ids=["modern", "legacy"])
def test_complete_a_prompt_argument_and_a_template_variable(version: str | None) -> None:
    pinned = ["--protocol-version", version] if version else []
    run = cli("complete", "--prompt", "code_review", "language=py", "--stdio", EVERYTHING, *pinned)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "python\n"
    template = "greetings://{language}/{name}"
    run = cli(
        "complete",
        "--resource-template",
        template,
        "language",
        "--context",
        "name=Ada",
        "--json",
        "--stdio",
        EVERYTHING,
        *pinned,
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["values"] == ["en", "fr"]
    run = cli("complete", "--prompt", "code_review", "language=py", "--stdio", SERVER)
    assert run.returncode == 1
    no_traceback(run)
    assert "the server does not offer completion" in run.stderr


@pytest.mark.parametrize("protocol_version", [None, "2025-11-25"])
def test_demo_tours_the_everything_server(protocol_version: str | None) -> None:
    args = ["demo"] + (["--protocol-version", protocol_version] if protocol_version else [])
    run = cli(*args, timeout=120)
    assert run.returncode == 0, run.stderr
    era = "legacy" if protocol_version else "modern"
    for line in (
        f"({era} era)",
        "  -> Hello from trio-mcp!",
        "    progress 3/3",
        "  -> registered demo (dev)",
        "  -> A demo answer.",
        "  -> notified: counter://value was updated",
        "A resource template: read greetings://fr/Ada -> Bonjour, Ada!",
        "Done.",
    ):
        assert line in run.stdout, (line, run.stdout)


def test_shutdown_grace_zero_goes_straight_down_the_ladder() -> None:
    """0 means no waiting between the ladder's steps (not "wait for ever")."""
    ignores_eof = f"{sys.executable} {ROOT / 'tests' / 'programs' / 'ignores_eof.py'}"
    start = time.monotonic()
    run = cli(
        "list-tools", "--shutdown-grace", "0", "--timeout", "1", "--stdio", ignores_eof, timeout=30
    )
    assert time.monotonic() - start < 20  # a server that ignores EOF got SIGTERM at once
    assert run.returncode == 1
    no_traceback(run)


def test_auth_options_apply_to_urls_only_and_the_secret_comes_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from trio_mcp._cli import main as cli_main

    assert cli_main(["list-tools", "--stdio", "true", "--auth"]) == 1
    assert "apply to --url only" in capsys.readouterr().err
    monkeypatch.delenv("TRIO_MCP_CLIENT_SECRET", raising=False)
    code = cli_main(["list-tools", "--url", "http://127.0.0.1:9/mcp", "--client-credentials", "me"])
    assert code == 1
    assert "TRIO_MCP_CLIENT_SECRET" in capsys.readouterr().err


def test_call_tool_json_prints_what_a_2025_11_25_server_sent() -> None:
    # No "resultType": that revision has none, and the server did not send one (issue 22).
    run = cli(
        "call-tool", "add", "a=1", "b=2", "--json", "--protocol-version", "2025-11-25",
        "--stdio", EVERYTHING,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    printed = json.loads(run.stdout)
    assert "resultType" not in printed
    assert printed["structuredContent"] == {"result": 3}
    modern = json.loads(
        cli("call-tool", "add", "a=1", "b=2", "--json", "--stdio", EVERYTHING).stdout
    )
    assert modern["resultType"] == "complete"


def test_fuzz_refuses_a_websocket_url_in_one_line() -> None:
    # The other commands reach ws:// servers (tests/test_cli_field.py); the fuzzer drives
    # stdio and HTTP, and says so rather than failing inside the HTTP client.
    run = cli("fuzz", "--url", "ws://127.0.0.1:9/mcp")
    assert run.returncode != 0
    assert run.stderr.startswith(
        "trio-mcp: the fuzzer drives servers over stdio and HTTP, not WebSocket"
    )
    assert "Traceback" not in run.stderr
