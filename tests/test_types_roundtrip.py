"""Every wire model survives the wire: written, encoded, decoded and read back, it is equal.

Also: fields from a newer peer are ignored, ``_meta`` comes through both ways, reading is
strict about JSON types, unions are told apart by their tag, and what we write for a
revision holds exactly the attributes that revision has.
"""

from __future__ import annotations

import importlib
import types
from typing import Any, Union, get_args, get_origin

import attrs
import orjson
import pytest
from hypothesis import given, settings, strategies as st

from trio_mcp import types as t
from trio_mcp._types import _converter
from trio_mcp._types._base import OMIT_IF_DEFAULT
from trio_mcp._types._converter import _merged, _present_in, _resolve
from trio_mcp._versions import SUPPORTED_VERSIONS
from trio_mcp.testing import meta_objects, strategy_for

#: Every wire model (the two field-less bases are not messages).
MODELS = sorted(
    (
        value
        for value in vars(t).values()
        if isinstance(value, type)
        and attrs.has(value)
        and value.__module__.startswith("trio_mcp._types.")
        and value not in (t.Request, t.Notification, t.MethodSpec)
    ),
    key=lambda cls: cls.__name__,
)
for _model in MODELS:
    _resolve(_model)  # annotations are strings until the converter first needs them
#: Models whose unknown keys are data, not noise: tasks/result carries the original
#: request's result fields at its top level.
OPEN_MODELS = {t.GetTaskPayloadResult}
VERSIONS: list[str | None] = [None, *SUPPORTED_VERSIONS]

#: Each model is also exercised inside the models that contain it, so a few examples each
#: are enough on the CI profile; deeper profiles scale this up.
FEW = settings(max_examples=max(8, settings.default.max_examples // 8))


def _ids(cls: type) -> str:
    return cls.__name__


def _wire(value: Any, version: str | None = None) -> Any:
    """What goes over the wire: written for ``version``, JSON-encoded and decoded."""
    conv = t.converter if version is None else t.converter_for(version)
    return orjson.loads(orjson.dumps(conv.unstructure(value)))


def _draw_instance(data: st.DataObject, cls: type) -> tuple[str | None, Any]:
    """A revision (or ``None``: any) and an instance a peer on it may send."""
    version = data.draw(st.sampled_from(VERSIONS), label="version")
    return version, data.draw(strategy_for(cls, version=version), label="value")


def test_every_model_is_exported_and_has_a_strategy() -> None:
    defined = {
        cls
        for module in map(importlib.import_module, _converter.MODEL_MODULES)
        for cls in vars(module).values()
        if isinstance(cls, type) and attrs.has(cls) and cls.__module__ == module.__name__
    }
    assert defined - {t.Request, t.Notification} == set(MODELS)
    for cls in MODELS:
        strategy_for(cls)  # derives a strategy per attribute, or raises TypeError


# --- The properties every model has ------------------------------------------------------------


@FEW
@pytest.mark.parametrize("cls", MODELS, ids=_ids)
@given(data=st.data())
def test_wire_model(cls: type, data: st.DataObject) -> None:
    """For one drawn instance (and the revision it was drawn for): it round-trips; each
    revision gets exactly its attributes; unknown fields are ignored; ``_meta`` survives;
    a wrong JSON type is refused. One test per model, so each instance is drawn once."""
    version, value = _draw_instance(data, cls)
    check_round_trip(value, version)
    check_each_revision_gets_exactly_its_attributes(value)
    check_unknown_fields_are_ignored(value)
    check_json_types_are_checked(value, data)
    if "meta" in attrs.fields_dict(cls):
        check_meta_is_preserved(value, data.draw(meta_objects(), label="meta"))


def check_round_trip(value: Any, version: str | None) -> None:
    """Written for ``version`` (all attributes if ``None``), encoded, decoded, read: equal."""
    back = t.structure(_wire(value, version), type(value))
    assert back == value, f"round trip for {version}"


def _expected_keys(value: Any, version: str | None) -> set[str]:
    """The attributes ``version`` has, less those left ``None`` (unless the revision
    requires them: then their ``__wire_defaults__`` are written) and those at their default
    that are marked to be left out then (``OMIT_IF_DEFAULT``)."""
    cls = type(value)
    required = set(_merged(cls, "__wire_defaults__")) if version is not None else set()
    return {
        t.wire_name(cls, a.name)
        for a in attrs.fields(cls)
        if _present_in(cls, a.name, version)
        and (a.name in required or not (a.default is None and getattr(value, a.name) is None))
        and not (a.metadata.get(OMIT_IF_DEFAULT) and getattr(value, a.name) == a.default)
    }


def check_each_revision_gets_exactly_its_attributes(value: Any) -> None:
    """The keys written for a revision: the attributes it has, unless ``None``."""
    if type(value) in OPEN_MODELS:
        return
    for version in SUPPORTED_VERSIONS:
        written = t.unstructure(value, version)
        assert set(written) == _expected_keys(value, version), f"keys written for {version}"


def check_unknown_fields_are_ignored(value: Any) -> None:
    """A newer peer's fields, at the top level, change nothing."""
    if type(value) in OPEN_MODELS:
        return
    wire = _wire(value)
    wire["someFutureField"] = {"nested": [1, "two"]}
    assert t.structure(wire, type(value)) == value, "an unknown field changed the value"


def check_meta_is_preserved(value: Any, meta: dict[str, Any]) -> None:
    """Any ``_meta`` (reserved keys included) is written as given and read back as given."""
    meta["io.modelcontextprotocol/serverInfo"] = {"name": "s", "version": "1"}
    meta["progressToken"] = 7
    cls = type(value)
    value = attrs.evolve(value, meta=meta)
    for version in (None, *SUPPORTED_VERSIONS):
        if version is not None and not _present_in(cls, "meta", version):
            continue
        wire = _wire(value, version)
        assert wire["_meta"] == meta, f"_meta written for {version}"
        assert t.structure(wire, cls).meta == meta, f"_meta read back for {version}"


def _plain(tp: Any) -> Any:
    if get_origin(tp) in (Union, types.UnionType):
        members = [a for a in get_args(tp) if a is not type(None)]
        return members[0] if len(members) == 1 else tp
    return tp


def _wrong_json(cls: type) -> dict[str, Any]:
    """Per wire name: a value of the wrong JSON type for a string or an array attribute."""
    wrong: dict[str, Any] = {}
    for attribute in attrs.fields(cls):
        tp = _plain(attribute.type)
        if tp is str:
            wrong[t.wire_name(cls, attribute.name)] = 12345
        elif get_origin(tp) is list:
            wrong[t.wire_name(cls, attribute.name)] = "not a list"
    return wrong


def check_json_types_are_checked(value: Any, data: st.DataObject) -> None:
    """A number where a string belongs, or a string where an array belongs, is refused (one
    such attribute per example: each refusal builds an explanation, which is slow)."""
    cls = type(value)
    wrong = _wrong_json(cls)
    if cls in OPEN_MODELS or not wrong:
        return
    key = data.draw(st.sampled_from(sorted(wrong)), label="attribute given the wrong type")
    with pytest.raises(t.StructureError):
        t.structure({**_wire(value), key: wrong[key]}, cls)


# --- What a revision gets --------------------------------------------------------------------


def test_icons_are_left_out_for_2025_06_18() -> None:
    icon = t.Icon(src="https://example.com/a.png", mime_type="image/png")
    tool = t.Tool(name="a", input_schema={"type": "object"}, icons=[icon])
    info = t.Implementation(name="a", version="1", icons=[icon], website_url="https://x.org")
    for value in (tool, info, t.Prompt(name="p", icons=[icon])):
        assert "icons" not in t.unstructure(value, "2025-06-18")
        assert t.unstructure(value, "2025-11-25")["icons"] == [
            {"src": "https://example.com/a.png", "mimeType": "image/png"}
        ]
        assert "icons" in t.unstructure(value, "2026-07-28")
    assert "websiteUrl" not in t.unstructure(info, "2025-06-18")


def test_result_type_and_cache_hints_are_written_only_for_2026_07_28() -> None:
    result = t.ListToolsResult(tools=[], ttl_ms=500, cache_scope="public")
    assert t.unstructure(result, "2026-07-28") == {
        "resultType": "complete",
        "ttlMs": 500,
        "cacheScope": "public",
        "tools": [],
    }
    assert t.unstructure(result, "2025-11-25") == {"tools": []}
    assert t.unstructure(result, "2025-06-18") == {"tools": []}
    # A legacy result has neither: it reads as complete, with no caching hints ...
    read = t.structure({"tools": []}, t.ListToolsResult)
    assert (read.result_type, read.ttl_ms, read.cache_scope) == ("complete", None, None)
    # ... which 2026-07-28 requires, so "no hint" goes to it as the conservative one.
    assert t.unstructure(read, "2026-07-28") == {
        "resultType": "complete",
        "ttlMs": 0,
        "cacheScope": "private",
        "tools": [],
    }
    assert t.unstructure(read, "2025-11-25") == {"tools": []}


def test_tasks_fields_are_written_only_for_2025_11_25() -> None:
    tool = t.Tool(
        name="a",
        input_schema={"type": "object"},
        execution=t.ToolExecution(task_support="optional"),
    )
    params = t.CallToolRequestParams(name="a", task=t.TaskMetadata(ttl=1000))
    caps = t.ServerCapabilities(tasks={"list": {}})
    assert t.unstructure(tool, "2025-11-25")["execution"] == {"taskSupport": "optional"}
    assert t.unstructure(params, "2025-11-25")["task"] == {"ttl": 1000}
    assert t.unstructure(caps, "2025-11-25") == {"tasks": {"list": {}}}
    for version in ("2026-07-28", "2025-06-18"):
        assert "execution" not in t.unstructure(tool, version)
        assert "task" not in t.unstructure(params, version)
        assert t.unstructure(caps, version) == {}


def test_mrtr_fields_are_written_only_for_2026_07_28() -> None:
    params = t.CallToolRequestParams(
        name="a", input_responses={"k": {"action": "decline"}}, request_state="s"
    )
    assert t.unstructure(params, "2026-07-28") == {
        "name": "a",
        "inputResponses": {"k": {"action": "decline"}},
        "requestState": "s",
    }
    assert t.unstructure(params, "2025-11-25") == {"name": "a"}


# --- Newer peers ------------------------------------------------------------------------------


def test_unknown_fields_inside_nested_objects_are_ignored() -> None:
    wire = {
        "content": [
            {"type": "text", "text": "hi", "futureHint": True},
            {
                "type": "resource",
                "resource": {"uri": "file:///a", "text": "x", "futureEncoding": "utf-9"},
            },
        ],
        "isError": False,
        "resultType": "complete",
        "futureTopLevel": 1,
    }
    assert t.structure(wire, t.CallToolResult) == t.CallToolResult(
        content=[
            t.TextContent(text="hi"),
            t.EmbeddedResource(resource=t.TextResourceContents(uri="file:///a", text="x")),
        ],
        is_error=False,
    )


def test_a_task_payload_keeps_the_original_results_fields_at_the_top_level() -> None:
    wire = {"content": [{"type": "text", "text": "done"}], "isError": False, "_meta": {"k": 1}}
    payload = t.structure(wire, t.GetTaskPayloadResult)
    assert payload.meta == {"k": 1}
    assert payload.extra == {"content": [{"type": "text", "text": "done"}], "isError": False}
    assert t.unstructure(payload, "2025-11-25") == wire
    assert t.structure(payload.extra, t.CallToolResult).content == [t.TextContent(text="done")]


# --- _meta -----------------------------------------------------------------------------------


def test_meta_with_reserved_and_custom_keys_is_kept_as_sent() -> None:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"roots": {}},
        "progressToken": "p-1",
        "com.example/trace": {"id": [1, 2]},
    }
    params = t.structure({"name": "t", "_meta": meta}, t.CallToolRequestParams)
    assert params.meta == meta
    for version in SUPPORTED_VERSIONS:
        assert t.unstructure(params, version)["_meta"] == meta
    assert "meta" not in t.unstructure(params)


# --- Strict reading --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("wire", "cls"),
    [
        ({"type": "text", "text": 5}, t.TextContent),
        ({"name": 1, "inputSchema": {"type": "object"}}, t.Tool),
        ({"content": "just text"}, t.CallToolResult),
        ({"audience": "user"}, t.Annotations),
        ({"progressToken": "t", "progress": "50%"}, t.ProgressNotificationParams),
        ({"progressToken": "t", "progress": True}, t.ProgressNotificationParams),
        ({"progressToken": None, "progress": 1}, t.ProgressNotificationParams),
        ({"uri": "file:///a", "name": "a", "size": 1.5}, t.Resource),
        ({"uri": "file:///a", "name": "a", "size": "3"}, t.Resource),
        ({"readOnlyHint": "yes"}, t.ToolAnnotations),
        ({"action": "accept", "content": {"a": {"b": 1}}}, t.ElicitResult),
        ({"action": "accept", "content": {"a": [1, 2]}}, t.ElicitResult),
        ({"action": "maybe"}, t.ElicitResult),
        ({"role": "robot", "content": {"type": "text", "text": "x"}}, t.PromptMessage),
        (["not", "an", "object"], t.Icon),
        ({"values": "a"}, t.Completion),
    ],
)
def test_a_wrong_json_type_is_a_structure_error(wire: Any, cls: type) -> None:
    with pytest.raises(t.StructureError):
        t.structure(wire, cls)


def test_the_error_says_where() -> None:
    with pytest.raises(t.StructureError, match=r"inputSchema|input_schema"):
        t.structure({"name": "a"}, t.Tool)
    with pytest.raises(t.StructureError, match="expected a string"):
        t.structure({"type": "text", "text": 5}, t.TextContent)


def test_integral_floats_are_integers_and_strings_stay_strings() -> None:
    assert t.structure({"uri": "u", "name": "a", "size": 2.0}, t.Resource).size == 2
    assert t.structure({"type": "text", "text": "5"}, t.TextContent).text == "5"
    assert t.structure({"src": "u", "sizes": ["48x48"]}, t.Icon).sizes == ["48x48"]


# --- Unions ----------------------------------------------------------------------------------


def _same_on_the_wire(a: Any, b: Any) -> bool:
    return bool(t.unstructure(a) == t.unstructure(b))


UNIONS = [
    t.ContentBlock,
    t.SamplingMessageContentBlock,
    t.AnyResourceContents,
    t.ElicitRequestParams,
    t.InputRequest,
    t.InputResponse,
    t.PrimitiveSchemaDefinition,
    t.PromptReference | t.ResourceTemplateReference,
]


@FEW
@pytest.mark.parametrize("union", UNIONS, ids=str)
@given(data=st.data())
def test_unions_pick_the_right_class(union: Any, data: st.DataObject) -> None:
    value = data.draw(strategy_for(union), label="value")
    back = t.structure(_wire(value), union)
    if type(value) is t.LegacyTitledEnumSchema and value.enum_names is None:
        # Without enumNames the legacy shape *is* the untitled single-select enum.
        assert type(back) is t.UntitledSingleSelectEnumSchema
        assert _same_on_the_wire(back, value)
    else:
        assert type(back) is type(value)
        assert back == value


@pytest.mark.parametrize(
    ("wire", "union", "expected"),
    [
        ({"type": "image", "data": "", "mimeType": "image/png"}, t.ContentBlock, t.ImageContent),
        ({"type": "resource_link", "uri": "u", "name": "n"}, t.ContentBlock, t.ResourceLink),
        ({"type": "tool_use", "id": "1", "name": "n", "input": {}}, t.SamplingMessageContentBlock,
         t.ToolUseContent),
        ({"uri": "u", "blob": ""}, t.AnyResourceContents, t.BlobResourceContents),
        ({"message": "m", "requestedSchema": {}}, t.ElicitRequestParams, t.ElicitRequestFormParams),
        ({"mode": "url", "message": "m", "url": "u"}, t.ElicitRequestParams,
         t.ElicitRequestURLParams),
        ({"method": "roots/list"}, t.InputRequest, t.ListRootsRequest),
        ({"action": "cancel"}, t.InputResponse, t.ElicitResult),
        ({"roots": []}, t.InputResponse, t.ListRootsResult),
        ({"type": "integer"}, t.PrimitiveSchemaDefinition, t.NumberSchema),
        ({"type": "array", "items": {"anyOf": []}}, t.PrimitiveSchemaDefinition,
         t.TitledMultiSelectEnumSchema),
        ({"type": "ref/resource", "uri": "u"}, t.PromptReference | t.ResourceTemplateReference,
         t.ResourceTemplateReference),
    ],
)  # fmt: skip
def test_the_tag_decides(wire: Any, union: Any, expected: type) -> None:
    assert type(t.structure(wire, union)) is expected


@pytest.mark.parametrize(
    ("wire", "union"),
    [
        ({"type": "video", "data": ""}, t.ContentBlock),
        ({"type": "tool_use", "id": "1", "name": "n", "input": {}}, t.ContentBlock),
        ({"type": "resource_link", "uri": "u", "name": "n"}, t.SamplingMessageContentBlock),
        ({"mode": "carrier-pigeon", "message": "m"}, t.ElicitRequestParams),
        ({"method": "tools/call", "params": {"name": "x"}}, t.InputRequest),
        ({"uri": "u"}, t.AnyResourceContents),
        ("text", t.ContentBlock),
    ],
)
def test_an_unknown_tag_is_a_structure_error(wire: Any, union: Any) -> None:
    with pytest.raises(t.StructureError):
        t.structure(wire, union)


def _required_args(cls: type) -> dict[str, Any]:
    return {
        a.name: None for a in attrs.fields(cls) if a.default is attrs.NOTHING and a.name != "method"
    }


def test_the_method_table_names_each_request_and_notification_class() -> None:
    for method, spec in t.METHODS.items():
        assert attrs.fields_dict(spec.model)["method"].default == method
        assert spec.model(**_required_args(spec.model)).method == method


def test_is_error_reads_false_when_left_out_and_is_left_out_when_false() -> None:
    # The spec's default for isError is false (issue 22): not None.
    assert t.structure({"content": []}, t.CallToolResult).is_error is False
    assert t.structure({"content": [], "isError": True}, t.CallToolResult).is_error is True
    assert "isError" not in t.unstructure(t.CallToolResult(content=[]))
    assert "isError" not in t.unstructure(t.CallToolResult(content=[], is_error=False))
    assert t.unstructure(t.CallToolResult(content=[], is_error=True))["isError"] is True
