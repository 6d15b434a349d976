"""Type hints as JSON Schema, and the strict readers that go with them (no I/O here)."""

from __future__ import annotations

import dataclasses
import enum
from typing import Annotated, Any, Literal, NotRequired, Optional, TypedDict

import attrs
import jsonschema
import pytest

from trio_mcp import Context
from trio_mcp._server._signature import Signature
from trio_mcp._server._typeschema import ValueInvalid, compile_type
from trio_mcp.server import Field, SchemaError


def schema_of(tp: Any) -> dict[str, Any]:
    defs: dict[str, Any] = {}
    schema, _ = compile_type(tp, defs)
    if defs:
        schema = {**schema, "$defs": defs}
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def read(tp: Any, value: Any) -> Any:
    return compile_type(tp)[1](value)


def agrees(tp: Any, value: Any) -> bool:
    """Whether the reader accepts ``value``, checked against jsonschema's verdict."""
    schema = schema_of(tp)
    by_schema = jsonschema.Draft202012Validator(schema).is_valid(value)
    try:
        read(tp, value)
        by_reader = True
    except ValueInvalid:
        by_reader = False
    assert by_reader == by_schema, (tp, value, schema)
    return by_reader


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@attrs.define
class Point:
    """A point in the plane."""

    x: float
    y: float = 0.0


@dataclasses.dataclass
class Box:
    corner: Point
    tags: list[str] = dataclasses.field(default_factory=list)


class Movie(TypedDict):
    title: str
    year: NotRequired[int]


@attrs.define
class Tree:
    value: int
    children: list[Tree] = attrs.Factory(list)


# -- scalars ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tp", "schema"),
    [
        (str, {"type": "string"}),
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (bool, {"type": "boolean"}),
        (None, {"type": "null"}),
        (type(None), {"type": "null"}),
        (Any, {}),
    ],
)
def test_scalar_schemas(tp: Any, schema: dict[str, Any]) -> None:
    assert schema_of(tp) == schema


def test_scalars_are_read_strictly() -> None:
    assert agrees(str, "a")
    assert not agrees(str, 1)
    assert agrees(int, 3)
    assert not agrees(int, "3")
    assert not agrees(int, True)  # a bool is not an integer on the wire
    assert not agrees(int, 1.5)
    assert agrees(float, 2)
    assert not agrees(float, True)
    assert agrees(bool, False)
    assert not agrees(bool, 0)
    assert agrees(None, None)
    assert not agrees(None, 0)


def test_integral_float_reads_as_int_and_int_as_float() -> None:
    assert read(int, 3.0) == 3
    assert type(read(int, 3.0)) is int
    assert type(read(float, 2)) is float


# -- literals, enums, unions -----------------------------------------------------------------


def test_literal() -> None:
    assert schema_of(Literal["a", "b"]) == {"type": "string", "enum": ["a", "b"]}
    assert schema_of(Literal[3]) == {"type": "integer", "const": 3}
    assert schema_of(Literal["a", 1]) == {"enum": ["a", 1]}
    assert agrees(Literal["a", "b"], "b")
    assert not agrees(Literal["a", "b"], "c")
    assert not agrees(Literal[1], True)  # True == 1 in Python, not on the wire


def test_enum_goes_to_defs_and_reads_members() -> None:
    assert schema_of(Color) == {
        "$ref": "#/$defs/Color",
        "$defs": {"Color": {"title": "Color", "enum": ["red", "green"]}},
    }
    assert read(Color, "red") is Color.RED
    assert read(Level, 2) is Level.HIGH
    assert agrees(Color, "green")
    assert not agrees(Color, "RED")


def test_optional_and_unions() -> None:
    assert schema_of(Optional[int]) == {"type": ["integer", "null"]}  # noqa: UP045
    assert schema_of(int | None) == {"type": ["integer", "null"]}
    assert schema_of(int | str) == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert agrees(int | None, None)
    assert agrees(int | str, "x")
    assert not agrees(int | str, 1.5)
    assert read(Color | None, "red") is Color.RED
    with pytest.raises(ValueInvalid, match="matches none"):
        read(int | str, [])


# -- containers ------------------------------------------------------------------------------


def test_lists_sets_tuples_dicts() -> None:
    assert schema_of(list[int]) == {"type": "array", "items": {"type": "integer"}}
    assert schema_of(set[str]) == {
        "type": "array",
        "items": {"type": "string"},
        "uniqueItems": True,
    }
    assert schema_of(tuple[int, str]) == {
        "type": "array",
        "prefixItems": [{"type": "integer"}, {"type": "string"}],
        "items": False,
        "minItems": 2,
        "maxItems": 2,
    }
    assert schema_of(tuple[int, ...]) == {"type": "array", "items": {"type": "integer"}}
    assert schema_of(dict[str, float]) == {
        "type": "object",
        "additionalProperties": {"type": "number"},
    }
    assert schema_of(dict) == {"type": "object", "additionalProperties": True}
    assert read(tuple[int, str], [1, "a"]) == (1, "a")
    assert read(tuple[int, ...], [1, 2]) == (1, 2)
    assert read(set[str], ["a", "a"]) == {"a"}
    assert agrees(list[int], [1, 2])
    assert not agrees(list[int], [1, "2"])
    assert not agrees(tuple[int, str], [1])
    assert not agrees(dict[str, int], {"a": "b"})


def test_errors_say_where() -> None:
    with pytest.raises(ValueInvalid) as info:
        read(list[dict[str, int]], [{"a": 1}, {"b": "x"}])
    assert str(info.value) == "[1].b: expected an integer, got str 'x'"


def test_non_string_dict_keys_are_refused() -> None:
    with pytest.raises(SchemaError):
        compile_type(dict[int, str])


# -- named object types ----------------------------------------------------------------------


def test_attrs_class() -> None:
    schema = schema_of(Point)
    assert schema["$defs"]["Point"] == {
        "type": "object",
        "title": "Point",
        "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
        "required": ["x"],
        "description": "A point in the plane.",
    }
    assert read(Point, {"x": 1, "y": 2}) == Point(1.0, 2.0)
    assert read(Point, {"x": 1}) == Point(1.0)
    assert not agrees(Point, {"y": 1})


def test_dataclass_nesting_and_default_factory() -> None:
    schema = schema_of(Box)
    assert schema["$defs"]["Box"]["required"] == ["corner"]
    assert schema["$defs"]["Box"]["properties"]["corner"] == {"$ref": "#/$defs/Point"}
    assert read(Box, {"corner": {"x": 0}}) == Box(Point(0.0))
    assert agrees(Box, {"corner": {"x": 0}, "tags": ["a"]})
    assert not agrees(Box, {"corner": {"x": "0"}})


def test_typeddict_required_and_not_required() -> None:
    schema = schema_of(Movie)
    assert schema["$defs"]["Movie"]["required"] == ["title"]
    assert read(Movie, {"title": "Up"}) == {"title": "Up"}
    assert read(Movie, {"title": "Up", "year": 2009}) == {"title": "Up", "year": 2009}
    assert not agrees(Movie, {"year": 2009})


def test_recursive_type() -> None:
    schema = schema_of(Tree)
    assert schema["$defs"]["Tree"]["properties"]["children"] == {
        "type": "array",
        "items": {"$ref": "#/$defs/Tree"},
    }
    tree = read(Tree, {"value": 1, "children": [{"value": 2}]})
    assert tree == Tree(1, [Tree(2)])
    assert agrees(Tree, {"value": 1, "children": [{"value": 2, "children": []}]})
    assert not agrees(Tree, {"value": 1, "children": [{"value": "2"}]})


def test_same_named_classes_get_distinct_defs() -> None:
    def make(field_type: type) -> type:
        @attrs.define
        class Item:
            value: Any

        Item.__annotations__["value"] = field_type
        return attrs.resolve_types(Item)

    def two(a: Any, b: Any) -> None:
        pass

    two.__annotations__ = {"a": make(int), "b": make(str), "return": None}

    signature = Signature.of(two, context_type=Context)
    schema = signature.input_schema
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid({"a": {"value": 1}, "b": {"value": "x"}})
    assert not validator.is_valid({"a": {"value": "x"}, "b": {"value": "x"}})
    assert not validator.is_valid({"a": {"value": 1}, "b": {"value": 1}})
    assert schema["properties"]["a"] != schema["properties"]["b"]


def test_unsupported_types_raise_schema_error() -> None:
    with pytest.raises(SchemaError):
        compile_type(bytes)
    with pytest.raises(SchemaError):
        compile_type(Literal[1.5])


# -- annotations and signatures --------------------------------------------------------------


def test_annotated_description_and_field() -> None:
    assert schema_of(Annotated[str, "The city"]) == {"type": "string", "description": "The city"}
    assert schema_of(
        Annotated[int, Field(description="Days", title="D", examples=[3], schema={"minimum": 1})]
    ) == {"type": "integer", "description": "Days", "title": "D", "examples": [3], "minimum": 1}


class Weighed(TypedDict):
    w: Annotated[float, Field(schema={"minimum": 0})]


def test_field_schema_constraints_are_enforced() -> None:
    weight = Annotated[float, Field(schema={"minimum": 0})]
    assert read(weight, 2) == 2.0
    with pytest.raises(ValueInvalid, match="-5 is less than the minimum of 0"):
        read(weight, -5)
    with pytest.raises(ValueInvalid, match="expected a number"):
        read(weight, "heavy")
    words = Annotated[list[str], Field(schema={"maxItems": 2, "items": {"pattern": "^[a-z]+$"}})]
    assert read(words, ["ab", "c"]) == ["ab", "c"]
    with pytest.raises(ValueInvalid, match="too long"):
        read(words, ["a", "b", "c"])
    with pytest.raises(ValueInvalid, match="does not match"):
        read(words, ["Ab"])
    with pytest.raises(ValueInvalid, match="w: -1 is less than the minimum of 0"):
        read(Weighed, {"w": -1})


def test_field_annotations_only_keep_the_plain_reader() -> None:
    """No per-call validation when the ``schema`` constrains nothing."""
    _, plain = compile_type(str)
    for extra in ({"x-mcp-header": "Region"}, {"format": "uri", "deprecated": True}):
        _, reader = compile_type(Annotated[str, Field(description="d", schema=extra)])
        assert reader is plain


def test_field_schema_must_be_a_valid_schema() -> None:
    with pytest.raises(ValueError, match="invalid JSON Schema"):
        compile_type(Annotated[int, Field(schema={"minimum": "zero"})])


def test_signature_schema_defaults_context_and_docstring() -> None:
    async def forecast(
        city: Annotated[str, "The city"],
        ctx: Context,
        days: int = 3,
        units: Literal["c", "f"] = "c",
        color: Color = Color.RED,
        note: str | None = None,
    ) -> str:
        """The forecast.

        Args:
            days: how many days
                ahead.
        """
        return ""

    signature = Signature.of(forecast, context_type=Context)
    assert signature.context_parameter == "ctx"
    assert signature.input_schema == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "The city"},
            "days": {"type": "integer", "description": "how many days ahead.", "default": 3},
            "units": {"type": "string", "enum": ["c", "f"], "default": "c"},
            "color": {"$ref": "#/$defs/Color", "default": "red"},
            "note": {"type": ["string", "null"], "default": None},
        },
        "required": ["city"],
        "$defs": {"Color": {"title": "Color", "enum": ["red", "green"]}},
    }
    jsonschema.Draft202012Validator.check_schema(signature.input_schema)
    assert signature.bind({"city": "Oslo", "color": "green"}) == {
        "city": "Oslo",
        "color": Color.GREEN,
    }
    with pytest.raises(ValueInvalid, match=r"^city: required argument missing"):
        signature.bind({})
    with pytest.raises(ValueInvalid, match=r"^days: expected an integer"):
        signature.bind({"city": "x", "days": "3"})


def test_signature_refuses_positional_only_and_star_args() -> None:
    def positional(a: int, /) -> None:
        pass

    def star(*args: int) -> None:
        pass

    with pytest.raises(SchemaError):
        Signature.of(positional, context_type=Context)
    with pytest.raises(SchemaError):
        Signature.of(star, context_type=Context)


def test_kwargs_accept_extra_arguments() -> None:
    def anything(a: int, **rest: Any) -> None:
        pass

    signature = Signature.of(anything, context_type=Context)
    assert signature.bind({"a": 1, "b": [2]}) == {"a": 1, "b": [2]}
