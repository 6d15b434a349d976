"""The docs stay true: generated pages match the code, every Python sample of the tutorial,
the how-to guides and the course is a verbatim excerpt of an example that
tests/test_examples.py or tests/test_course.py runs,
and every link between pages resolves.

A sample names its example in an HTML comment on the line before its fence::

    <!-- from examples/first_client.py -->
    ```python
    async with open_stdio_client(SERVER) as client:
    ```

and its lines must appear, in order and contiguous, in that file (trailing
whitespace aside).
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
#: The pages whose Python samples must come from examples/ (the reference: api-stability.md).
SAMPLED = [DOCS / "tutorial", DOCS / "how-to", DOCS / "course", DOCS / "reference"]
PYTHON = {"python", "py", "python3"}
#: examples/NAME.py, or a course file: examples/course/NAME.py, examples/course/solutions/NAME.py
MARKER = re.compile(r"<!-- from (examples/(?:course/(?:solutions/)?)?[A-Za-z0-9_]+\.py) -->")
FENCE = re.compile(r"```(\S*)")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


class Sample(NamedTuple):
    page: Path
    line: int  # of the opening fence, 1-based
    language: str
    source: str | None  # what the marker names
    lines: list[str]

    def __str__(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def samples(page: Path) -> list[Sample]:
    """The fenced code blocks of ``page``."""
    lines = page.read_text().splitlines()
    found = []
    index = 0
    while index < len(lines):
        opening = FENCE.fullmatch(lines[index].strip())
        if opening is None:
            index += 1
            continue
        end = index + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        assert end < len(lines), f"{page}:{index + 1}: the code block never ends"
        marker = MARKER.fullmatch(lines[index - 1].strip()) if index > 0 else None
        found.append(
            Sample(
                page,
                index + 1,
                opening.group(1),
                marker.group(1) if marker else None,
                [line.rstrip() for line in lines[index + 1 : end]],
            )
        )
        index = end + 1
    return found


def sampled_pages() -> list[Path]:
    return sorted(page for folder in SAMPLED for page in folder.glob("*.md"))


PYTHON_SAMPLES = [s for page in sampled_pages() for s in samples(page) if s.language in PYTHON]


def test_the_lifecycle_reference_matches_the_tables() -> None:
    spec = importlib.util.spec_from_file_location(
        "generate", ROOT / "docs" / "reference" / "generate.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (ROOT / "docs" / "reference" / "lifecycle.md").read_text() == module.render(), (
        "run: python docs/reference/generate.py"
    )


def test_there_are_samples_to_check() -> None:
    assert len(sampled_pages()) >= 17
    assert len(PYTHON_SAMPLES) >= 40
    assert any(s.source and s.source.startswith("examples/course/") for s in PYTHON_SAMPLES)


@pytest.mark.parametrize("sample", PYTHON_SAMPLES, ids=str)
def test_a_python_sample_is_an_excerpt_of_its_example(sample: Sample) -> None:
    assert sample.source is not None, (
        f"{sample}: put <!-- from examples/NAME.py --> on the line before the fence"
    )
    example = ROOT / sample.source
    assert example.is_file(), f"{sample}: no such example {sample.source}"
    assert sample.lines and any(sample.lines), f"{sample}: an empty sample"
    text = [line.rstrip() for line in example.read_text().splitlines()]
    size = len(sample.lines)
    starts = [i for i in range(len(text) - size + 1) if text[i : i + size] == sample.lines]
    assert starts, f"{sample}: these lines are not in {sample.source} as they stand"


TUTORIAL_PAGES = sorted((DOCS / "tutorial").glob("*.md"))
IMPORT = re.compile(r"(from \S+ )?import \S")


@pytest.mark.parametrize("page", TUTORIAL_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_tutorial_shows_the_imports_and_the_entry_point_of_each_example_it_quotes(
    page: Path,
) -> None:
    """A newcomer copies what the page shows: for every example a tutorial quotes, its
    samples together hold each import of the example's module and its whole
    ``if __name__ == "__main__":`` block (so ``trio.run(main)`` too)."""
    shown: dict[str, list[list[str]]] = {}
    for sample in samples(page):
        if sample.source is not None:
            shown.setdefault(sample.source, []).append(sample.lines)
    assert shown, f"{page.relative_to(ROOT)} quotes no example"
    for source, blocks in shown.items():
        text = [line.rstrip() for line in (ROOT / source).read_text().splitlines()]
        quoted = {line for block in blocks for line in block}
        imports = [line for line in text if IMPORT.match(line)]  # the module's, unindented
        missing = [line for line in imports if line not in quoted]
        assert imports and not missing, f"{page.relative_to(ROOT)}: {source}'s imports {missing}"
        start = text.index('if __name__ == "__main__":')
        entry = text[start:]
        while entry and not entry[-1]:
            entry.pop()
        assert any(
            block[i : i + len(entry)] == entry for block in blocks for i in range(len(block))
        ), f"{page.relative_to(ROOT)}: show {source}'s entry point whole: {entry}"


def test_markers_stand_only_before_python_samples() -> None:
    for page in sampled_pages():
        lines = page.read_text().splitlines()
        for index, line in enumerate(lines):
            if MARKER.fullmatch(line.strip()):
                following = lines[index + 1].strip() if index + 1 < len(lines) else ""
                opening = FENCE.fullmatch(following)
                assert opening is not None and opening.group(1) in PYTHON, (
                    f"{page.relative_to(ROOT)}:{index + 1}: a marker must precede a ```python block"
                )


def markdown_files() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def links(page: Path) -> list[str]:
    """The relative links of ``page`` (no URLs, no in-page anchors), without anchors."""
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.DOTALL)
    targets = [m.group(1) for m in LINK.finditer(text)]
    return [t.split("#")[0] for t in targets if "://" not in t and not t.startswith("#")]


@pytest.mark.parametrize("page", markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_links_between_pages_resolve(page: Path) -> None:
    broken = [t for t in links(page) if not (page.parent / t).exists()]
    assert not broken, f"{page.relative_to(ROOT)} links to missing files: {broken}"


def test_every_page_is_linked_from_the_index() -> None:
    index = DOCS / "index.md"
    linked = {(index.parent / t).resolve() for t in links(index)}
    pages = {p.resolve() for p in DOCS.rglob("*.md")} - {index.resolve()}
    assert not sorted(pages - linked), "pages the index does not link"


def test_the_readme_has_two_set_up_commands() -> None:
    """One installs and runs the demo, one installs the test extras and runs the tests."""
    readme = (ROOT / "README.md").read_text()
    commands = [
        line.strip() for line in readme.splitlines() if line.startswith("    python3 -m venv")
    ]
    assert len(commands) == 2, commands
    assert commands[0].endswith("trio-mcp demo")
    assert commands[1].endswith("python -m pytest")


def test_the_readme_layout_lists_every_public_module() -> None:
    readme = (ROOT / "README.md").read_text()
    listed = set(re.findall(r"^\| `(trio_mcp[\w.]*)` \|", readme, flags=re.MULTILINE))
    modules = {
        f"trio_mcp.{path.stem}"
        for path in (ROOT / "trio_mcp").glob("*.py")
        if not path.stem.startswith("_")
    }
    assert listed == {"trio_mcp"} | modules


def test_every_public_module_has_an_api_page() -> None:
    """The site's API reference covers each public module (and the nav lists each page)."""
    package = ROOT / "trio_mcp"
    public = {
        "trio_mcp" if p.name == "__init__.py" else p.stem
        for p in package.glob("*.py")
        if not p.name.startswith("_") or p.name == "__init__.py"
    } - {"pytest_plugin"}  # a pytest plugin, documented in the testing how-to
    pages = {p.stem for p in (DOCS / "reference" / "api").glob("*.md")}
    assert public == pages
    nav = (ROOT / "mkdocs.yml").read_text()
    for name in pages:
        assert f"reference/api/{name}.md" in nav, name
