"""Hypothesis strategies for every wire model in :mod:`trio_mcp.types`.

:func:`strategy_for` builds a strategy for any model (or union of models, such as
``types.ContentBlock``) from its attributes, with the meaning the spec gives them
where the type alone says too little: URIs look like URIs, ``data`` is base64,
priorities lie in ``[0, 1]``, a tool's ``inputSchema`` is an object schema, an
elicitation's ``requestedSchema`` is built from the primitive schemas, ``_meta``
keys are well formed, and the reserved ones carry what the spec says they carry.

Pass ``version`` to get what a peer on that revision may send: attributes the
revision lacks stay at their default (so writing with
``converter_for(version)`` and reading back gives the same instance),
attributes it requires are always there, and values it cannot carry are not
generated. Without ``version`` you get everything the models allow.

Sizes are kept small (lists of at most three items, short strings) so that
property tests stay fast.

Aliases of plain JSON (``types.InputResponses``, ``types.JSONObject``) are just
``dict[str, Any]`` to Python, so :func:`strategy_for` gives plain JSON objects for
them; use :func:`input_responses` to build the former.
"""

from __future__ import annotations

import base64
import datetime
import functools
import string
import types
from collections.abc import Callable, Mapping
from typing import Any, Literal, Union, get_args, get_origin

import attrs

try:
    from hypothesis import strategies as st
except ImportError as exc:
    raise ImportError(
        "trio_mcp.testing needs Hypothesis (for its strategies): pip install 'trio-mcp[testing]'"
    ) from exc

from .._errors import ErrorCode
from .._types import (
    _base,
    _capabilities,
    _completion,
    _content,
    _elicitation,
    _inputs,
    _mrtr,
    _notifications,
    _resources,
    _roots,
    _sampling,
    _subscriptions,
    _tasks,
    _tools,
)
from .._types._converter import _merged, _present_in, _resolve, converter, converter_for
from .._versions import FIRST_MODERN_VERSION, SUPPORTED_VERSIONS

__all__ = [
    "content_blocks",
    "elicitation_schemas",
    "input_requests",
    "input_responses",
    "json_objects",
    "json_values",
    "meta_objects",
    "primitive_schemas",
    "progress_tokens",
    "protocol_versions",
    "request_ids",
    "resource_contents",
    "sampling_content_blocks",
    "strategy_for",
    "uris",
]

SearchStrategy = st.SearchStrategy

#: The most items any generated list or object has.
MAX_ITEMS = 3
_FIRST_MULTI_CONTENT = "2025-11-25"  # sampling tool use, list content, multi-select enums
_NoneType = type(None)

# --- Plain JSON ----------------------------------------------------------------------------


@functools.cache
def _short_text() -> SearchStrategy[str]:
    return st.text(max_size=8)


@functools.cache
def _keys() -> SearchStrategy[str]:
    return st.text(max_size=5)


@functools.cache
def _ints() -> SearchStrategy[int]:
    return st.integers(min_value=-(2**53), max_value=2**53)


@functools.cache
def _counts() -> SearchStrategy[int]:
    return st.integers(min_value=0, max_value=2**31 - 1)


@functools.cache
def _floats() -> SearchStrategy[float]:
    return st.floats(min_value=-1e9, max_value=1e9, allow_nan=False, allow_infinity=False)


@functools.cache
def json_values(*, floats: bool = True, null: bool = True) -> SearchStrategy[Any]:
    """Small JSON values: strings, integers, booleans, and arrays and objects of them.

    Args:
        floats: include non-integral numbers.
        null: include ``null`` (``None``).

    The 2026-07-28 schema's ``JSONValue`` (capabilities, ``metadata``) has neither
    non-integral numbers nor ``null``; ``floats=False, null=False`` stays inside it.
    """
    leaves: list[SearchStrategy[Any]] = [st.booleans(), _ints(), _short_text()]
    if floats:
        leaves.append(_floats())
    if null:
        leaves.append(st.none())
    # Two levels of nesting, built by hand: ``st.recursive`` is several times slower to draw.
    value: SearchStrategy[Any] = st.one_of(leaves)
    for _ in range(2):
        value = st.one_of(
            *leaves,
            st.lists(value, max_size=MAX_ITEMS),
            st.dictionaries(_keys(), value, max_size=MAX_ITEMS),
        )
    return value


@functools.cache
def json_objects(*, floats: bool = True, null: bool = True) -> SearchStrategy[dict[str, Any]]:
    """Small JSON objects (see :func:`json_values` for the options)."""
    return st.dictionaries(_keys(), json_values(floats=floats, null=null), max_size=MAX_ITEMS)


@functools.cache
def _portable_objects() -> SearchStrategy[dict[str, Any]]:
    return json_objects(floats=False, null=False)


@functools.cache
def request_ids() -> SearchStrategy[str | int]:
    """JSON-RPC request ids as MCP allows them: strings or integers, never ``null``."""
    return st.one_of(_ints(), st.text(max_size=10))


@functools.cache
def progress_tokens() -> SearchStrategy[str | int]:
    """Progress tokens: strings or integers."""
    return request_ids()


@functools.cache
def protocol_versions() -> SearchStrategy[str]:
    """The protocol revisions this library speaks."""
    return st.sampled_from(SUPPORTED_VERSIONS)


_SEGMENT = st.text(alphabet=string.ascii_lowercase + string.digits + "-_.", max_size=8)


@functools.cache
def uris() -> SearchStrategy[str]:
    """Absolute URIs of the kinds MCP servers use (``file:``, ``https:``, custom schemes)."""
    return st.builds(
        "{}{}".format,
        st.sampled_from(["file:///", "https://example.com/", "mem://", "note://x/"]),
        _SEGMENT,
    )


@functools.cache
def _urls() -> SearchStrategy[str]:
    return st.builds("https://example.com/{}".format, _SEGMENT)


@functools.cache
def _file_uris() -> SearchStrategy[str]:
    return st.builds("file:///{}".format, _SEGMENT)


@functools.cache
def _uri_templates() -> SearchStrategy[str]:
    return st.builds(
        "{}{}{{{}}}".format,
        st.sampled_from(["file:///", "https://example.com/", "mem://"]),
        _SEGMENT,
        st.sampled_from(["path", "id", "name"]),
    )


@functools.cache
def _base64() -> SearchStrategy[str]:
    return st.binary(max_size=12).map(lambda data: base64.b64encode(data).decode("ascii"))


@functools.cache
def _mime_types() -> SearchStrategy[str]:
    return st.sampled_from(
        ["text/plain", "application/json", "image/png", "audio/wav", "application/octet-stream"]
    )


@functools.cache
def _timestamps() -> SearchStrategy[str]:
    return st.datetimes(
        min_value=datetime.datetime(2000, 1, 1), max_value=datetime.datetime(2100, 1, 1)
    ).map(lambda moment: moment.strftime("%Y-%m-%dT%H:%M:%SZ"))


@functools.cache
def _unit_floats() -> SearchStrategy[float]:
    return st.floats(min_value=0.0, max_value=1.0)


# --- _meta ------------------------------------------------------------------------------------

_META_PREFIXES = ("", "com.example/", "org.example.app/")


@functools.cache
def _meta_keys() -> SearchStrategy[str]:
    # A name starts and ends with an alphanumeric; a prefix is reverse DNS and never one
    # the spec reserves (second label ``modelcontextprotocol`` or ``mcp``).
    name = st.text(alphabet=string.ascii_lowercase + string.digits, min_size=1, max_size=6)
    return st.builds("{}k{}".format, st.sampled_from(_META_PREFIXES), name)


@functools.cache
def meta_objects() -> SearchStrategy[dict[str, Any]]:
    """Free-form ``_meta`` objects, with well-formed keys and none of the reserved ones."""
    return st.dictionaries(_meta_keys(), json_values(), max_size=2)


def _with_reserved(free: Mapping[str, Any], reserved: Mapping[str, Any | None]) -> dict[str, Any]:
    out = dict(free)
    out.update((key, value) for key, value in reserved.items() if value is not None)
    return out


def _is_modern(version: str | None) -> bool:
    return version is None or version >= FIRST_MODERN_VERSION


def _writer(version: str | None) -> Callable[[Any], Any]:
    return (converter if version is None else converter_for(version)).unstructure


def _request_meta(version: str | None) -> SearchStrategy[dict[str, Any]]:
    return st.builds(
        lambda free, token: _with_reserved(free, {"progressToken": token}),
        meta_objects(),
        st.none() | progress_tokens(),
    )


def _notification_meta(version: str | None) -> SearchStrategy[dict[str, Any]]:
    if not _is_modern(version):
        return meta_objects()
    return st.builds(
        lambda free, sid: _with_reserved(free, {"io.modelcontextprotocol/subscriptionId": sid}),
        meta_objects(),
        st.none() | request_ids(),
    )


def _result_meta(version: str | None) -> SearchStrategy[dict[str, Any]]:
    if not _is_modern(version):
        return meta_objects()
    write = _writer(version)
    return st.builds(
        lambda free, info: _with_reserved(
            free, {"io.modelcontextprotocol/serverInfo": None if info is None else write(info)}
        ),
        meta_objects(),
        st.none() | strategy_for(_base.Implementation, version=version),
    )


def _listen_result_meta(version: str | None) -> SearchStrategy[dict[str, Any]]:
    return st.builds(
        lambda base, sid: {**base, "io.modelcontextprotocol/subscriptionId": sid},
        _result_meta(version),
        request_ids(),
    )


def _meta_for(cls: type, version: str | None) -> SearchStrategy[dict[str, Any]]:
    if cls is _subscriptions.SubscriptionsListenResult:
        return _listen_result_meta(version)
    if issubclass(cls, _base.RequestParams):
        return _request_meta(version)
    if issubclass(cls, _base.NotificationParams):
        return _notification_meta(version)
    if issubclass(cls, _base.Result):
        return _result_meta(version)
    return meta_objects()


# --- Content ----------------------------------------------------------------------------------


@functools.cache
def content_blocks() -> SearchStrategy[_content.ContentBlock]:
    """Content blocks as tools return them and prompts hold them."""
    return strategy_for(_content.ContentBlock)


def sampling_content_blocks(
    version: str | None = None,
) -> SearchStrategy[_content.SamplingMessageContentBlock]:
    """One block of a sampling message (tool use and tool results from 2025-11-25 on)."""
    return strategy_for(_content.SamplingMessageContentBlock, version=version)


def _sampling_content(version: str | None) -> SearchStrategy[Any]:
    one = sampling_content_blocks(version)
    if version is not None and version < _FIRST_MULTI_CONTENT:
        return one
    return one | st.lists(one, max_size=MAX_ITEMS)


@functools.cache
def resource_contents() -> SearchStrategy[_content.AnyResourceContents]:
    """Text or blob resource contents."""
    return strategy_for(_content.AnyResourceContents)


# --- Elicitation ------------------------------------------------------------------------------

_e = _elicitation


@functools.cache
def _options() -> SearchStrategy[list[str]]:
    return st.lists(st.text(max_size=6), min_size=1, max_size=MAX_ITEMS, unique=True)


@functools.cache
def _names() -> SearchStrategy[list[str]]:
    return st.lists(st.text(max_size=6), max_size=MAX_ITEMS, unique=True)


def _maybe_default(draw: st.DrawFn, values: list[str]) -> str | None:
    return None if draw(st.booleans()) else values[draw(_index(len(values)))]


def _maybe_defaults(draw: st.DrawFn, values: list[str]) -> list[str] | None:
    return None if draw(st.booleans()) else _subset(draw, values)


def _subset(draw: st.DrawFn, values: list[str]) -> list[str]:
    """Some of ``values``, in order (drawing a flag per value builds no strategy per draw)."""
    return [value for value in values if draw(st.booleans())]


@functools.cache
def _index(size: int) -> SearchStrategy[int]:
    return st.integers(min_value=0, max_value=size - 1)


@functools.cache
def _maybe_text() -> SearchStrategy[str | None]:
    return st.none() | _short_text()


@st.composite
def _untitled_single(draw: st.DrawFn, version: str | None) -> _e.UntitledSingleSelectEnumSchema:
    values = draw(_options())
    return _e.UntitledSingleSelectEnumSchema(
        enum=values,
        title=draw(_maybe_text()),
        description=draw(_maybe_text()),
        default=_maybe_default(draw, values),
    )


@st.composite
def _titled_single(draw: st.DrawFn, version: str | None) -> _e.TitledSingleSelectEnumSchema:
    values = draw(_options())
    return _e.TitledSingleSelectEnumSchema(
        one_of=[_e.EnumOption(const=v, title=draw(_short_text())) for v in values],
        title=draw(_maybe_text()),
        description=draw(_maybe_text()),
        default=_maybe_default(draw, values),
    )


@st.composite
def _legacy_titled(draw: st.DrawFn, version: str | None) -> _e.LegacyTitledEnumSchema:
    values = draw(_options())
    names = draw(st.none() | st.lists(_short_text(), min_size=len(values), max_size=len(values)))
    present = version is None or _present_in(_e.LegacyTitledEnumSchema, "default", version)
    return _e.LegacyTitledEnumSchema(
        enum=values,
        enum_names=names,
        title=draw(_maybe_text()),
        description=draw(_maybe_text()),
        default=_maybe_default(draw, values) if present else None,
    )


def _multi_fields(draw: st.DrawFn, values: list[str]) -> dict[str, Any]:
    low = None if draw(st.booleans()) else draw(_index(len(values) + 1))
    floor = low or 0
    high = None if draw(st.booleans()) else floor + draw(_index(len(values) + 1 - floor))
    return {
        "title": draw(_maybe_text()),
        "description": draw(_maybe_text()),
        "min_items": low,
        "max_items": high,
        "default": _maybe_defaults(draw, values),
    }


@st.composite
def _untitled_multi(draw: st.DrawFn, version: str | None) -> _e.UntitledMultiSelectEnumSchema:
    values = draw(_options())
    return _e.UntitledMultiSelectEnumSchema(
        items=_e.UntitledEnumItems(enum=values), **_multi_fields(draw, values)
    )


@st.composite
def _titled_multi(draw: st.DrawFn, version: str | None) -> _e.TitledMultiSelectEnumSchema:
    values = draw(_options())
    return _e.TitledMultiSelectEnumSchema(
        items=_e.TitledEnumItems(
            any_of=[_e.EnumOption(const=v, title=draw(_short_text())) for v in values]
        ),
        **_multi_fields(draw, values),
    )


@st.composite
def _number_schema(draw: st.DrawFn, version: str | None) -> _e.NumberSchema:
    kind = draw(st.sampled_from(["number", "integer"]))
    number = st.integers(-1000, 1000).map(float) if kind == "integer" else _floats()
    bounds = sorted(draw(st.lists(number, min_size=2, max_size=2)))
    low = draw(st.sampled_from([None, bounds[0]]))
    high = draw(st.sampled_from([None, bounds[1]]))
    present = version is None or _present_in(_e.NumberSchema, "default", version)
    default = draw(st.none() | st.sampled_from(bounds)) if present else None
    return _e.NumberSchema(
        type=kind,  # type: ignore[arg-type]
        title=draw(_maybe_text()),
        description=draw(_maybe_text()),
        minimum=low,
        maximum=high,
        default=default,
    )


@st.composite
def _string_schema(draw: st.DrawFn, version: str | None) -> _e.StringSchema:
    low = draw(st.none() | st.integers(min_value=0, max_value=8))
    high = draw(st.none() | st.integers(min_value=low or 0, max_value=16))
    present = version is None or _present_in(_e.StringSchema, "default", version)
    return _e.StringSchema(
        title=draw(_maybe_text()),
        description=draw(_maybe_text()),
        min_length=low,
        max_length=high,
        format=draw(st.none() | st.sampled_from(["email", "uri", "date", "date-time"])),
        default=draw(_maybe_text()) if present else None,
    )


def primitive_schemas(
    version: str | None = None,
) -> SearchStrategy[_elicitation.PrimitiveSchemaDefinition]:
    """The restricted schemas a form-mode elicitation may ask for.

    Before 2025-11-25 only strings, numbers, booleans and the (legacy) enum existed.
    """
    return strategy_for(_elicitation.PrimitiveSchemaDefinition, version=version)


def _primitive_members(version: str | None) -> SearchStrategy[Any]:
    # Before 2025-11-25 this leaves strings, numbers, booleans and the legacy enum.
    members = get_args(_elicitation.PrimitiveSchemaDefinition)
    return st.one_of([strategy_for(m, version=version) for m in members if _in_version(m, version)])


@st.composite
def _requested_schema(draw: st.DrawFn, version: str | None) -> dict[str, Any]:
    write = _writer(version)
    names = draw(_names())
    properties = {name: write(draw(primitive_schemas(version))) for name in names}
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    required = _subset(draw, names)
    if required:
        schema["required"] = required
    return schema


def elicitation_schemas(version: str | None = None) -> SearchStrategy[dict[str, Any]]:
    """``requestedSchema`` objects: a flat object schema of primitive properties, as JSON."""
    return _requested_schema(version)


def _elicited_values(version: str | None) -> SearchStrategy[Any]:
    values: list[SearchStrategy[Any]] = [_short_text(), _ints(), st.booleans()]
    if version is None:
        # The TypeScript source (and so the model) allows any number; the published
        # JSON Schemas of every revision say "integer", so only version-free data has them.
        values.append(_floats())
    if version is None or version >= _FIRST_MULTI_CONTENT:
        values.append(st.lists(_short_text(), max_size=MAX_ITEMS))
    return st.one_of(values)


# --- Tools, tasks and the rest ------------------------------------------------------------------


@st.composite
def _object_schemas(draw: st.DrawFn) -> dict[str, Any]:
    kinds = st.sampled_from(["string", "integer", "number", "boolean"]).map(
        lambda kind: {"type": kind}
    )
    properties = {name: draw(kinds) for name in draw(_names())}
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    required = _subset(draw, list(properties))
    if required:
        schema["required"] = required
    return schema


def _flag_objects(paths: list[tuple[str, ...]]) -> SearchStrategy[dict[str, Any]]:
    """Capability objects built from the given paths (each leaf an empty object)."""

    def build(chosen: list[tuple[str, ...]]) -> dict[str, Any]:
        root: dict[str, Any] = {}
        for path in chosen:
            node = root
            for name in path:
                node = node.setdefault(name, {})
        return root

    return st.lists(st.sampled_from(paths), max_size=len(paths), unique=True).map(build)


_CLIENT_TASKS = [
    ("list",),
    ("cancel",),
    ("requests", "sampling", "createMessage"),
    ("requests", "elicitation", "create"),
]
_SERVER_TASKS = [("list",), ("cancel",), ("requests", "tools", "call")]


@functools.cache
def _payload_fields() -> SearchStrategy[dict[str, Any]]:
    return st.dictionaries(
        st.sampled_from(["content", "structuredContent", "isError", "messages", "contents"]),
        json_values(),
        min_size=1,
        max_size=MAX_ITEMS,
    )


def input_requests(version: str | None = None) -> SearchStrategy[_inputs.InputRequest]:
    """What a 2026-07-28 server may put in ``inputRequests``."""
    return strategy_for(_inputs.InputRequest, version=version)


def input_responses(version: str | None = None) -> SearchStrategy[_inputs.InputResponse]:
    """What a client answers to an input request."""
    return strategy_for(_inputs.InputResponse, version=version)


def _input_responses_json(version: str | None) -> SearchStrategy[dict[str, Any]]:
    write = _writer(version)
    return st.dictionaries(
        _keys(), input_responses(version).map(write), min_size=1, max_size=MAX_ITEMS
    )


# --- Deriving strategies from the models --------------------------------------------------------

FieldStrategy = Callable[[str | None], SearchStrategy[Any]]


def _const(strategy: Callable[[], SearchStrategy[Any]]) -> FieldStrategy:
    return lambda version: strategy()


#: Attributes whose meaning the type does not carry, by name (any class with that name
#: for an attribute of that type).
_BY_NAME: Mapping[tuple[str, Any], FieldStrategy] = {
    ("uri", str): _const(uris),
    ("uri_template", str): _const(_uri_templates),
    ("url", str): _const(_urls),
    ("src", str): _const(uris),
    ("website_url", str): _const(_urls),
    ("mime_type", str): _const(_mime_types),
    ("protocol_version", str): _const(protocol_versions),
    ("supported_versions", list[str]): _const(
        lambda: st.lists(protocol_versions(), min_size=1, max_size=MAX_ITEMS, unique=True)
    ),
    ("last_modified", str): _const(_timestamps),
    ("created_at", str): _const(_timestamps),
    ("last_updated_at", str): _const(_timestamps),
    ("priority", float): _const(_unit_floats),
    ("cost_priority", float): _const(_unit_floats),
    ("speed_priority", float): _const(_unit_floats),
    ("intelligence_priority", float): _const(_unit_floats),
    ("sizes", list[str]): _const(
        lambda: st.lists(st.sampled_from(["16x16", "48x48", "512x512", "any"]), max_size=2)
    ),
    ("input_responses", dict[str, Any]): _input_responses_json,
}

#: Attributes of one class whose meaning the type does not carry.
_BY_FIELD: Mapping[tuple[type, str], FieldStrategy] = {
    (_content.ImageContent, "data"): _const(_base64),
    (_content.AudioContent, "data"): _const(_base64),
    (_content.BlobResourceContents, "blob"): _const(_base64),
    (_content.ToolUseContent, "input"): _const(json_objects),
    (_content.ToolResultContent, "structured_content"): _const(json_objects),
    (_tools.CallToolResult, "structured_content"): _const(json_objects),
    (_tools.CallToolRequestParams, "arguments"): _const(json_objects),
    (_tools.Tool, "input_schema"): _const(_object_schemas),
    (_tools.Tool, "output_schema"): _const(_object_schemas),
    (_base.Error, "code"): _const(lambda: st.sampled_from(list(ErrorCode)).map(int) | _ints()),
    (_base.Error, "data"): _const(json_values),
    (_notifications.LoggingMessageNotificationParams, "data"): _const(json_values),
    (_completion.ResourceTemplateReference, "uri"): _const(_uri_templates),
    (_resources.ResourceTemplate, "uri_template"): _const(_uri_templates),
    (_subscriptions.SubscriptionFilter, "resource_subscriptions"): _const(
        lambda: st.lists(uris(), max_size=MAX_ITEMS)
    ),
    (_elicitation.ElicitRequestFormParams, "requested_schema"): elicitation_schemas,
    (_sampling.SamplingMessage, "content"): _sampling_content,
    (_sampling.CreateMessageResult, "content"): _sampling_content,
    (_sampling.CreateMessageRequestParams, "max_tokens"): _const(
        lambda: st.integers(min_value=1, max_value=100_000)
    ),
    (_capabilities.ClientCapabilities, "tasks"): _const(lambda: _flag_objects(_CLIENT_TASKS)),
    (_capabilities.ServerCapabilities, "tasks"): _const(lambda: _flag_objects(_SERVER_TASKS)),
    (_tasks.GetTaskPayloadResult, "extra"): _const(_payload_fields),
    # 2025-06-18 on: "This MUST be a file:// URI".
    (_roots.Root, "uri"): _const(_file_uris),
}

#: Attributes optional in the model (another revision lacks them) that a revision requires.
_REQUIRED_IN: Mapping[tuple[type, str], Callable[[str], bool]] = {
    # Optional only in 2025-11-25, where tasks are cancelled with tasks/cancel instead.
    (_notifications.CancelledNotificationParams, "request_id"): lambda v: v != "2025-11-25",
    # 2025-11-25 requires it; 2026-07-28 dropped it (servers correlate through requestState).
    (_elicitation.ElicitRequestURLParams, "elicitation_id"): lambda v: v == "2025-11-25",
}

#: Union members that appeared in a later revision: left out of a union for older ones.
_CLASS_SINCE: Mapping[type, str] = {
    _content.AudioContent: "2025-03-26",
    _content.ResourceLink: "2025-06-18",
    _content.ToolUseContent: _FIRST_MULTI_CONTENT,
    _content.ToolResultContent: _FIRST_MULTI_CONTENT,
    _elicitation.ElicitRequestURLParams: "2025-11-25",
    _e.UntitledSingleSelectEnumSchema: "2025-11-25",
    _e.TitledSingleSelectEnumSchema: "2025-11-25",
    _e.UntitledMultiSelectEnumSchema: "2025-11-25",
    _e.TitledMultiSelectEnumSchema: "2025-11-25",
}


def _in_version(member: Any, version: str | None) -> bool:
    since = _CLASS_SINCE.get(member)
    return version is None or since is None or version >= since


#: Classes that need more than one attribute at a time to be right.
_BY_CLASS: Mapping[type, FieldStrategy] = {
    _e.StringSchema: _string_schema,
    _e.NumberSchema: _number_schema,
    _e.UntitledSingleSelectEnumSchema: _untitled_single,
    _e.TitledSingleSelectEnumSchema: _titled_single,
    _e.LegacyTitledEnumSchema: _legacy_titled,
    _e.UntitledMultiSelectEnumSchema: _untitled_multi,
    _e.TitledMultiSelectEnumSchema: _titled_multi,
}

#: Types whose values need more than the type says.
_BY_TYPE: Mapping[Any, FieldStrategy] = {
    _base.RequestId: _const(request_ids),
    str | int | float | bool | list[str]: _elicited_values,
    _elicitation.PrimitiveSchemaDefinition: _primitive_members,
}


def strategy_for(model: Any, *, version: str | None = None) -> SearchStrategy[Any]:
    """A strategy for valid instances of ``model``.

    Args:
        model: a wire model class from :mod:`trio_mcp.types`, or a union of them such as
            ``types.ContentBlock`` or ``types.InputRequest``.
        version: generate what a peer on this revision may send (see the module
            docstring); ``None`` for anything the model allows.

    Raises:
        ValueError: ``version`` is not a revision this library speaks.
        TypeError: ``model`` is not a wire model.
    """
    if version is not None and version not in SUPPORTED_VERSIONS:
        raise ValueError(f"unknown protocol revision {version!r}")
    return _for_type(model, version)


@functools.cache
def _for_type(tp: Any, version: str | None) -> SearchStrategy[Any]:
    special = _BY_TYPE.get(tp)
    if special is not None:
        return special(version)
    if isinstance(tp, type) and attrs.has(tp):
        by_class = _BY_CLASS.get(tp)
        return by_class(version) if by_class is not None else _for_class(tp, version)
    origin, args = get_origin(tp), get_args(tp)
    if origin is Literal:
        return st.sampled_from(args)
    if origin is Union or origin is types.UnionType:
        members = [a for a in args if a is not _NoneType and _in_version(a, version)]
        strategy = st.one_of([_for_type(member, version) for member in members])
        return st.none() | strategy if _NoneType in args else strategy
    if origin is list:
        return st.lists(_for_type(args[0], version), max_size=MAX_ITEMS)
    if origin is dict:
        if args[1] is Any:
            return _portable_objects()
        return st.dictionaries(_keys(), _for_type(args[1], version), max_size=MAX_ITEMS)
    if tp is str:
        return _short_text()
    if tp is bool:
        return st.booleans()
    if tp is int:
        return _counts()
    if tp is float:
        return _floats()
    if tp is Any:
        return json_values()
    raise TypeError(f"no strategy for {tp!r}: not a wire model")


def _without_none(tp: Any) -> Any:
    if get_origin(tp) is Union or get_origin(tp) is types.UnionType:
        members = [a for a in get_args(tp) if a is not _NoneType]
        if len(members) < len(get_args(tp)):
            return functools.reduce(lambda a, b: a | b, members)
    return tp


def _field(cls: type, attribute: attrs.Attribute[Any], version: str | None) -> SearchStrategy[Any]:
    name = attribute.name
    if name == "meta":
        return _meta_for(cls, version)
    if name == "result_type":
        return st.just(attribute.default)
    for klass in cls.__mro__:
        special = _BY_FIELD.get((klass, name))
        if special is not None:
            return special(version)
    tp = _without_none(attribute.type)
    by_name = _BY_NAME.get((name, tp))
    if by_name is not None:
        return by_name(version)
    return _for_type(tp, version)


def _required_in(cls: type, name: str, version: str | None) -> bool:
    if version is None:
        return False
    if name in _merged(cls, "__wire_defaults__"):
        # A peer on a revision that has the attribute always sends it.
        return True
    for klass in cls.__mro__:
        rule = _REQUIRED_IN.get((klass, name))
        if rule is not None:
            return rule(version)
    return False


def _for_class(
    cls: type, version: str | None, present: frozenset[str] = frozenset()
) -> SearchStrategy[Any]:
    """``cls`` built from a strategy per attribute; those in ``present`` are never ``None``."""
    if cls is _mrtr.InputRequiredResult and not present:
        # The spec: at least one of inputRequests and requestState.
        return _for_class(cls, version, frozenset({"input_requests"})) | _for_class(
            cls, version, frozenset({"request_state"})
        )
    _resolve(cls)
    kwargs: dict[str, SearchStrategy[Any]] = {}
    for attribute in attrs.fields(cls):
        if version is not None and not _present_in(cls, attribute.name, version):
            # Left at its default: what a model read from a peer on ``version`` holds.
            continue
        strategy = _field(cls, attribute, version)
        required = attribute.name in present or _required_in(cls, attribute.name, version)
        if attribute.default is None and not required:
            strategy = st.none() | strategy
        kwargs[attribute.name] = strategy
    return st.builds(cls, **kwargs)
