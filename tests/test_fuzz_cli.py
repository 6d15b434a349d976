"""The fuzzer's command line and pytest plugin, beyond the broken-server runs: the list of
requirements, usage and setup errors as one line, printing a reproduction's bare
messages, and the ``mcp_fuzz`` fixture in someone else's test suite."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import orjson
import pytest

from trio_mcp._fuzz._invariants import INVARIANTS

ROOT = Path(__file__).resolve().parent.parent
TARGETS = ROOT / "tests" / "fuzz_targets"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def cli(*args: str, cwd: Path = ROOT, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trio_mcp", *args],
        capture_output=True,
        text=True,
        env=ENV,
        cwd=cwd,
        timeout=timeout,
    )


def test_list_invariants() -> None:
    run = cli("fuzz", "--list-invariants")
    assert run.returncode == 0, run.stderr
    for name, invariant in INVARIANTS.items():
        cwe = f", CWE-{invariant.cwe}" if invariant.cwe is not None else ""
        assert f"{name}  [{invariant.level}, {invariant.check_class}{cwe}]" in run.stdout


def test_fuzz_needs_a_target() -> None:
    run = cli("fuzz")
    assert run.returncode == 2
    assert "fuzz needs --stdio or --url" in run.stderr


@pytest.mark.parametrize(
    ("options", "error"),
    [
        (
            ["--url", "http://127.0.0.1:9/mcp", "--header", "X-Key"],
            "--header expects 'NAME: VALUE'",
        ),
        (["--url", "http://127.0.0.1:9/mcp", "--header", "Bad Name: 1"], "--header expects"),
        (["--stdio", "true", "--env", "A"], "--env expects NAME=VALUE, not 'A'"),
    ],
)
def test_server_options_are_read_as_every_command_reads_them(
    options: list[str], error: str, tmp_path: Path
) -> None:
    """``fuzz`` shares the options that name a server with the other commands, and reads
    them the same way: a malformed one is a usage error, before anything runs."""
    run = cli("fuzz", *options, cwd=tmp_path)
    assert run.returncode == 1
    assert run.stderr.startswith(f"trio-mcp: {error}"), run.stderr


def test_a_command_that_does_not_exist_is_one_line() -> None:
    run = cli("fuzz", "--stdio", "no-such-mcp-server-here")
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    assert run.stderr.startswith("trio-mcp: ") and "cannot start the MCP server" in run.stderr


def test_something_that_is_not_an_mcp_server_is_one_line(tmp_path: Path) -> None:
    silent = f"{sys.executable} -c 'import sys; sys.stdin.read()'"
    run = cli(
        "fuzz", "--stdio", silent, "--deadline", "0.5", "--startup-timeout", "0.5", cwd=tmp_path
    )
    assert run.returncode == 1, run.stdout
    assert "Traceback" not in run.stderr
    assert "answered neither server/discover nor initialize" in run.stderr


def test_ctrl_c_stops_the_run_and_keeps_what_it_found(tmp_path: Path) -> None:
    # A hang is found, then shrunk slowly (every attempt waits out a deadline): Ctrl-C
    # lands while the run is still busy.
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "trio_mcp",
            "fuzz",
            "--stdio",
            f"{sys.executable} {TARGETS / 'hangs_on_zero.py'}",
            "--seed",
            "1",
            "--deadline",
            "1",
            "--startup-timeout",
            "1",
            # Longer than the test waits for the first failure: the run is still busy
            # when Ctrl-C lands, however slowly a loaded machine gets there.
            "--minimize-budget",
            "30",
            "--progress-interval",
            "0.2",
        ],
        env=ENV,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    deadline = time.monotonic() + 90
    for line in process.stderr:
        assert line.startswith("fuzz: "), line
        if " 1 failed" in line or time.monotonic() > deadline:
            break
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert "trio-mcp: stopping (Ctrl-C again to abort)" in err
    assert "(stopped early: reached " in out, out
    assert process.returncode == 1, out + err
    assert "FAILED request-answered" in out
    assert (tmp_path / "trio-mcp-fuzz" / "request-answered.jsonl").exists()


def test_print_lines_gives_the_bare_messages(tmp_path: Path) -> None:
    from trio_mcp._fuzz._steps import Await, Send, Settle, dump_steps

    path = tmp_path / "repro.jsonl"
    first = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    path.write_bytes(
        dump_steps({"era": "legacy"}, [Send(data=first), Await((1,)), Send(data=b"{no"), Settle()])
    )
    run = cli("replay", str(path), "--print-lines", "--stdio", "unused")
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [first.decode(), "{no"]


def test_the_library_entry_point_is_fuzz_and_has_no_second_name() -> None:
    import trio_mcp.fuzz
    import trio_mcp.testing

    assert trio_mcp.fuzz.fuzz.__name__ == "fuzz"
    assert not hasattr(trio_mcp.fuzz, "fuzz_server")
    assert not hasattr(trio_mcp.testing, "fuzz")  # the fuzzer is trio_mcp.fuzz's alone


def test_the_pytest_plugin_is_an_entry_point_that_imports_cheaply() -> None:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["pytest11"] == {
        "trio_mcp.pytest_plugin": "trio_mcp.pytest_plugin"
    }
    # Loaded into every pytest run: none of the fuzzer, nor the fuzz extra, until used.
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, trio_mcp.pytest_plugin; print(sorted(m for m in sys.modules if m in "
            "{'hypothesis', 'httpx', 'jsonschema', 'trio_mcp._fuzz._runner', "
            "'trio_mcp._fuzz._checker', 'trio_mcp.testing', 'trio_mcp.fuzz'}))",
        ],
        capture_output=True,
        text=True,
        env=ENV,
        check=True,
    )
    assert probe.stdout.strip() == "[]", probe.stdout


def _pytest(directory: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args, str(directory)],
        capture_output=True,
        text=True,
        env=ENV,
        cwd=directory,
        timeout=110,
    )


def test_listing_the_plugin_as_well_is_no_clash(tmp_path: Path) -> None:
    # What the docs used to ask for, on top of the entry point: still fine.
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["trio_mcp.pytest_plugin"]\n')
    (tmp_path / "test_fixture.py").write_text(
        "def test_fixture(mcp_fuzz):\n    assert mcp_fuzz.reports == []\n"
    )
    for args in [(), ("-p", "trio_mcp.pytest_plugin")]:
        run = _pytest(tmp_path, *args)
        assert run.returncode == 0, run.stdout + run.stderr
        assert "1 passed" in run.stdout
    # And it can be turned off.
    (tmp_path / "conftest.py").unlink()
    run = _pytest(tmp_path, "-p", "no:trio_mcp.pytest_plugin")
    assert run.returncode == 1
    assert "fixture 'mcp_fuzz' not found" in run.stdout


def test_the_pytest_plugin_fails_a_test_with_its_reproduction(tmp_path: Path) -> None:
    # No conftest.py: the pytest11 entry point brings the mcp_fuzz fixture.
    (tmp_path / "test_servers.py").write_text(
        textwrap.dedent(
            f"""
            import sys
            import pytest
            from trio_mcp.fuzz import StdioTarget

            OPTIONS = dict(max_examples=5, deadline=1, startup_timeout=3, time_budget=60,
                           shrink_budget=2, minimize_budget=10)

            @pytest.mark.trio
            async def test_good(mcp_fuzz):
                report = await mcp_fuzz(
                    StdioTarget(command=[sys.executable, {str(TARGETS / "good.py")!r}]), **OPTIONS
                )
                assert report.ok and report.examples >= 5

            @pytest.mark.trio
            async def test_broken(mcp_fuzz):
                await mcp_fuzz(
                    StdioTarget(command=[sys.executable, {str(TARGETS / "logs_to_stdout.py")!r}]),
                    **OPTIONS,
                )
            """
        )
    )
    run = _pytest(tmp_path, "-p", "trio")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "1 failed, 1 passed" in run.stdout, run.stdout
    assert "FAILED valid-jsonrpc-only" in run.stdout
    # The reproduction is on disk (under that test's tmp_path), ready for trio-mcp replay.
    match = re.search(r"reproduction: 1 messages in (\S+valid-jsonrpc-only\.jsonl)", run.stdout)
    assert match is not None, run.stdout
    # header, the send, (an await of its answer, unless shrinking found it needless), settle
    header, send, *middle, settle = map(orjson.loads, Path(match[1]).read_bytes().splitlines())
    assert header["trio_mcp_fuzz"] == 1
    assert send["send"]["method"] == "tools/call"
    assert middle in ([], [{"await": [send["send"]["id"]]}])
    assert settle == {"settle": True}
