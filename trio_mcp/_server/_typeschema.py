"""Python type hints as JSON Schema, and readers that check and convert JSON values to them.

One walk over a type hint yields both: the schema a client sees, and a
*reader*, a small function compiled once per parameter that validates a
decoded JSON value and converts it (a list to a tuple, a string to an Enum
member, an object to an attrs instance or a TypedDict). Reading is strict
(a string is never made from a number) and fast: the echo tool's one string
parameter costs one ``type()`` check per call.

Supported: ``str``, ``int``, ``float``, ``bool``, ``None``, ``Any``,
``Literal``, ``Enum``, ``X | Y`` / ``Optional``, ``list``, ``tuple`` (fixed and
variadic), ``dict[str, X]``, ``set``/``frozenset``, ``TypedDict`` (with
``Required``/``NotRequired``), attrs classes, dataclasses, and
``Annotated[X, "description"]`` (or :class:`Field`) for descriptions and
constraints.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

import attrs

from .._jsonschema import SchemaValidator

__all__ = ["Field", "Reader", "SchemaError", "ValueInvalid", "compile_type"]

Reader = Callable[[Any], Any]
_MISSING = object()


class SchemaError(TypeError):
    """A type hint we cannot express as JSON Schema (raised when a tool is registered)."""


class ValueInvalid(ValueError):
    """A JSON value does not fit the type; ``path`` says where."""

    def __init__(self, message: str, path: tuple[str | int, ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.path = path

    def at(self, step: str | int) -> ValueInvalid:
        return ValueInvalid(self.message, (step, *self.path))

    def __str__(self) -> str:
        if not self.path:
            return self.message
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in self.path)
        return f"{where.lstrip('.')}: {self.message}"


@attrs.frozen
class Field:
    """Per-parameter metadata for ``Annotated[T, Field(...)]``.

    ``description`` and ``title`` go into the schema; ``examples`` too;
    ``schema`` (a dict) is merged over the generated schema, for
    constraints such as ``{"minimum": 0}`` or ``{"pattern": "^[a-z]+$"}``.
    Those constraints are enforced: after the type check, the JSON value is
    validated against ``schema`` with the ``jsonschema`` library (compiled
    once, when the tool is registered), so a handler never sees a value its
    advertised schema forbids (a ``$ref`` in it resolves within ``schema``
    only). A ``schema`` of annotations only
    (``format``, ``default``, ``deprecated``, ``x-...`` extensions) costs
    nothing per call.
    """

    description: str | None = None
    title: str | None = None
    examples: list[Any] | None = None
    schema: Mapping[str, Any] | None = None


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    return f"{type(value).__name__} {value!r:.40}"


def compile_type(tp: Any, defs: dict[str, Any] | None = None) -> tuple[dict[str, Any], Reader]:
    """The JSON Schema of ``tp`` and a reader for it.

    Named composite types (attrs classes, dataclasses, TypedDicts, Enums)
    are put in ``defs`` (a ``$defs`` dict the caller places at the root) and
    referenced with ``$ref``, so recursive types work.

    Raises:
        SchemaError: ``tp`` has no JSON Schema form.
    """
    return _Compiler(defs if defs is not None else {}).compile(tp)


class _Compiler:
    def __init__(self, defs: dict[str, Any]) -> None:
        self.defs = defs
        self.readers: dict[Any, Reader] = {}
        #: The ``$defs`` key of each named type compiled so far.
        self.names: dict[type, str] = {}

    def compile(self, tp: Any) -> tuple[dict[str, Any], Reader]:
        origin = get_origin(tp)
        if origin is typing.Annotated:
            base, *extras = get_args(tp)
            schema, reader = self.compile(base)
            schema = dict(schema)
            for extra in extras:
                if isinstance(extra, str):
                    schema["description"] = extra
                elif isinstance(extra, Field):
                    if extra.description is not None:
                        schema["description"] = extra.description
                    if extra.title is not None:
                        schema["title"] = extra.title
                    if extra.examples is not None:
                        schema["examples"] = list(extra.examples)
                    if extra.schema:
                        schema.update(extra.schema)
                        reader = _constrained(reader, extra.schema)
            return schema, reader
        if tp is Any or tp is object:
            return {}, _identity
        if tp is None or tp is type(None):
            return {"type": "null"}, _read_none
        if tp is str:
            return {"type": "string"}, _read_str
        if tp is bool:
            return {"type": "boolean"}, _read_bool
        if tp is int:
            return {"type": "integer"}, _read_int
        if tp is float:
            return {"type": "number"}, _read_float
        if origin is Literal:
            return self._literal(get_args(tp))
        if origin in (Union, types.UnionType):
            return self._union(get_args(tp))
        if origin in (list, Sequence, typing.Sequence) or tp in (list, Sequence):
            return self._list(get_args(tp)[0] if get_args(tp) else Any, list)
        if origin in (set, frozenset) or tp in (set, frozenset):
            schema, reader = self._list(get_args(tp)[0] if get_args(tp) else Any, origin or tp)
            return {**schema, "uniqueItems": True}, reader
        if origin is tuple or tp is tuple:
            return self._tuple(get_args(tp))
        if origin in (dict, Mapping, typing.Mapping) or tp in (dict, Mapping):
            args = get_args(tp)
            if args and args[0] is not str:
                raise SchemaError(f"{tp}: JSON object keys are strings; use dict[str, ...]")
            return self._dict(args[1] if args else Any)
        if isinstance(tp, type):
            if issubclass(tp, enum.Enum):
                return self._enum(tp)
            if attrs.has(tp):
                return self._named(tp, self._attrs_class)
            if dataclasses.is_dataclass(tp):
                return self._named(tp, self._dataclass)
            if typing.is_typeddict(tp):
                return self._named(tp, self._typeddict)
        raise SchemaError(f"no JSON Schema for type {tp!r}")

    # -- scalars and combinators ------------------------------------------------------------

    def _literal(self, values: tuple[Any, ...]) -> tuple[dict[str, Any], Reader]:
        allowed = list(values)
        for value in allowed:
            if not isinstance(value, (str, int, bool)) and value is not None:
                raise SchemaError(f"Literal values must be str, int, bool or None, not {value!r}")
        schema: dict[str, Any] = {"const": allowed[0]} if len(allowed) == 1 else {"enum": allowed}
        kinds = {_json_type(v) for v in allowed}
        if len(kinds) == 1:
            schema = {"type": kinds.pop(), **schema}
        # bool is an int in Python: compare type and value, so True never matches 1.
        keys = {(type(v), v) for v in allowed}

        def read(value: Any) -> Any:
            if (type(value), value) in keys:
                return value
            raise ValueInvalid(f"expected one of {allowed!r}, got {_describe(value)}")

        return schema, read

    def _union(self, members: tuple[Any, ...]) -> tuple[dict[str, Any], Reader]:
        compiled = [self.compile(m) for m in members]
        nullable = any(m is type(None) for m in members)
        others = [c for m, c in zip(members, compiled, strict=True) if m is not type(None)]
        if nullable and len(others) == 1:
            schema, inner = others[0]
            if set(schema) == {"type"} and isinstance(schema["type"], str):
                nullable_schema: dict[str, Any] = {"type": [schema["type"], "null"]}
            else:
                nullable_schema = {"anyOf": [schema, {"type": "null"}]}

            def read_optional(value: Any) -> Any:
                return None if value is None else inner(value)

            return nullable_schema, read_optional
        readers = [r for _, r in compiled]

        def read_union(value: Any) -> Any:
            problems = []
            for reader in readers:
                try:
                    return reader(value)
                except ValueInvalid as exc:
                    problems.append(str(exc))
            raise ValueInvalid(f"matches none of the allowed types ({'; '.join(problems)})")

        return {"anyOf": [s for s, _ in compiled]}, read_union

    def _list(self, item_type: Any, container: Any) -> tuple[dict[str, Any], Reader]:
        item_schema, read_item = self.compile(item_type)
        build = list if container in (list, Sequence, typing.Sequence) else container

        def read(value: Any) -> Any:
            if type(value) is not list:
                raise ValueInvalid(f"expected an array, got {_describe(value)}")
            out = []
            for index, item in enumerate(value):
                try:
                    out.append(read_item(item))
                except ValueInvalid as exc:
                    raise exc.at(index) from None
            return out if build is list else build(out)

        return {"type": "array", "items": item_schema}, read

    def _tuple(self, args: tuple[Any, ...]) -> tuple[dict[str, Any], Reader]:
        if not args or (len(args) == 2 and args[1] is Ellipsis):
            schema, read_list = self._list(args[0] if args else Any, list)
            return schema, lambda value: tuple(read_list(value))
        compiled = [self.compile(a) for a in args]
        readers = [r for _, r in compiled]
        count = len(readers)

        def read(value: Any) -> tuple[Any, ...]:
            if type(value) is not list or len(value) != count:
                raise ValueInvalid(f"expected an array of {count} items, got {_describe(value)}")
            out = []
            for index, (reader, item) in enumerate(zip(readers, value, strict=True)):
                try:
                    out.append(reader(item))
                except ValueInvalid as exc:
                    raise exc.at(index) from None
            return tuple(out)

        schema = {
            "type": "array",
            "prefixItems": [s for s, _ in compiled],
            "items": False,
            "minItems": count,
            "maxItems": count,
        }
        return schema, read

    def _dict(self, value_type: Any) -> tuple[dict[str, Any], Reader]:
        value_schema, read_value = self.compile(value_type)
        if read_value is _identity:
            return {"type": "object", "additionalProperties": value_schema or True}, _read_object

        def read(value: Any) -> dict[str, Any]:
            if type(value) is not dict:
                raise ValueInvalid(f"expected an object, got {_describe(value)}")
            out = {}
            for key, item in value.items():
                try:
                    out[key] = read_value(item)
                except ValueInvalid as exc:
                    raise exc.at(key) from None
            return out

        return {"type": "object", "additionalProperties": value_schema}, read

    def _enum(self, cls: type[enum.Enum]) -> tuple[dict[str, Any], Reader]:
        values = [member.value for member in cls]
        for value in values:
            if not isinstance(value, (str, int)) or isinstance(value, bool):
                raise SchemaError(f"{cls.__name__}: enum values must be str or int")
        by_value = {(_wire_type(m.value), m.value): m for m in cls}
        name = self._def_name(cls)
        self.defs.setdefault(name, {"title": cls.__name__, "enum": values})

        def read(value: Any) -> enum.Enum:
            member = by_value.get((type(value), value))
            if member is None:
                raise ValueInvalid(f"expected one of {values!r}, got {_describe(value)}")
            return member

        return {"$ref": f"#/$defs/{name}"}, read

    # -- named object types -----------------------------------------------------------------

    def _def_name(self, cls: type) -> str:
        """The ``$defs`` key for ``cls``: its name, made unique if another class of the same
        name is already there (two ``Item`` classes from different modules)."""
        name = self.names.get(cls)
        if name is None:
            taken = set(self.names.values()) | set(self.defs)
            name = cls.__name__
            suffix = 2
            while name in taken:
                name = f"{cls.__name__}{suffix}"
                suffix += 1
            self.names[cls] = name
        return name

    def _named(
        self, cls: type, build: Callable[[type], tuple[dict[str, Any], Reader]]
    ) -> tuple[dict[str, Any], Reader]:
        if cls in self.readers:
            return {"$ref": f"#/$defs/{self._def_name(cls)}"}, self.readers[cls]
        name = self._def_name(cls)
        ref = {"$ref": f"#/$defs/{name}"}
        cell: list[Reader] = []
        self.readers[cls] = lambda value: cell[0](value)  # resolves recursion
        self.defs[name] = {}  # reserve the name
        schema, reader = build(cls)
        self.defs[name] = schema
        cell.append(reader)
        self.readers[cls] = reader
        return ref, reader

    def _object(
        self,
        cls: type,
        fields: list[tuple[str, Any, bool]],
        make: Callable[[dict[str, Any]], Any],
    ) -> tuple[dict[str, Any], Reader]:
        """Fields as (name, type hint, required)."""
        properties: dict[str, Any] = {}
        readers: list[tuple[str, Reader, bool]] = []
        for name, hint, required in fields:
            schema, reader = self.compile(hint)
            properties[name] = schema
            readers.append((name, reader, required))
        required_names = [name for name, _, required in fields if required]
        schema_out: dict[str, Any] = {
            "type": "object",
            "title": cls.__name__,
            "properties": properties,
        }
        if required_names:
            schema_out["required"] = required_names
        if cls.__doc__ and not cls.__doc__.startswith(f"{cls.__name__}("):
            schema_out["description"] = cls.__doc__.strip().split("\n\n")[0]

        def read(value: Any) -> Any:
            if type(value) is not dict:
                raise ValueInvalid(f"expected an object, got {_describe(value)}")
            kwargs = {}
            for name, reader, required in readers:
                item = value.get(name, _MISSING)
                if item is _MISSING:
                    if required:
                        raise ValueInvalid("required property missing").at(name)
                    continue
                try:
                    kwargs[name] = reader(item)
                except ValueInvalid as exc:
                    raise exc.at(name) from None
            return make(kwargs)

        return schema_out, read

    def _attrs_class(self, cls: type) -> tuple[dict[str, Any], Reader]:
        hints = get_type_hints(cls, include_extras=True)
        fields = [
            (f.alias or f.name, hints.get(f.name, Any), f.default is attrs.NOTHING)
            for f in attrs.fields(cls)
            if f.init
        ]
        return self._object(cls, fields, lambda kwargs: cls(**kwargs))

    def _dataclass(self, cls: type) -> tuple[dict[str, Any], Reader]:
        hints = get_type_hints(cls, include_extras=True)
        fields = [
            (
                f.name,
                hints.get(f.name, Any),
                f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING,
            )
            for f in dataclasses.fields(cls)
            if f.init
        ]
        return self._object(cls, fields, lambda kwargs: cls(**kwargs))

    def _typeddict(self, cls: type) -> tuple[dict[str, Any], Reader]:
        hints = get_type_hints(cls, include_extras=True)
        required_keys: frozenset[str] = getattr(cls, "__required_keys__", frozenset(hints))
        fields = [
            (name, _strip_required(hint), _is_required(hint, name in required_keys))
            for name, hint in hints.items()
        ]
        return self._object(cls, fields, dict)


#: Keywords that only annotate (2020-12 annotation vocabularies; ``format`` is an annotation
#: unless a validator is told to assert it): a ``Field.schema`` of these checks nothing.
_ANNOTATION_KEYWORDS = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "format",
        "contentEncoding",
        "contentMediaType",
        "contentSchema",
        "$comment",
    }
)


def _constrained(reader: Reader, constraints: Mapping[str, Any]) -> Reader:
    """``reader`` followed by validating the JSON value against ``constraints`` (a
    :class:`Field` ``schema``), unless those are annotations only.

    Raises:
        ValueError: (now) ``constraints`` is not a valid JSON Schema.
    """
    if all(key in _ANNOTATION_KEYWORDS or key.startswith("x-") for key in constraints):
        return reader

    validator = SchemaValidator(constraints)

    def read(value: Any) -> Any:
        converted = reader(value)
        problems = validator.errors(value)
        if problems:
            raise ValueInvalid("; ".join(problems))
        return converted

    return read


def _is_required(hint: Any, default: bool) -> bool:
    """Whether a TypedDict key is required. ``Required``/``NotRequired`` are read from the
    resolved hint: with ``from __future__ import annotations`` the class's own
    ``__required_keys__`` cannot see them (the annotations were strings)."""
    origin = get_origin(hint)
    if origin is typing.Annotated:
        return _is_required(get_args(hint)[0], default)
    if origin is typing.NotRequired:
        return False
    if origin is typing.Required:
        return True
    return default


def _strip_required(hint: Any) -> Any:
    origin = get_origin(hint)
    if origin is typing.Annotated:
        base, *extras = get_args(hint)
        stripped = _strip_required(base)
        return hint if stripped is base else typing.Annotated[(stripped, *extras)]
    if origin in (typing.Required, typing.NotRequired):
        return get_args(hint)[0]
    return hint


def _wire_type(value: Any) -> type:
    """The type a value has once it went through JSON (an ``IntEnum`` value is an int)."""
    if isinstance(value, bool):
        return bool
    if isinstance(value, int):
        return int
    return str


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return "string"


def _identity(value: Any) -> Any:
    return value


def _read_none(value: Any) -> None:
    if value is not None:
        raise ValueInvalid(f"expected null, got {_describe(value)}")


def _read_str(value: Any) -> str:
    if type(value) is str:
        return value
    raise ValueInvalid(f"expected a string, got {_describe(value)}")


def _read_bool(value: Any) -> bool:
    if type(value) is bool:
        return value
    raise ValueInvalid(f"expected a boolean, got {_describe(value)}")


def _read_int(value: Any) -> int:
    if type(value) is int:
        return value
    if type(value) is float and value.is_integer():
        return int(value)
    raise ValueInvalid(f"expected an integer, got {_describe(value)}")


def _read_float(value: Any) -> float:
    if type(value) is float:
        return value
    if type(value) is int:
        return float(value)
    raise ValueInvalid(f"expected a number, got {_describe(value)}")


def _read_object(value: Any) -> dict[str, Any]:
    if type(value) is dict:
        return value
    raise ValueInvalid(f"expected an object, got {_describe(value)}")
