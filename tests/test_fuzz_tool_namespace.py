"""The ``tools`` class across a host's servers: tool names that collide once namespaced
(``server__tool``), that differ only by case or look-alike letters, that agree in the 64
characters an LLM API takes, or that two servers share; judged by name alone, and through
``trio-mcp fuzz --config FILE --across-servers`` against real servers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from trio_mcp._fuzz._tool_namespace import namespace_collisions

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
GOOD = [sys.executable, str(ROOT / "tests" / "fuzz_targets" / "good.py")]


def test_distinct_names_pass() -> None:
    assert namespace_collisions({"weather": ["forecast", "alerts"], "files": ["read"]}) == []


def test_a_namespaced_collision_is_found() -> None:
    (problem,) = [
        p for p in namespace_collisions({"a": ["b__c"], "a__b": ["c"]}) if "both named" in p
    ]
    assert "'a__b__c' once namespaced" in problem


def test_names_that_differ_by_case_or_look_alikes_are_found() -> None:
    (case,) = namespace_collisions({"files": ["read"], "Files": ["Read"]})[:1]
    assert "differ only by case, Unicode look-alikes or punctuation" in case
    # A Cyrillic i (U+0456) for the Latin one: the bare names look alike across servers.
    (cyrillic,) = namespace_collisions({"fs": ["read_file"], "shadow": ["read_f\u0456le"]})
    assert "look-alike names" in cyrillic


def test_one_name_on_two_servers_is_found() -> None:
    (problem,) = namespace_collisions({"a": ["search"], "b": ["search"]})
    assert "server 'a''s tool 'search' and server 'b''s tool 'search' have the same name" in (
        problem
    )


def test_names_that_agree_in_the_first_64_characters_are_found() -> None:
    long = "x" * 70
    # ("a" + "__" + "_x..." and "a_" + "__" + "x...": one prefix, two tools.)
    problems = namespace_collisions({"a": ["_" + long + "1"], "a_": [long + "2"]})
    assert any("first 64 characters" in p for p in problems), problems


def _fuzz_across(tmp_path: Path, other: list[str]) -> dict[str, object]:
    config = {"mcpServers": {"mine": {"command": GOOD[0], "args": GOOD[1:]}, "other": {}}}
    config["mcpServers"]["other"] = {"command": other[0], "args": other[1:]}
    (tmp_path / "host.json").write_text(json.dumps(config))
    run = subprocess.run(
        [
            *(sys.executable, "-m", "trio_mcp", "fuzz", "--config", "host.json"),
            *("--server", "mine", "--across-servers", "--checks", "tools", "--strict"),
            *("--quiet", "--report", "report.json", "--seed", "1"),
        ],
        capture_output=True,
        text=True,
        env=ENV,
        cwd=tmp_path,
        timeout=60,
    )
    assert run.returncode in (0, 1), run.stderr
    report: dict[str, object] = json.loads((tmp_path / "report.json").read_text())
    return report


@pytest.mark.slow
@pytest.mark.timeout(90)
def test_the_command_line_lists_the_other_servers_and_reports_a_shared_name(
    tmp_path: Path,
) -> None:
    echo = [sys.executable, str(ROOT / "examples" / "echo_server.py")]
    report = _fuzz_across(tmp_path, echo)
    failures = {f["invariant"]: f for f in report["failures"]}  # type: ignore[attr-defined]
    found = failures["tool-names-distinct-across-servers"]
    assert "server 'mine''s tool 'echo' and server 'other''s tool 'echo'" in found["detail"]
    assert {"server": "other", "tools": ["echo"]} in found["received"]


@pytest.mark.slow
@pytest.mark.timeout(90)
def test_servers_whose_tools_stay_apart_pass(tmp_path: Path) -> None:
    glossary = [sys.executable, str(ROOT / "examples" / "first_server.py")]
    report = _fuzz_across(tmp_path, glossary)
    assert report["failures"] == [] and report["warnings"] == [], report
    assert not [n for n in report["notes"] if "not listed" in n]  # type: ignore[attr-defined]
