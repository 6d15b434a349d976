"""``--output raw`` and ``--strict`` (issue 22): the messages a command exchanges, printed as
they pass; and each checked against the official schema of the revision spoken. Real
servers: ours, the npm reference server, and one whose answer only the schema refuses."""

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
from spec_support import SPEC_DIR

ROOT = Path(__file__).resolve().parent.parent
EVERYTHING = f"{sys.executable} {ROOT / 'examples' / 'everything_server.py'}"
OFF_SCHEMA = f"{sys.executable} {ROOT / 'tests' / 'programs' / 'off_schema_server.py'}"

pytestmark = pytest.mark.slow


def cli(*args: str, spec: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("TRIO_MCP_SPEC_DIR", None)
    if spec:
        env["TRIO_MCP_SPEC_DIR"] = str(SPEC_DIR)
    return subprocess.run(
        [sys.executable, "-m", "trio_mcp", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=ROOT,
    )


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
def test_raw_prints_each_message_as_sent_and_received(version: str) -> None:
    done = cli(
        "call-tool", "echo", "text=hi", "--stdio", EVERYTHING, "--output", "raw",
        "--protocol-version", version,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert all(line[:2] in ("> ", "< ") for line in lines), lines
    messages = [(line[0], json.loads(line[2:])) for line in lines]
    sent_methods = [m.get("method") for d, m in messages if d == ">"]
    assert "tools/call" in sent_methods
    opening = "server/discover" if version == "2026-07-28" else "initialize"
    assert sent_methods[0] == opening
    call = next(m for d, m in messages if d == ">" and m.get("method") == "tools/call")
    answer = next(m for d, m in messages if d == "<" and m.get("id") == call["id"])
    assert answer["result"]["content"][0]["text"] == "hi"
    assert "hi" not in [line.strip() for line in lines]  # the usual output is left out


def test_strict_passes_spec_following_servers(npm_server_everything: NpmServer) -> None:
    if not (SPEC_DIR / "schema-2025-11-25.json").exists():
        pytest.skip(
            "the official schemas are not here (with TRIO_MCP_REQUIRE_SPEC=1 the run stops first)"
        )
    for version in ("2026-07-28", "2025-11-25"):
        done = cli(
            "call-tool", "long_task", "steps=2", "--stdio", EVERYTHING, "--strict",
            "--protocol-version", version,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "strict:" not in done.stderr
    reference = " ".join(npm_server_everything.node_command)
    done = cli("list-tools", "--stdio", reference, "--strict")
    assert done.returncode == 0, done.stderr


def test_strict_names_what_only_the_schema_refuses() -> None:
    if not (SPEC_DIR / "schema-2025-11-25.json").exists():
        pytest.skip(
            "the official schemas are not here (with TRIO_MCP_REQUIRE_SPEC=1 the run stops first)"
        )
    done = cli("list-tools", "--stdio", OFF_SCHEMA, "--strict", "--protocol-version", "2025-11-25")
    assert done.returncode == 1
    assert done.stdout.strip() == "sum()"  # the command itself went through
    assert (
        "strict: received the answer to tools/list (id 2): "
        "tools/0/inputSchema/type: 'object' was expected" in done.stderr
    ), done.stderr
    # Without --strict, the same command passes.
    assert (
        cli("list-tools", "--stdio", OFF_SCHEMA, "--protocol-version", "2025-11-25").returncode == 0
    )


def test_strict_without_the_schemas_says_where_to_find_them() -> None:
    done = cli("list-tools", "--stdio", EVERYTHING, "--strict", spec=False)
    assert done.returncode == 1
    assert "--strict needs the official JSON Schemas" in done.stderr


def test_raw_against_the_npm_reference_server(npm_server_everything: NpmServer) -> None:
    reference = " ".join(npm_server_everything.node_command)
    done = cli("call-tool", "echo", "message=hi", "--stdio", reference, "--output", "raw")
    assert done.returncode == 0, done.stderr
    messages = [json.loads(line[2:]) for line in done.stdout.splitlines()]
    methods = [m.get("method") for m in messages]
    # The era probe first (server/discover), then the handshake this 2025-11-25 server speaks.
    assert methods[0] == "server/discover" and "initialize" in methods
    assert any("hi" in json.dumps(m.get("result", {})) for m in messages)
