"""docs/reference/cli.md names every option of every command (the fuzzer's own options
excepted: the fuzzing how-to documents them), so a new option cannot go undocumented."""

from __future__ import annotations

import argparse
from pathlib import Path

from trio_mcp._cli._main import _parser

PAGE = Path(__file__).resolve().parent.parent / "docs" / "reference" / "cli.md"


def test_every_option_is_on_the_reference_page() -> None:
    page = PAGE.read_text()
    (commands,) = [a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction)]
    missing = {
        f"{name} {option}"
        for name, parser in commands.choices.items()
        if name != "fuzz"
        for action in parser._actions
        if action.help != argparse.SUPPRESS
        for option in action.option_strings
        if option.startswith("--") and f"`{option}" not in page and option not in page
    }
    assert not missing, sorted(missing)
    for name in commands.choices:
        assert f"`{name}" in page, name
