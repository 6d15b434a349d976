"""A handler function's parameters: their JSON Schema, and binding JSON arguments to them."""

from __future__ import annotations

import enum
import inspect
import re
from collections.abc import Callable, Mapping
from typing import Any, get_type_hints

import attrs

from ._typeschema import Reader, SchemaError, ValueInvalid, compile_type

__all__ = ["Parameter", "Signature", "docstring_summary"]

_NO_DEFAULT = inspect.Parameter.empty


@attrs.frozen
class Parameter:
    name: str
    schema: dict[str, Any]
    reader: Reader
    required: bool
    default: Any


@attrs.frozen
class Signature:
    """What a handler takes: JSON parameters (described by ``input_schema``), and the name
    of the parameter that receives the :class:`Context`, if any."""

    parameters: tuple[Parameter, ...]
    context_parameter: str | None
    input_schema: dict[str, Any]
    accepts_extra: bool

    @classmethod
    def of(cls, fn: Callable[..., Any], *, context_type: type, typed: bool = True) -> Signature:
        """Inspect ``fn``.

        With ``typed=False`` (a tool whose input schema is given verbatim, so the
        hints describe nothing on the wire) parameters whose hints have no JSON
        Schema form are taken as they come instead of refused.

        Raises:
            SchemaError: a parameter cannot be described in JSON Schema, or is
                positional-only / ``*args``.
        """
        try:
            hints = get_type_hints(fn, include_extras=True)
        except Exception as exc:
            raise SchemaError(f"cannot read the type hints of {fn!r}: {exc}") from exc
        descriptions = _docstring_args(inspect.getdoc(fn) or "")
        defs: dict[str, Any] = {}
        parameters = []
        context_parameter = None
        accepts_extra = False
        properties: dict[str, Any] = {}
        required: list[str] = []
        for param in inspect.signature(fn).parameters.values():
            hint = hints.get(param.name, Any)
            if _is_context(hint, context_type):
                context_parameter = param.name
                continue
            if param.kind is inspect.Parameter.VAR_KEYWORD:
                accepts_extra = True
                continue
            if param.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.VAR_POSITIONAL):
                raise SchemaError(f"{fn.__name__}: parameter {param.name!r} must be nameable")
            try:
                schema, reader = compile_type(hint, defs)
            except SchemaError as exc:
                if not typed:
                    schema, reader = {}, _as_given
                else:
                    raise SchemaError(f"{fn.__name__}: parameter {param.name!r}: {exc}") from None
            schema = dict(schema)
            if "description" not in schema and param.name in descriptions:
                schema["description"] = descriptions[param.name]
            is_required = param.default is _NO_DEFAULT
            default = _as_json(param.default) if not is_required else _NOT_JSON
            if default is not _NOT_JSON:
                schema["default"] = default
            properties[param.name] = schema
            if is_required:
                required.append(param.name)
            parameters.append(Parameter(param.name, schema, reader, is_required, param.default))
        input_schema: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            input_schema["required"] = required
        if defs:
            input_schema["$defs"] = defs
        return cls(tuple(parameters), context_parameter, input_schema, accepts_extra)

    def bind(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """Check and convert JSON ``arguments`` into keyword arguments for the handler.

        Raises:
            ValueInvalid: an argument is missing or does not fit its type.
        """
        arguments = arguments or {}
        kwargs: dict[str, Any] = {}
        for param in self.parameters:
            if param.name in arguments:
                try:
                    kwargs[param.name] = param.reader(arguments[param.name])
                except ValueInvalid as exc:
                    raise exc.at(param.name) from None
            elif param.required:
                raise ValueInvalid("required argument missing", (param.name,))
        if self.accepts_extra:
            known = {p.name for p in self.parameters}
            kwargs.update((k, v) for k, v in arguments.items() if k not in known)
        return kwargs


def _as_given(value: Any) -> Any:
    return value


def _is_context(hint: Any, context_type: type) -> bool:
    return isinstance(hint, type) and issubclass(hint, context_type)


_NOT_JSON = object()


def _as_json(value: Any) -> Any:
    """A default value as JSON for the schema (enum members as their values), or
    ``_NOT_JSON`` for a default with no JSON form (it is then left out of the schema)."""
    if isinstance(value, enum.Enum):
        value = value.value
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, (list, tuple)):
        items = [_as_json(v) for v in value]
        return _NOT_JSON if any(i is _NOT_JSON for i in items) else items
    return _NOT_JSON


_ARGS_HEADER = re.compile(r"^(Args|Arguments|Parameters):\s*$")
_ARG_LINE = re.compile(r"^(\w+)(?:\s*\([^)]*\))?\s*:\s*(.*)$")


def _docstring_args(doc: str) -> dict[str, str]:
    """Parameter descriptions from a Google-style ``Args:`` section."""
    found: dict[str, str] = {}
    lines = doc.splitlines()
    inside = False
    current: str | None = None
    indent: int | None = None
    for line in lines:
        if _ARGS_HEADER.match(line.strip()):
            inside, current, indent = True, None, None
            continue
        if not inside:
            continue
        if not line.strip():
            current = None
            continue
        this_indent = len(line) - len(line.lstrip())
        if this_indent == 0:
            inside = False
            continue
        if indent is None:
            indent = this_indent
        match = _ARG_LINE.match(line.strip())
        if this_indent == indent and match:
            current = match.group(1)
            found[current] = match.group(2).strip()
        elif current is not None:
            found[current] = (found[current] + " " + line.strip()).strip()
    return found


def docstring_summary(fn: Callable[..., Any]) -> str | None:
    """The first paragraph of ``fn``'s docstring (without the ``Args:`` section)."""
    doc = inspect.getdoc(fn)
    if not doc:
        return None
    paragraphs = []
    for paragraph in doc.split("\n\n"):
        if _ARGS_HEADER.match(paragraph.strip().splitlines()[0]) or paragraph.strip().startswith(
            ("Returns:", "Raises:", "Yields:")
        ):
            break
        paragraphs.append(" ".join(line.strip() for line in paragraph.splitlines()))
    return "\n\n".join(paragraphs) or None
