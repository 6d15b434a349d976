"""Hypothesis strategies for what the fuzzer sends: request ids, protocol versions, garbage,
and values for (and against) a tool's own ``inputSchema``.

The schema support covers what tool schemas use in practice: ``type`` (one or
several), ``properties``/``required``/``additionalProperties``, ``items``,
``enum``, ``const``, ``anyOf``/``oneOf``/``allOf``, local ``$ref`` and the
usual bounds. Anything else falls back to arbitrary JSON; when ``jsonschema``
is installed, "valid" values are filtered through the schema itself, so they
really are valid.

Strings (:func:`strings`) get the most care, since most tools take text: Hypothesis'
own text strategy over all of Unicode, long enough for the special values it favours
(its pool of strings that break code is drawn whole, so a length cap lower than theirs
hides them), a dictionary of strings that break servers in particular
(:data:`INTERESTING_STRINGS`), and those inside arbitrary text, for the bug a
substring triggers wherever it sits.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st

from . import _lazy

__all__ = [
    "GARBAGE_VERSIONS",
    "INTERESTING_STRINGS",
    "exotic_ids",
    "invalid_values",
    "json_values",
    "strings",
    "valid_values",
]

#: Protocol versions nobody speaks.
GARBAGE_VERSIONS = ("", "1.0.0", "v999.0.0", "2099-12-31", "1999-01-01", "2025-13-45", "latest")
_SAFE_INT = 2**53 - 1
_MAX_ITEMS = 4
_MAX_DEPTH = 6
#: The longest string drawn for a string without ``maxLength`` (and the most drawn for one
#: with): room for the longest special values Hypothesis draws whole.
_MAX_TEXT = 512
#: The arbitrary text around an interesting string that is drawn inside it.
_AROUND = 8

#: Strings that break servers: what a parser, a template engine, a shell, a path, a
#: database or a terminal treats specially, numbers that are not, and text that is hard
#: to encode, measure or display. Drawn whole and inside other text.
INTERESTING_STRINGS = (
    "",
    " ",
    "\t",
    "\n",
    "\r\n",
    "\u0000",
    "\u2028",
    "\u2029",
    "\ufeff",
    "\u200b",
    "\u202e",
    "0",
    "-1",
    "1e309",
    "NaN",
    "Infinity",
    "-0",
    "0x1F",
    "null",
    "None",
    "undefined",
    "true",
    "false",
    "[]",
    "{}",
    '{"a":1}',
    '"',
    "'",
    "\\",
    "`",
    "' OR '1'='1",
    "'; --",
    "$(id)",
    "; ls",
    "| cat",
    "{{7*7}}",
    "${7*7}",
    "#{7*7}",
    "<%= 7*7 %>",
    "%s%s%n",
    "%(x)s",
    "{0}",
    "<script>",
    "]]>",
    "../../../etc/passwd",
    "..\\..\\windows",
    "/",
    "~",
    "file:///etc/passwd",
    "http://127.0.0.1:1/",
    "*",
    "?",
    "%00",
    "%2e%2e%2f",
    "__proto__",
    "constructor",
    "CON",
    "é",
    "e\u0301",
    "ǅ",
    "ß",
    "İ",
    "☃",
    "😍",
    "👍🏽",
    "🇺🇸",
    "\U0001d55a",
    "مرحبا",
    "\x1b[2J",
    "\x7f",
)


def exotic_ids() -> st.SearchStrategy[str | int]:
    """Legal request ids of every kind: integers (negative, zero, large but JS-safe) and
    strings (empty, numeric-looking, unicode)."""
    return st.one_of(
        st.integers(min_value=-_SAFE_INT, max_value=_SAFE_INT),
        st.integers(min_value=0, max_value=10**6).map(str),
        st.text(max_size=16),
        st.sampled_from(["", "0", "01", "1e3", "null", "-1", " 1", "\U0001d55a\U0001d555", "a\nb"]),
    )


def strings(min_size: int = 0, max_size: int = _MAX_TEXT) -> st.SearchStrategy[str]:
    """Text from ``min_size`` to ``max_size`` characters: Hypothesis' own text strategy
    (all of Unicode but surrogates, and its bias towards special values), an
    :data:`INTERESTING_STRINGS` entry, or one inside arbitrary text."""
    max_size = max(max_size, min_size)
    fitting = [v for v in INTERESTING_STRINGS if min_size <= len(v) <= max_size]
    text = st.text(min_size=min_size, max_size=max_size)
    if not fitting:
        return text
    around = st.text(max_size=_AROUND)
    inside = st.tuples(around, st.sampled_from(fitting), around).map("".join)
    return st.one_of(
        text,
        st.sampled_from(fitting),
        inside.filter(lambda v: min_size <= len(v) <= max_size),
    )


def json_values(max_leaves: int = 8) -> st.SearchStrategy[Any]:
    """Arbitrary JSON (no NaN or infinities; integers JS-safe)."""
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-_SAFE_INT, max_value=_SAFE_INT),
        st.floats(allow_nan=False, allow_infinity=False),
        strings(max_size=64),
    )
    return st.recursive(
        scalars,
        lambda children: st.one_of(
            st.lists(children, max_size=3),
            st.dictionaries(st.text(max_size=8), children, max_size=3),
        ),
        max_leaves=max_leaves,
    )


def _resolve(schema: Any, root: Mapping[str, Any]) -> Any:
    seen = 0
    while isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str) and seen < 16:
        ref = schema["$ref"]
        if not ref.startswith("#/"):
            return {}
        node: Any = root
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, Mapping) or part not in node:
                return {}
            node = node[part]
        schema = node
        seen += 1
    return schema


def _types(schema: Mapping[str, Any]) -> list[str]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [k for k in kind if isinstance(k, str)]
    if "properties" in schema or "required" in schema:
        return ["object"]
    if "items" in schema:
        return ["array"]
    return []


def _number_bounds(schema: Mapping[str, Any]) -> tuple[float | None, float | None, bool, bool]:
    low = schema.get("minimum")
    high = schema.get("maximum")
    low_open = high_open = False
    exclusive_low = schema.get("exclusiveMinimum")
    exclusive_high = schema.get("exclusiveMaximum")
    if isinstance(exclusive_low, int | float) and not isinstance(exclusive_low, bool):
        low, low_open = exclusive_low, True
    if isinstance(exclusive_high, int | float) and not isinstance(exclusive_high, bool):
        high, high_open = exclusive_high, True
    low = low if isinstance(low, int | float) and not isinstance(low, bool) else None
    high = high if isinstance(high, int | float) and not isinstance(high, bool) else None
    return low, high, low_open, high_open


def _raw_values(schema: Any, root: Mapping[str, Any], depth: int) -> st.SearchStrategy[Any]:
    schema = _resolve(schema, root)
    if schema is True or schema == {} or not isinstance(schema, Mapping):
        return json_values(4) if schema is not False else st.nothing()
    if depth > _MAX_DEPTH:
        return st.none()
    if "const" in schema:
        return st.just(schema["const"])
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return st.sampled_from(schema["enum"])
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            merged = [
                {**{k: v for k, v in schema.items() if k != key}, **o}
                for o in options
                if isinstance(o, Mapping)
            ]
            if merged:
                return st.one_of([_raw_values(o, root, depth + 1) for o in merged])
    all_of = schema.get("allOf")
    if isinstance(all_of, list) and all_of:
        merged_schema: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        for part in all_of:
            part = _resolve(part, root)
            if isinstance(part, Mapping):
                for k, v in part.items():
                    if k == "properties" and isinstance(v, Mapping):
                        merged_schema["properties"] = {**merged_schema.get("properties", {}), **v}
                    elif k == "required" and isinstance(v, list):
                        merged_schema["required"] = [*merged_schema.get("required", []), *v]
                    else:
                        merged_schema.setdefault(k, v)
        return _raw_values(merged_schema, root, depth + 1)
    types = _types(schema)
    if not types:
        return json_values(4)
    return st.one_of([_typed(kind, schema, root, depth) for kind in types])


def _typed(kind: str, schema: Mapping[str, Any], root: Mapping[str, Any], depth: int) -> Any:
    if kind == "null":
        return st.none()
    if kind == "boolean":
        return st.booleans()
    if kind == "integer":
        low, high, low_open, high_open = _number_bounds(schema)
        lo = None if low is None else (math.floor(low) + 1 if low_open else math.ceil(low))
        hi = None if high is None else (math.ceil(high) - 1 if high_open else math.floor(high))
        lo = -_SAFE_INT if lo is None else max(lo, -_SAFE_INT)
        hi = _SAFE_INT if hi is None else min(hi, _SAFE_INT)
        if lo > hi:
            return st.nothing()
        int_edges = list(dict.fromkeys(v for v in (0, -1, 1, lo, hi) if lo <= v <= hi))
        # Zero first and often: it is where most integer bugs are.
        zero = [st.just(0)] if lo <= 0 <= hi else []
        return st.one_of(*zero, st.sampled_from(int_edges), st.integers(min_value=lo, max_value=hi))
    if kind == "number":
        low, high, low_open, high_open = _number_bounds(schema)
        candidates: list[float] = [0.0, 1.0, -1.0, 0.5, 1e9, -1e9]
        if low is not None and not low_open:
            candidates.append(float(low))
        if high is not None and not high_open:
            candidates.append(float(high))
        float_edges = [
            v
            for v in candidates
            if (low is None or v > low or (v == low and not low_open))
            and (high is None or v < high or (v == high and not high_open))
        ]
        floats = st.floats(
            min_value=low,
            max_value=high,
            exclude_min=low_open and low is not None,
            exclude_max=high_open and high is not None,
            allow_nan=False,
            allow_infinity=False,
        )
        return st.one_of(st.sampled_from(float_edges), floats) if float_edges else floats
    if kind == "string":
        pattern = schema.get("pattern")
        min_size = schema.get("minLength", 0) if isinstance(schema.get("minLength"), int) else 0
        max_size = schema.get("maxLength") if isinstance(schema.get("maxLength"), int) else None
        max_size = min(max_size, _MAX_TEXT) if max_size is not None else _MAX_TEXT
        if isinstance(pattern, str):
            try:
                return st.from_regex(pattern, fullmatch=False).filter(
                    lambda s: min_size <= len(s) <= max(max_size, min_size)
                )
            except Exception:  # noqa: BLE001 - an unsupported regex: ignore the pattern
                pass
        longest = max(max_size, min_size)
        text = strings(min_size, longest)
        return st.one_of(text, st.just("x" * longest)) if longest < _MAX_TEXT else text
    if kind == "array":
        items = schema.get("items", {})
        min_items = schema.get("minItems", 0) if isinstance(schema.get("minItems"), int) else 0
        max_items = schema.get("maxItems") if isinstance(schema.get("maxItems"), int) else None
        max_items = min(max_items if max_items is not None else _MAX_ITEMS, _MAX_ITEMS + min_items)
        return st.lists(
            _raw_values(items, root, depth + 1),
            min_size=min_items,
            max_size=max(max_items, min_items),
            unique=bool(schema.get("uniqueItems")),
        )
    if kind == "object":
        properties = schema.get("properties") or {}
        required = [r for r in schema.get("required") or () if isinstance(r, str)]
        fixed = {name: _raw_values(properties.get(name, {}), root, depth + 1) for name in required}
        optional = {
            name: _raw_values(sub, root, depth + 1)
            for name, sub in properties.items()
            if name not in fixed
        }
        return st.fixed_dictionaries(fixed, optional=optional)
    return json_values(4)


def _validator(schema: Mapping[str, Any]) -> Any:
    try:
        jsonschema = _lazy.jsonschema
    except ImportError:
        return None
    try:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        return cls(schema)
    except Exception:  # noqa: BLE001 - an unusable schema: no filtering
        return None


def valid_values(schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    """Values that satisfy ``schema`` (filtered through it when ``jsonschema`` is here)."""
    strategy = _raw_values(schema, schema, 0)
    validator = _validator(schema)
    if validator is not None:
        strategy = strategy.filter(validator.is_valid)
    return strategy


def _wrong_type(value: Any) -> st.SearchStrategy[Any]:
    options: list[Any] = [None, True, 0, -1.5, "", "not a number", [], {}, [1, "a"], {"x": 1}]
    return st.sampled_from([o for o in options if type(o) is not type(value)])


def invalid_values(schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    """Values that break ``schema`` (an object schema, as a tool's ``inputSchema`` is): a
    required property missing, a property of the wrong type or out of range, an unknown
    property where none is allowed, or not an object at all. When ``jsonschema`` is here
    they are checked to really be invalid."""
    root = schema
    properties = schema.get("properties") or {}
    required = [r for r in schema.get("required") or () if isinstance(r, str)]
    base = _raw_values(schema, root, 0)
    mutations: list[st.SearchStrategy[Any]] = []
    if required:
        mutations.append(
            st.tuples(base, st.sampled_from(required)).map(
                lambda pair: (
                    {k: v for k, v in pair[0].items() if k != pair[1]}
                    if isinstance(pair[0], dict)
                    else {}
                )
            )
        )
    if isinstance(properties, Mapping) and properties:
        names = sorted(properties)

        def retype(pair: tuple[Any, str]) -> st.SearchStrategy[Any]:
            value, name = pair
            if not isinstance(value, dict):
                return st.just({})
            current = value.get(name)
            return _wrong_type(current).map(lambda bad: {**value, name: bad})

        mutations.append(st.tuples(base, st.sampled_from(names)).flatmap(retype))
        bounded = [
            name
            for name in names
            if isinstance(_resolve(properties[name], root), Mapping)
            and any(
                k in _resolve(properties[name], root)
                for k in ("minimum", "maximum", "enum", "maxLength", "minLength")
            )
        ]
        if bounded:

            def out_of_range(pair: tuple[Any, str]) -> Any:
                value, name = pair
                sub = _resolve(properties[name], root)
                if "maximum" in sub and isinstance(sub["maximum"], int | float):
                    bad: Any = sub["maximum"] + 1
                elif "minimum" in sub and isinstance(sub["minimum"], int | float):
                    bad = sub["minimum"] - 1
                elif "enum" in sub:
                    bad = "not-one-of-the-enum-values"
                elif "maxLength" in sub and isinstance(sub["maxLength"], int):
                    bad = "x" * (sub["maxLength"] + 1)
                else:
                    bad = ""
                return {**value, name: bad} if isinstance(value, dict) else {name: bad}

            mutations.append(st.tuples(base, st.sampled_from(bounded)).map(out_of_range))
    if schema.get("additionalProperties") is False:
        mutations.append(
            base.map(
                lambda v: {**v, "unexpected_property_x": 1} if isinstance(v, dict) else {"u": 1}
            )
        )
    mutations.append(st.sampled_from([[], [1, 2], "arguments", 42]))
    strategy = st.one_of(mutations)
    validator = _validator(schema)
    if validator is not None:
        strategy = strategy.filter(lambda v: not validator.is_valid(v))
    return strategy
