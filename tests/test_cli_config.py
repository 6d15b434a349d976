"""``--config FILE --server NAME`` (issue 22): a connecting command reaches a server named in
an ``mcpServers`` file, read strictly by the host's parser; mistakes are one line naming
the file, the server and the key. Real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from npm_support import (
    NpmServer,
)

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
EVERYTHING = str(ROOT / "examples" / "everything_server.py")


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trio_mcp", *args],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
        cwd=ROOT,
    )


def config(tmp_path: Path, servers: dict[str, object]) -> str:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return str(path)


@pytest.mark.slow
def test_a_server_of_the_file_by_name(tmp_path: Path) -> None:
    file = config(
        tmp_path,
        {
            "everything": {
                "command": sys.executable,
                "args": [EVERYTHING],
                "env": {"PYTHONPATH": str(ROOT)},
                "allowedTools": ["echo"],  # policy keys are checked, and ignored here
            },
            "other": {"url": "http://127.0.0.1:9/mcp"},
        },
    )
    done = cli(
        "call-tool", "echo", "text=from the file", "--config", file, "--server", "everything"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "from the file"


@pytest.mark.slow
def test_one_server_needs_no_name_and_cli_env_adds(tmp_path: Path) -> None:
    file = config(tmp_path, {"only": {"command": f"{sys.executable} {EVERYTHING}"}})
    done = cli("list-tools", "--config", file, "--env", f"PYTHONPATH={ROOT}")
    assert done.returncode == 0, done.stderr
    assert "echo(text)" in done.stdout


@pytest.mark.slow
def test_the_npm_reference_server_from_a_file(
    tmp_path: Path,
    npm_server_everything: NpmServer,
) -> None:
    node, *args = npm_server_everything.node_command
    file = config(tmp_path, {"reference": {"command": node, "args": args}})
    done = cli("call-tool", "echo", "message=hi", "--config", file, "--server", "reference")
    assert done.returncode == 0, done.stderr
    assert "hi" in done.stdout


@pytest.mark.parametrize(
    ("servers", "extra", "message"),
    [
        ({"a": {"url": "http://127.0.0.1:9/mcp"}, "b": {"url": "http://127.0.0.1:9/mcp"}}, [],
         "has 2 servers: name one with --server (a, b)"),
        ({"a": {"url": "http://127.0.0.1:9/mcp"}}, ["--server", "c"],
         "has no server 'c' (it has a)"),
        ({"a": {"command": "x", "allowedTools": "read_*"}}, [],
         "server 'a', key 'allowedTools': expected a list of strings"),
        ({"a": {"command": "x", "colour": 1}}, [], "'colour'"),
        ({"a": {"url": "http://127.0.0.1:9/mcp"}}, ["--env", "A=1"], "--env and --cwd are for"),
    ],
)  # fmt: skip
def test_mistakes_are_one_line(
    tmp_path: Path, servers: dict[str, object], extra: list[str], message: str
) -> None:
    done = cli("list-tools", "--config", config(tmp_path, servers), *extra)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and message in done.stderr, done.stderr


def test_a_file_that_is_not_there_or_not_json(tmp_path: Path) -> None:
    missing = cli("list-tools", "--config", str(tmp_path / "nope.json"))
    assert missing.returncode == 1 and "No such file" in missing.stderr
    (tmp_path / "bad.json").write_text("{not json")
    bad = cli("list-tools", "--config", str(tmp_path / "bad.json"))
    assert bad.returncode == 1 and "not JSON" in bad.stderr
    assert cli("list-tools", "--url", "http://127.0.0.1:9/mcp", "--server", "x").returncode == 1


@pytest.mark.slow
def test_the_fuzzer_reads_the_file_too(tmp_path: Path) -> None:
    file = config(tmp_path, {"everything": {"command": sys.executable, "args": [EVERYTHING]}})
    done = cli(
        "fuzz", "--config", file, "--env", f"PYTHONPATH={ROOT}",
        "--max-examples", "2", "--time-budget", "60", "--quiet",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
