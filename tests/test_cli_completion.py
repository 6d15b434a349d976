"""``trio-mcp completion`` (issue 22): scripts generated from the parser, so every command
and option completes, including those added later; the bash one run by a real bash."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from trio_mcp._cli._main import _parser

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def script(shell: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "trio_mcp", "completion", shell],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def complete(words: list[str]) -> list[str]:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    program = (
        f"source /dev/stdin; COMP_WORDS=({' '.join(repr(w) for w in words)}); "
        f"COMP_CWORD={len(words) - 1}; _trio_mcp; printf '%s\\n' \"${{COMPREPLY[@]}}\""
    )
    done = subprocess.run(
        [bash, "-c", program], input=script("bash"), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_bash_completes_commands_options_and_choices() -> None:
    assert complete(["trio-mcp", "list"]) == [
        "list-tools",
        "list-resources",
        "list-prompts",
        "list-skills",
    ]
    assert complete(["trio-mcp", "bridge", "--se"]) == ["--server", "--serve-http"]
    assert complete(["trio-mcp", "call-tool", "--log-level", "e"]) == ["error", "emergency"]
    assert complete(["trio-mcp", "completion", "--h"]) == ["--help"]


def test_every_command_and_option_of_the_parser_is_in_each_script() -> None:
    parser = _parser()
    (commands,) = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
    scripts = {shell: script(shell) for shell in ("bash", "zsh", "fish")}
    for name, sub in commands.choices.items():  # type: ignore[union-attr]
        for shell, text in scripts.items():
            assert name in text, (shell, name)
        for action in sub._actions:
            for option in action.option_strings:
                if option.startswith("--") and action.help != "==SUPPRESS==":
                    assert option in scripts["bash"], (name, option)
                    assert f"-l {option[2:]}" in scripts["fish"], (name, option)
    assert "bashcompinit" in scripts["zsh"]


def test_the_bash_script_parses() -> None:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    done = subprocess.run([bash, "-n"], input=script("bash"), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_an_unknown_shell_is_refused() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "trio_mcp", "completion", "tcsh"],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=60,
    )
    assert done.returncode == 2 and "invalid choice: 'tcsh'" in done.stderr
