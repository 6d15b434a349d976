"""The CLI's pieces that need no server: KEY=VALUE tool arguments typed by the tool's
schema, the connection options, and how progress and log messages are shown."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest

from trio_mcp._cli._arguments import parse_pairs, typed_arguments
from trio_mcp._cli._errors import CliError
from trio_mcp._cli._report import Reporter
from trio_mcp._cli._target import parse_env, parse_headers
from trio_mcp.types import LoggingMessageNotificationParams, ProgressNotificationParams, Tool

TOOL = Tool(
    name="t",
    input_schema={
        "type": "object",
        "properties": {
            "n": {"type": "integer"},
            "x": {"type": "number"},
            "s": {"type": "string"},
            "flag": {"type": "boolean"},
            "obj": {"type": "object"},
            "items": {"type": "array", "items": {"type": "string"}},
            "maybe": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "either": {"type": ["integer", "string"]},
            "color": {"enum": ["red", "green"]},
            "answer": {"const": 42},
            "anything": {},
        },
        "required": ["n"],
    },
)


@pytest.mark.parametrize(
    ("pair", "value"),
    [
        ("n=3", 3),
        ("n=-12", -12),
        ("x=3", 3),
        ("x=2.5", 2.5),
        ("x=1e3", 1000.0),
        ("s=3", "3"),  # a string stays a string, whatever it looks like
        ("s=", ""),
        ("s=a=b", "a=b"),
        ("s={not json", "{not json"),
        ("flag=true", True),
        ("flag=false", False),
        ('obj={"a": [1, 2]}', {"a": [1, 2]}),
        ('items=["a", "b"]', ["a", "b"]),
        ("maybe=7", 7),
        ("maybe=null", None),
        ("either=7", 7),
        ("either=seven", "seven"),
        ("color=green", "green"),
        ("answer=42", 42),
        ("anything=[1]", [1]),  # no type: JSON if it is JSON...
        ("anything=hello", "hello"),  # ...else a string
    ],
)
def test_a_value_is_typed_by_the_schema_of_its_parameter(pair: str, value: Any) -> None:
    typed = typed_arguments(TOOL, parse_pairs([pair]))
    assert typed == {pair.partition("=")[0]: value}
    assert type(next(iter(typed.values()))) is type(value)


@pytest.mark.parametrize(
    ("pair", "message"),
    [
        ("n=3.5", "n='3.5': tool t expects an integer for n"),
        ("n=three", "n='three': tool t expects an integer for n"),
        ("x=nan", "expects a number for x"),
        ("flag=yes", "expects a boolean for flag"),
        ("obj=[1]", "expects an object for obj"),
        ("obj={bad", "expects an object for obj"),
        ("items={}", "expects an array for items"),
        ("maybe=x", "expects an integer or a null for maybe"),
        ("color=blue", "tool t takes one of red, green for color"),
        ("nope=1", "tool t has no parameter 'nope' (it takes n, x, s, flag"),
    ],
)
def test_a_value_that_fits_no_allowed_type_is_a_clear_error(pair: str, message: str) -> None:
    with pytest.raises(CliError, match=re.escape(message)):
        typed_arguments(TOOL, parse_pairs([pair]))


def test_keys_the_schema_allows_beyond_its_properties() -> None:
    open_tool = Tool(
        name="o",
        input_schema={
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "additionalProperties": {"type": "integer"},
        },
    )
    assert typed_arguments(open_tool, {"a": "1", "b": "2"}) == {"a": "1", "b": 2}
    bare = Tool(name="b", input_schema={"type": "object"})
    assert typed_arguments(bare, {"k": "5", "w": "word"}) == {"k": 5, "w": "word"}


@pytest.mark.parametrize(
    ("pairs", "message"),
    [
        (["novalue"], "a tool argument is KEY=VALUE, not 'novalue'"),
        (["=3"], "a tool argument is KEY=VALUE, not '=3'"),
        (["n=1", "n=2"], "argument 'n' is given twice"),
    ],
)
def test_malformed_pairs(pairs: list[str], message: str) -> None:
    with pytest.raises(CliError, match=re.escape(message)):
        parse_pairs(pairs)
    with pytest.raises(CliError, match="--context is KEY=VALUE, not 'x'"):
        parse_pairs(["x"], "--context")


def test_env_and_header_options_parse() -> None:
    assert parse_env(["A=1", "B=x=y", "EMPTY="]) == {"A": "1", "B": "x=y", "EMPTY": ""}
    assert parse_headers(["Authorization: Bearer abc", "X-Key:v"]) == {
        "Authorization": "Bearer abc",
        "X-Key": "v",
    }
    with pytest.raises(CliError, match="--env expects NAME=VALUE, not 'A'"):
        parse_env(["A"])
    with pytest.raises(CliError, match="--header expects 'NAME: VALUE', not 'X-Key'"):
        parse_headers(["X-Key"])
    with pytest.raises(CliError, match="--header expects"):
        parse_headers(["Bad Name: v"])


def progress(amount: float, total: float | None = None, message: str | None = None) -> Any:
    return ProgressNotificationParams(
        progress_token=1, progress=amount, total=total, message=message
    )


def log(data: Any, logger: str | None = None, level: str = "info") -> Any:
    return LoggingMessageNotificationParams(level=level, data=data, logger=logger)


def test_without_a_terminal_progress_and_logs_are_plain_lines() -> None:
    out = io.StringIO()
    reporter = Reporter(out, terminal=False)
    reporter.log(log("starting", "job"))
    reporter.progress(progress(1, 2, "half"))
    reporter.progress(progress(2.0, 2.0))
    reporter.progress(progress(0.5))
    reporter.log(log({"k": 1}))
    reporter.finish()
    assert out.getvalue() == (
        '[info] job: starting\nprogress 1/2 half\nprogress 2/2\nprogress 0.5\n[info] {"k":1}\n'
    )


def test_on_a_terminal_progress_is_a_bar_redrawn_in_place() -> None:
    out = io.StringIO()
    reporter = Reporter(out, terminal=True)
    reporter.progress(progress(1, 4))
    reporter.log(log("note"))
    reporter.progress(progress(4, 4, "done"))
    reporter.finish()
    text = out.getvalue()
    quarter = "[" + "#" * 6 + "-" * 18 + "] 1/4"
    assert text == (
        f"\r\x1b[K{quarter}"
        f"\r\x1b[K[info] note\n{quarter}"  # the log line above, the bar drawn again
        f"\r\x1b[K[{'#' * 24}] 4/4 done"
        "\n"
    )


def test_log_messages_below_the_level_asked_for_are_not_shown() -> None:
    out = io.StringIO()
    reporter = Reporter(out, terminal=False, log_level="warning")
    for level in ("debug", "info", "warning", "emergency"):
        reporter.log(log(level, level=level))
    assert out.getvalue() == "[warning] warning\n[emergency] emergency\n"
