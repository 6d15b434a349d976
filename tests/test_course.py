"""The course (docs/course/) stays true: every example and every exercise solution under
examples/course/ runs, and prints every line its chapter says you will see.

A chapter shows a file's output in a ``text`` block with a marker on the line before::

    <!-- output of examples/course/01_first_call.py -->
    ```text
    greet -> Hello, Ada!
    ```

Each line of the block must be the start of a line the file printed (so a line may leave
off a part that varies, such as pytest's timing). Lines are matched in any order: tasks
that run at once print in an order the scheduler picks.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
COURSE_DOCS = ROOT / "docs" / "course"
COURSE = ROOT / "examples" / "course"
OUTPUT = re.compile(r"<!-- output of (examples/course/(?:solutions/)?[A-Za-z0-9_]+\.py) -->")
#: Seconds one file may take; the slowest (real child processes) take a few.
TIMEOUT = 120


def course_files() -> list[str]:
    return sorted(str(path.relative_to(ROOT)) for path in COURSE.rglob("*.py"))


def shown_outputs() -> dict[str, list[str]]:
    """What the chapters say each file prints: its path -> the lines of its output blocks."""
    shown: dict[str, list[str]] = {}
    for page in sorted(COURSE_DOCS.glob("*.md")):
        lines = page.read_text().splitlines()
        for index, line in enumerate(lines):
            marker = OUTPUT.fullmatch(line.strip())
            if marker is None:
                continue
            assert lines[index + 1].strip() == "```text", f"{page.name}:{index + 1}"
            end = lines.index("```", index + 2)
            block = [text.rstrip() for text in lines[index + 2 : end] if text.strip()]
            assert block, f"{page.name}:{index + 1}: an empty output block"
            shown.setdefault(marker.group(1), []).extend(block)
    return shown


EXPECTED = shown_outputs()


def run(name: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / name)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


@pytest.fixture(scope="module")
def outputs() -> Iterator[dict[str, subprocess.CompletedProcess[str]]]:
    """Run every course file, four at a time (some start child processes of their own)."""
    with ThreadPoolExecutor(max_workers=4) as pool:
        yield dict(zip(EXPECTED, pool.map(run, EXPECTED), strict=True))


def test_every_course_file_is_shown_and_checked() -> None:
    assert sorted(EXPECTED) == course_files()


def test_every_chapter_has_an_example_and_a_solution() -> None:
    chapters = sorted(page.name for page in COURSE_DOCS.glob("[0-9][0-9]-*.md"))
    assert len(chapters) == 9
    for number, page in enumerate(chapters, 1):
        examples = sorted(COURSE.glob(f"{number:02d}_*.py"))
        solutions = sorted((COURSE / "solutions").glob(f"{number:02d}_*.py"))
        assert examples and solutions, f"{page}: no example or no solution"
        text = (COURSE_DOCS / page).read_text()
        for path in [*examples, *solutions]:
            name = str(path.relative_to(ROOT))
            assert f"<!-- output of {name} -->" in text, f"{page} does not show {name}"


#: The sections every chapter has, in this order.
SECTIONS = [
    "## The example",
    "## Run it",
    "## What you will see",
    "## Try breaking it",
    "## Exercise",
]


@pytest.mark.parametrize("page", sorted(COURSE_DOCS.glob("[0-9][0-9]-*.md")), ids=lambda p: p.name)
def test_a_chapter_has_its_parts(page: Path) -> None:
    """One idea linked to where it is documented, then the example, how to run it, what you
    will see, what to try breaking, and the exercise."""
    text = page.read_text()
    assert text.splitlines()[2].startswith("**The idea:**"), "the idea comes first"
    assert re.search(r"\]\(https://(trio|hypothesis)\.readthedocs\.io/en/\w+/[\w-]+\.html", text)
    places = [text.find(f"\n{section}\n") for section in SECTIONS]
    assert -1 not in places and places == sorted(places), dict(zip(SECTIONS, places, strict=True))
    number = page.name[:2]
    assert f"python examples/course/{number}_" in text, "say what to run"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_course_file_prints_what_its_chapter_shows(
    name: str, outputs: dict[str, subprocess.CompletedProcess[str]]
) -> None:
    result = outputs[name]
    assert result.returncode == 0, result.stderr
    printed = result.stdout.splitlines()
    for expected in EXPECTED[name]:
        assert any(line.startswith(expected) for line in printed), (expected, result.stdout)
