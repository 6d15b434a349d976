"""What the fuzzer draws for string arguments: Hypothesis' text strategy at full power
(long enough for the special values it draws whole), a dictionary of interesting
strings, and those inside arbitrary text; within the schema's bounds."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, find, given, settings, strategies as st

from trio_mcp._fuzz._strategies import INTERESTING_STRINGS, valid_values

TEXT_TOOL = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
}


def draw_many(schema: dict[str, Any], examples: int = 60, per_example: int = 10) -> list[Any]:
    """Values drawn as the state machine draws them: many per example, with a fixed seed."""
    seen: list[Any] = []

    @settings(
        max_examples=examples,
        database=None,
        derandomize=True,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(st.data())
    def draw(data: st.DataObject) -> None:
        for _ in range(per_example):
            seen.append(data.draw(valid_values(schema)))

    draw()
    return seen


def test_string_arguments_reach_long_interesting_and_embedded_values() -> None:
    texts = [value["text"] for value in draw_many(TEXT_TOOL)]
    # Longer than the 32 characters strings were once capped at (which hid the longer
    # special values Hypothesis draws whole).
    longer = find(
        valid_values(TEXT_TOOL),
        lambda value: len(value["text"]) > 32,
        settings=settings(database=None, derandomize=True, max_examples=5000, deadline=None),
    )
    assert len(longer["text"]) > 32
    # The dictionary, whole...
    assert {"{{7*7}}", "NaN", "\u2028"} & set(texts)
    assert len(set(texts) & set(INTERESTING_STRINGS)) >= 10
    # ...and inside arbitrary text: a bug that a substring triggers is reached too.
    embedded = [
        text
        for text in texts
        if text not in INTERESTING_STRINGS
        and any(len(word) > 2 and word in text for word in INTERESTING_STRINGS)
    ]
    assert len(embedded) >= 10, embedded
    # Two braces in a row, which arbitrary text practically never holds.
    assert any("{{" in text for text in texts)


def test_string_bounds_are_kept() -> None:
    schema = {
        "type": "object",
        "properties": {"code": {"type": "string", "minLength": 2, "maxLength": 5}},
        "required": ["code"],
    }
    codes = [value["code"] for value in draw_many(schema, examples=20)]
    assert all(2 <= len(code) <= 5 for code in codes)
    assert {"NaN", "CON"} & set(codes)  # the dictionary's entries that fit
    assert "xxxxx" in codes  # the longest allowed
