"""The one cattrs converter (orjson preconf) and its per-revision writers.

Reading (``structure``) is the same for every revision and strict about JSON
types: a string is never silently made from a number, a list never from a
string. Unknown keys are ignored, so newer peers are tolerated.

Writing (``unstructure``) is per revision: attributes a class marks with
``__since__``/``__until__`` are left out for a peer on a revision that does
not have them, so newer features never reach an older peer.

Unions on the wire are told apart by a dict lookup on their tag (``type``,
``method``, ``mode``) rather than by trying each member in turn.
"""

from __future__ import annotations

import functools
import importlib
import sys
import types
import typing
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any, Final, Literal, TypeAlias, TypeVar, get_args, get_origin

import attrs
from cattrs import Converter, transform_error
from cattrs.errors import ClassValidationError, ForbiddenExtraKeysError
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override
from cattrs.preconf.orjson import make_converter

from . import _base

T = TypeVar("T")
Hook: TypeAlias = Callable[[Any, Any], Any]

#: The modules that define models (by name: building the converter imports none of them).
MODEL_MODULES: Final = tuple(
    f"{__package__}.{name}"
    for name in (
        "_base",
        "_capabilities",
        "_completion",
        "_content",
        "_elicitation",
        "_inputs",
        "_lifecycle",
        "_meta",
        "_mrtr",
        "_notifications",
        "_prompts",
        "_resources",
        "_roots",
        "_sampling",
        "_subscriptions",
        "_tasks",
        "_tools",
    )
)

__all__ = [
    "StructureError",
    "converter",
    "converter_for",
    "explain",
    "structure",
    "structure_hook",
    "unstructure",
    "unstructure_hook",
    "wire_name",
]


class StructureError(ValueError):
    """A value did not match the model it was read as; ``str()`` says where and why."""


# --- Names on the wire ----------------------------------------------------------------------


def _merged(cls: type, attr: str) -> Mapping[str, Any]:
    merged: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        merged.update(klass.__dict__.get(attr, {}))
    return merged


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def wire_name(cls: type, attribute: str) -> str:
    """The JSON key of ``cls.attribute`` on the wire."""
    if attribute == "meta":
        return "_meta"
    return _merged(cls, "__wire_names__").get(attribute) or _camel(attribute)


def _present_in(cls: type, attribute: str, version: str | None) -> bool:
    if version is None:
        return True
    since = _merged(cls, "__since__").get(attribute)
    until = _merged(cls, "__until__").get(attribute)
    return (since is None or version >= since) and (until is None or version <= until)


# --- Strict primitives ----------------------------------------------------------------------


def _expect(kind: str, value: object) -> StructureError:
    return StructureError(f"expected {kind}, got {type(value).__name__} {value!r:.60}")


def _structure_str(value: object, _: object) -> str:
    if type(value) is str:
        return value
    raise _expect("a string", value)


def _structure_int(value: object, _: object) -> int:
    if type(value) is int:
        return value
    if type(value) is float and value.is_integer():
        return int(value)
    raise _expect("an integer", value)


def _structure_float(value: object, _: object) -> float:
    if type(value) is float or type(value) is int:
        return value
    raise _expect("a number", value)


def _structure_bool(value: object, _: object) -> bool:
    if type(value) is bool:
        return value
    raise _expect("a boolean", value)


def _structure_any(value: object, _: object) -> Any:
    return value


def _structure_json_object(value: object, _: object) -> dict[str, Any]:
    if type(value) is dict:
        return value
    raise _expect("an object", value)


def _structure_request_id(value: object, _: object) -> str | int:
    if type(value) is str or type(value) is int:
        return value
    raise _expect("a string or an integer", value)


def _structure_elicited_value(value: object, _: object) -> object:
    if type(value) in (str, int, float, bool):
        return value
    if type(value) is list and all(type(item) is str for item in value):
        return value
    raise _expect("a string, number, boolean or list of strings", value)


# --- Tagged unions --------------------------------------------------------------------------


def _lazy(conv: Converter, tp: Any) -> Callable[[Any, Any], Any]:
    """``tp``'s structure hook, looked up on first use: building the converter stays cheap
    (programs pay for the models they read, when they first read them)."""
    found: list[Callable[[Any, Any], Any]] = []

    def structure(value: Any, _: Any) -> Any:
        if not found:
            found.append(conv.get_structure_hook(tp))
        return found[0](value, tp)

    return structure


def _tagged(
    conv: Converter, key: str, members: Mapping[str, type], default: type | None = None
) -> Callable[[Any, Any], Any]:
    table = {tag: _lazy(conv, member) for tag, member in members.items()}
    fallback = _lazy(conv, default) if default is not None else None
    expected = ", ".join(sorted(members))

    def structure(value: Any, _: Any) -> Any:
        if type(value) is not dict:
            raise _expect("an object", value)
        hook = table.get(value.get(key))  # type: ignore[arg-type]
        if hook is None:
            if fallback is None or key in value:
                raise StructureError(
                    f"unknown {key} {value.get(key)!r}; expected one of {expected}"
                )
            hook = fallback
        return hook(value, None)

    return structure


def _by_type_tag(*members: type) -> dict[str, type]:
    return {str(attrs.fields_dict(m)["type"].default): m for m in members}


def _resource_contents(conv: Converter, content: ModuleType) -> Hook:
    text = _lazy(conv, content.TextResourceContents)
    blob = _lazy(conv, content.BlobResourceContents)

    def structure(value: Any, _: Any) -> Any:
        if type(value) is not dict:
            raise _expect("an object", value)
        if "text" in value:
            return text(value, None)
        if "blob" in value:
            return blob(value, None)
        raise StructureError("resource contents need either 'text' or 'blob'")

    return structure


def _input_response(conv: Converter, inputs: ModuleType) -> Hook:
    elicit = _lazy(conv, inputs.ElicitResult)
    roots = _lazy(conv, inputs.ListRootsResult)
    sample = _lazy(conv, inputs.CreateMessageResult)

    def structure(value: Any, _: Any) -> Any:
        if type(value) is not dict:
            raise _expect("an object", value)
        if "action" in value:
            return elicit(value, None)
        if "roots" in value:
            return roots(value, None)
        return sample(value, None)

    return structure


def _primitive_schema(conv: Converter, e: ModuleType) -> Hook:
    hooks: dict[type, Hook] = {
        cls: _lazy(conv, cls)
        for cls in (
            e.StringSchema,
            e.NumberSchema,
            e.BooleanSchema,
            e.UntitledSingleSelectEnumSchema,
            e.TitledSingleSelectEnumSchema,
            e.LegacyTitledEnumSchema,
            e.UntitledMultiSelectEnumSchema,
            e.TitledMultiSelectEnumSchema,
        )
    }

    def pick(value: dict[str, Any]) -> Any:
        kind = value.get("type")
        if kind == "array":
            items = value.get("items")
            return (
                e.TitledMultiSelectEnumSchema
                if isinstance(items, dict) and "anyOf" in items
                else e.UntitledMultiSelectEnumSchema
            )
        if kind in ("number", "integer"):
            return e.NumberSchema
        if kind == "boolean":
            return e.BooleanSchema
        if "oneOf" in value:
            return e.TitledSingleSelectEnumSchema
        if "enumNames" in value:
            return e.LegacyTitledEnumSchema
        if "enum" in value:
            return e.UntitledSingleSelectEnumSchema
        return e.StringSchema

    def structure(value: Any, _: Any) -> Any:
        if type(value) is not dict:
            raise _expect("an object", value)
        return hooks[pick(value)](value, None)

    return structure


def _content_or_list(conv: Converter, block: Any) -> Callable[[Any, Any], Any]:
    one = _lazy(conv, block)
    many = _lazy(conv, list[block])

    def structure(value: Any, _: Any) -> Any:
        return many(value, None) if type(value) is list else one(value, None)

    return structure


# --- attrs classes ---------------------------------------------------------------------------


def _structure_factory(conv: Converter) -> Callable[[type], Callable[[Any, Any], Any]]:
    """Reading a model. Each class's hook is built once: cattrs does not keep the hooks it
    builds for the models a model holds, and would build them again wherever they appear
    (start-up time)."""

    @functools.cache
    def factory(cls: type) -> Callable[[Any, Any], Any]:
        _resolve(cls)
        overrides = {a.name: override(rename=wire_name(cls, a.name)) for a in attrs.fields(cls)}
        inner: Callable[[Any, Any], Any] = make_dict_structure_fn(cls, conv, **overrides)  # type: ignore[arg-type]
        name = cls.__name__

        def structure(value: Any, _: Any) -> Any:
            if type(value) is not dict:
                raise _expect(f"an object ({name})", value)
            return inner(value, cls)

        return structure

    return factory


def _unstructure_overrides(cls: type, version: str | None) -> dict[str, Any]:
    overrides: dict[str, Any] = {}
    for a in attrs.fields(cls):
        if not _present_in(cls, a.name, version):
            overrides[a.name] = override(omit=True)
        else:
            overrides[a.name] = override(
                rename=wire_name(cls, a.name),
                omit_if_default=a.default is None or bool(a.metadata.get(_base.OMIT_IF_DEFAULT)),
            )
    return overrides


def _unstructure_factory(
    conv: Converter, version: str | None
) -> Callable[[type], Callable[[Any], Any]]:
    """Writing a model for ``version``; each class's hook is built once (as for reading)."""

    @functools.cache
    def factory(cls: type) -> Callable[[Any], Any]:
        _resolve(cls)
        overrides = _unstructure_overrides(cls, version)
        inner: Callable[[Any], dict[str, Any]] = make_dict_unstructure_fn(cls, conv, **overrides)
        fill = _wire_defaults(cls, version)
        if not fill:
            return inner

        def unstructure(value: Any) -> dict[str, Any]:
            out = inner(value)
            for key, default in fill.items():
                if key not in out:
                    out[key] = default
            return out

        return unstructure

    return factory


def _wire_defaults(cls: type, version: str | None) -> dict[str, Any]:
    """What ``version`` gets for the attributes it requires when they are ``None``."""
    if version is None:
        return {}
    return {
        wire_name(cls, name): value
        for name, value in _merged(cls, "__wire_defaults__").items()
        if _present_in(cls, name, version)
    }


# --- Results whose fields are open-ended ------------------------------------------------------


def _payload_structure(conv: Converter, payload: type) -> Hook:
    """``tasks/result``: every key but ``_meta`` and ``resultType`` belongs to ``extra``."""
    built: list[tuple[set[str], Hook]] = []

    def build() -> tuple[set[str], Hook]:
        _resolve(payload)
        fields = attrs.fields(payload)
        known = {wire_name(payload, a.name) for a in fields if a.name != "extra"}
        overrides: dict[str, Any] = {
            a.name: override(rename=wire_name(payload, a.name)) for a in fields
        }
        overrides["extra"] = override(omit=True)
        return known, make_dict_structure_fn(payload, conv, **overrides)

    def structure(value: Any, _: Any) -> Any:
        if type(value) is not dict:
            raise _expect(f"an object ({payload.__name__})", value)
        if not built:
            built.append(build())
        known, inner = built[0]
        base = inner(value, payload)
        extra = {k: v for k, v in value.items() if k not in known}
        return attrs.evolve(base, extra=extra) if extra else base

    return structure


def _payload_unstructure(
    conv: Converter, version: str | None, payload: type
) -> Callable[[Any], Any]:
    """``tasks/result``: ``extra`` is written at the top level, beside ``_meta``."""
    built: list[Callable[[Any], dict[str, Any]]] = []

    def unstructure(value: Any) -> dict[str, Any]:
        if not built:
            _resolve(payload)
            overrides = _unstructure_overrides(payload, version)
            overrides["extra"] = override(omit=True)
            built.append(make_dict_unstructure_fn(payload, conv, **overrides))
        out = dict(value.extra) if value.extra else {}
        out.update(built[0](value))
        return out

    return unstructure


def _is_list(tp: Any) -> bool:
    return get_origin(tp) is list


def _strict_list_factory(conv: Converter) -> Callable[[Any], Callable[[Any, Any], Any]]:
    def factory(tp: Any) -> Callable[[Any, Any], Any]:
        (item_type,) = get_args(tp) or (Any,)
        item = conv.get_structure_hook(item_type)

        def structure(value: Any, _: Any) -> list[Any]:
            if type(value) is not list:
                raise _expect("an array", value)
            return [item(v, item_type) for v in value]

        return structure

    return factory


def _is_str_dict(tp: Any) -> bool:
    return get_origin(tp) is dict and get_args(tp)[:1] == (str,)


def _strict_dict_factory(conv: Converter) -> Callable[[Any], Callable[[Any, Any], Any]]:
    def factory(tp: Any) -> Callable[[Any, Any], Any]:
        value_type = get_args(tp)[1]
        if value_type is Any:
            return _structure_json_object
        item = conv.get_structure_hook(value_type)

        def structure(value: Any, _: Any) -> dict[str, Any]:
            if type(value) is not dict:
                raise _expect("an object", value)
            return {k: item(v, value_type) for k, v in value.items()}

        return structure

    return factory


def _is_optional(tp: Any) -> bool:
    args = get_args(tp)
    return (
        get_origin(tp) in (typing.Union, types.UnionType) and len(args) == 2 and type(None) in args
    )


def _optional_factory(conv: Converter) -> Callable[[Any], Callable[[Any, Any], Any]]:
    """``X | None`` with ``X``'s hook resolved once (cattrs would dispatch on every call).

    The hook of a model (or list of models) is looked up when the first value comes: a
    model's hook then builds hooks only for the models its values hold
    (``capabilities: {}`` builds none of the capability models'), which is start-up
    time."""

    def factory(tp: Any) -> Callable[[Any, Any], Any]:
        inner = _optional_of(tp)
        hook = _lazy(conv, inner) if _holds_models(inner) else conv.get_structure_hook(inner)

        def structure(value: Any, _: Any) -> Any:
            return None if value is None else hook(value, inner)

        return structure

    return factory


def _optional_of(tp: Any) -> Any:
    """``X`` of ``X | None``."""
    (inner,) = [arg for arg in get_args(tp) if arg is not type(None)]
    return inner


def _holds_models(tp: Any) -> bool:
    """A model or a list of models."""
    return attrs.has(tp) or (_is_list(tp) and attrs.has((get_args(tp) or (None,))[0]))


def _is_optional_model(tp: Any) -> bool:
    """``X | None`` where ``X`` is a model or a list of models."""
    return _is_optional(tp) and _holds_models(_optional_of(tp))


def _optional_unstructure_factory(conv: Converter) -> Callable[[Any], Callable[[Any], Any]]:
    """Writing ``X | None`` (a model, or a list of them): ``X``'s hook is looked up when the
    first value comes, so writing a model builds hooks only for the models it holds
    (start-up time: a server's capabilities hold few)."""

    def factory(tp: Any) -> Callable[[Any], Any]:
        inner = _optional_of(tp)
        found: list[Callable[[Any], Any]] = []

        def unstructure(value: Any) -> Any:
            if value is None:
                return None
            if not found:
                found.append(conv.get_unstructure_hook(inner))
            return found[0](value)

        return unstructure

    return factory


def _resolve(cls: type) -> None:
    """Turn ``cls``'s string annotations into types (once; attrs remembers).

    They are read in the model's own module; a module that leaves names of its annotations
    unimported to stay cheap to import (:mod:`._mrtr` and the input unions) is read with
    every model module in scope.

    attrs marks a resolved class by storing the class itself: a subclass sees its base's
    mark through inheritance, so only ``is cls`` means this class is done."""
    if getattr(cls, "__attrs_types_resolved__", None) is not cls:
        try:
            attrs.resolve_types(cls)
        except NameError:
            attrs.resolve_types(cls, globalns=_namespace())


@functools.cache
def _namespace() -> dict[str, Any]:
    ns: dict[str, Any] = {}
    for module in MODEL_MODULES:
        ns.update(vars(importlib.import_module(module)))
    return ns


# --- Hooks for the types of one topic module ---------------------------------------------------


def _when_met(
    conv: Converter,
    module: str,
    type_in: Callable[[ModuleType], Any],
    hook: Callable[[ModuleType], Any],
    *,
    unstructure: bool = False,
) -> None:
    """Give the type ``type_in(module)`` the (structure or unstructure) hook ``hook(module)``,
    without importing ``module``.

    Building the converter imports no topic module (start-up time: a program pays for the
    models it uses). A type from a module nobody imported cannot reach the converter, so
    the type is looked up only once its module is loaded, and the hook built when the
    converter first meets the type."""
    name = f"{__package__}.{module}"
    found: list[Any] = []

    def matches(tp: Any) -> bool:
        if not found:
            try:
                found.append(type_in(sys.modules[name]))
            except (KeyError, AttributeError):  # not imported (or still being imported)
                return False
        return bool(tp == found[0])

    def factory(_: Any) -> Any:
        return hook(sys.modules[name])

    if unstructure:
        conv.register_unstructure_hook_factory(matches, factory)
    else:
        conv.register_structure_hook_factory(matches, factory)


def _one_or_list(tp: Any) -> Any:
    return tp | list[tp]


def _register_topic_hooks(conv: Converter) -> None:
    """The tagged unions, told apart by a dict lookup on their tag, and ``tasks/result``."""
    _when_met(
        conv,
        "_content",
        lambda c: c.ContentBlock,
        lambda c: _tagged(
            conv,
            "type",
            _by_type_tag(
                c.TextContent, c.ImageContent, c.AudioContent, c.ResourceLink, c.EmbeddedResource
            ),
        ),
    )
    _when_met(
        conv,
        "_content",
        lambda c: c.SamplingMessageContentBlock,
        lambda c: _tagged(
            conv,
            "type",
            _by_type_tag(
                c.TextContent,
                c.ImageContent,
                c.AudioContent,
                c.ToolUseContent,
                c.ToolResultContent,
            ),
        ),
    )
    _when_met(
        conv,
        "_content",
        lambda c: _one_or_list(c.SamplingMessageContentBlock),
        lambda c: _content_or_list(conv, c.SamplingMessageContentBlock),
    )
    _when_met(
        conv, "_content", lambda c: c.AnyResourceContents, lambda c: _resource_contents(conv, c)
    )
    _when_met(
        conv,
        "_completion",
        lambda co: co.PromptReference | co.ResourceTemplateReference,
        lambda co: _tagged(
            conv, "type", _by_type_tag(co.PromptReference, co.ResourceTemplateReference)
        ),
    )
    _when_met(
        conv,
        "_elicitation",
        lambda e: e.ElicitRequestParams,
        lambda e: _tagged(
            conv,
            "mode",
            {"form": e.ElicitRequestFormParams, "url": e.ElicitRequestURLParams},
            default=e.ElicitRequestFormParams,
        ),
    )
    _when_met(
        conv,
        "_elicitation",
        lambda e: e.PrimitiveSchemaDefinition,
        lambda e: _primitive_schema(conv, e),
    )
    _when_met(
        conv,
        "_inputs",
        lambda i: i.InputRequest,
        lambda i: _tagged(
            conv,
            "method",
            {
                "sampling/createMessage": i.CreateMessageRequest,
                "roots/list": i.ListRootsRequest,
                "elicitation/create": i.ElicitRequest,
            },
        ),
    )
    _when_met(conv, "_inputs", lambda i: i.InputResponse, lambda i: _input_response(conv, i))
    _when_met(
        conv,
        "_tasks",
        lambda t: t.GetTaskPayloadResult,
        lambda t: _payload_structure(conv, t.GetTaskPayloadResult),
    )


def _register_writers(conv: Converter, version: str | None) -> None:
    """The hooks that write for a peer on ``version`` (``None``: every attribute). Each
    :func:`converter_for` copy registers its own: copied ones write as the converter they
    were made for."""
    conv.register_unstructure_hook_factory(attrs.has, _unstructure_factory(conv, version))
    conv.register_unstructure_hook_factory(_is_optional_model, _optional_unstructure_factory(conv))
    _when_met(
        conv,
        "_tasks",
        lambda t: t.GetTaskPayloadResult,
        lambda t: _payload_unstructure(conv, version, t.GetTaskPayloadResult),
        unstructure=True,
    )


def _build(*, detailed: bool) -> Converter:
    conv = make_converter(detailed_validation=detailed, prefer_attrib_converters=False)
    conv.register_structure_hook(str, _structure_str)
    conv.register_structure_hook(int, _structure_int)
    conv.register_structure_hook(float, _structure_float)
    conv.register_structure_hook(bool, _structure_bool)
    conv.register_structure_hook(typing.Any, _structure_any)
    conv.register_structure_hook(_base.RequestId, _structure_request_id)
    conv.register_structure_hook(str | int | float | bool | list[str], _structure_elicited_value)
    conv.register_structure_hook_factory(_is_optional, _optional_factory(conv))
    conv.register_structure_hook_factory(_is_list, _strict_list_factory(conv))
    conv.register_structure_hook_factory(_is_str_dict, _strict_dict_factory(conv))
    conv.register_structure_hook_factory(attrs.has, _structure_factory(conv))
    _register_topic_hooks(conv)
    _register_writers(conv, None)
    return conv


#: Reads any model; writes every attribute (no revision filtering).
converter: Converter = _build(detailed=False)
#: The same, collecting where each error is: built on the first failure it explains.
_explainers: list[Converter] = []


def _explainer() -> Converter:
    if not _explainers:
        _explainers.append(_build(detailed=True))
    return _explainers[0]


@functools.cache
def converter_for(version: str) -> Converter:
    """The converter that writes for a peer on ``version`` (reading is the same)."""
    conv = converter.copy()
    _register_writers(conv, version)
    return conv


def structure_hook(cls: Any) -> Callable[[Any, Any], Any]:
    """The fast structure function for ``cls`` (call it as ``hook(value, cls)``).

    It raises whatever it raises on bad input; use :func:`explain` for a
    message. Hot paths use this to skip the converter's dispatch.
    """
    hook = _hooks.get(cls)
    if hook is None:
        hook = _hooks[cls] = converter.get_structure_hook(cls)
    return hook


_hooks: dict[Any, Callable[[Any, Any], Any]] = {}


def structure(value: object, cls: type[T]) -> T:
    """Read ``value`` (decoded JSON) as ``cls``.

    Raises:
        StructureError: the value does not fit; the message names the place.
    """
    try:
        return converter.structure(value, cls)
    except Exception as exc:
        raise StructureError(explain(value, cls)) from exc


def explain(value: object, cls: type[object]) -> str:
    """Why ``value`` does not structure as ``cls``: each problem with its JSON path."""
    try:
        _explainer().structure(value, cls)
    except ClassValidationError as exc:
        return "; ".join(transform_error(exc, format_exception=_format))
    except Exception as exc:  # noqa: BLE001 - any failure is explained
        return _format(exc, cls)
    return f"value does not fit {getattr(cls, '__name__', cls)}"


def _format(exc: BaseException, type_: Any) -> str:
    if isinstance(exc, KeyError):
        return "required field missing"
    if isinstance(exc, StructureError):
        return str(exc)
    if isinstance(exc, ForbiddenExtraKeysError):
        return f"unexpected fields {sorted(exc.extra_fields)}"
    name = getattr(type_, "__name__", None) or str(type_)
    return f"invalid value, expected {name}: {exc}"


def unstructure_hook(version: str, cls: type) -> Callable[[Any], Any]:
    """The function that writes ``cls`` for a peer on ``version`` (cached: hot paths skip the
    converter's dispatch)."""
    key = (version, cls)
    hook = _unstructure_hooks.get(key)
    if hook is None:
        hook = _unstructure_hooks[key] = converter_for(version).get_unstructure_hook(cls)
    return hook


_unstructure_hooks: dict[tuple[str, type], Callable[[Any], Any]] = {}


def unstructure(value: Any, version: str | None = None) -> Any:
    """Write a model as plain JSON data for a peer on ``version`` (all fields if ``None``)."""
    conv = converter if version is None else converter_for(version)
    return conv.unstructure(value)


_ = Literal  # re-exported typing helpers keep mypy quiet about unused imports
