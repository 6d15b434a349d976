"""Every definition of the official JSON Schemas has a model, and the model has every
property the definition has.

``DEFINITIONS`` below maps each definition name of the 2026-07-28, 2025-11-25 and
2025-06-18 schemas to what represents it here. A definition that appears in a
schema and is not in the mapping fails :func:`test_every_definition_has_a_model`:
add the model, then the entry.

What a definition maps to:

* **A wire model** of :mod:`trio_mcp.types` (an attrs class). Its properties are
  compared by wire name (:func:`trio_mcp.types.wire_name`), recursing into inline
  object properties whose attribute is a model (2025-06-18 writes request params
  inline). Required properties must be required attributes unless
  :func:`_why_defaulted` gives the reason, and the revision markers
  (``__since__``/``__until__``) must agree with the schema in both directions.
* **A type alias** (``ContentBlock``, ``RequestId``, ``Role`` ...): a union's
  members, a ``Literal``'s values or the JSON type are compared.
* **The JSON-RPC layer.** ``JSONRPCRequest``, ``JSONRPCNotification``,
  ``JSONRPCResultResponse``, ``JSONRPCErrorResponse`` (``JSONRPCResponse`` and
  ``JSONRPCError`` in 2025-06-18) and the 2026-07-28 ``*ResultResponse`` envelopes
  are :mod:`trio_mcp.jsonrpc` messages: the types layer models ``method`` +
  ``params`` and results; ids and ``"jsonrpc": "2.0"`` belong to the JSON-RPC
  layer. The generic ``Request``/``Notification``/``PaginatedRequest`` bases have a
  free ``method`` string, which is exactly :class:`trio_mcp.jsonrpc.JsonRpcRequest` /
  :class:`~trio_mcp.jsonrpc.JsonRpcNotification`: our typed requests fix their method.
* **Errors.** The error objects with a fixed code (``ParseError`` ...
  ``InternalError``) are :class:`trio_mcp.types.Error`; the full error responses
  (``UnsupportedProtocolVersionError`` ...) are :class:`trio_mcp.jsonrpc.ErrorResponse`.
  Their codes must be in :class:`trio_mcp.ErrorCode`.
* **The method table.** ``ClientRequest``, ``ServerRequest``, ``ClientNotification``,
  ``ServerNotification``, ``ClientResult`` and ``ServerResult`` are unions by sender;
  we dispatch on ``method`` through :data:`trio_mcp.types.METHODS`, so their members
  are compared with what the table says each side sends in that revision.
"""

from __future__ import annotations

import types
from collections.abc import Iterator, Mapping
from typing import Any, Literal, Union, get_args, get_origin

import attrs
import pytest
from spec_support import SCHEMA_FILES, load_schema

from trio_mcp import ErrorCode, jsonrpc, types as t
from trio_mcp._types._converter import _merged, _present_in, _resolve as _resolve_types

VERSIONS = tuple(SCHEMA_FILES)
ENVELOPE_FIELDS = frozenset({"jsonrpc", "id"})


@attrs.frozen
class ByVersion:
    """A definition whose shape changed between revisions: what represents it in each."""

    default: Any
    versions: Mapping[str, Any]

    def for_version(self, version: str) -> Any:
        return self.versions.get(version, self.default)


@attrs.frozen
class Sent:
    """A union of the requests (or notifications) that ``sender`` sends: see METHODS."""

    sender: Literal["client", "server"]
    kind: Literal["request", "notification"]


@attrs.frozen
class Answered:
    """A union of the results ``answerer`` sends: the result models of the requests it
    receives, per METHODS."""

    answerer: Literal["client", "server"]


DEFINITIONS: dict[str, Any] = {
    # --- base shapes
    "Request": jsonrpc.JsonRpcRequest,  # generic: method is any string
    "Notification": jsonrpc.JsonRpcNotification,  # generic: method is any string
    "PaginatedRequest": jsonrpc.JsonRpcRequest,  # generic: the list requests each fix their method
    "RequestParams": t.RequestParams,
    "PaginatedRequestParams": t.PaginatedRequestParams,
    "NotificationParams": t.NotificationParams,
    "Result": t.Result,
    "EmptyResult": t.EmptyResult,
    "PaginatedResult": t.PaginatedResult,
    "CacheableResult": t.CacheableResult,
    "Error": t.Error,
    "BaseMetadata": t.BaseMetadata,
    "Icon": t.Icon,
    "Icons": t.Icons,
    "Implementation": t.Implementation,
    "MetaObject": t.MetaObject,
    "RequestMetaObject": t.RequestMetaObject,
    "ResultMetaObject": t.ResultMetaObject,
    "NotificationMetaObject": t.NotificationMetaObject,
    "SubscriptionsListenResultMetaObject": t.SubscriptionsListenResultMetaObject,
    # --- scalars and JSON
    "Cursor": t.Cursor,
    "RequestId": t.RequestId,
    "ProgressToken": t.ProgressToken,
    "Role": t.Role,
    "LoggingLevel": t.LoggingLevel,
    "ResultType": t.ResultType,
    "TaskStatus": t.TaskStatus,
    "JSONValue": t.JSONValue,
    "JSONObject": t.JSONObject,
    "JSONArray": t.JSONArray,
    # --- JSON-RPC envelopes
    "JSONRPCMessage": jsonrpc.Message,
    "JSONRPCRequest": jsonrpc.JsonRpcRequest,
    "JSONRPCNotification": jsonrpc.JsonRpcNotification,
    "JSONRPCResultResponse": jsonrpc.ResultResponse,
    "JSONRPCErrorResponse": jsonrpc.ErrorResponse,
    "JSONRPCError": jsonrpc.ErrorResponse,  # 2025-06-18's name for the error response
    # 2025-06-18's JSONRPCResponse is the result response; later it is the union of both.
    "JSONRPCResponse": ByVersion(
        jsonrpc.ResultResponse | jsonrpc.ErrorResponse,
        {"2025-06-18": jsonrpc.ResultResponse},
    ),
    "CallToolResultResponse": jsonrpc.ResultResponse,
    "CompleteResultResponse": jsonrpc.ResultResponse,
    "DiscoverResultResponse": jsonrpc.ResultResponse,
    "GetPromptResultResponse": jsonrpc.ResultResponse,
    "ListPromptsResultResponse": jsonrpc.ResultResponse,
    "ListResourceTemplatesResultResponse": jsonrpc.ResultResponse,
    "ListResourcesResultResponse": jsonrpc.ResultResponse,
    "ListToolsResultResponse": jsonrpc.ResultResponse,
    "ReadResourceResultResponse": jsonrpc.ResultResponse,
    "SubscriptionsListenResultResponse": jsonrpc.ResultResponse,
    # --- errors
    "ParseError": t.Error,
    "InvalidRequestError": t.Error,
    "MethodNotFoundError": t.Error,
    "InvalidParamsError": t.Error,
    "InternalError": t.Error,
    "HeaderMismatchError": jsonrpc.ErrorResponse,
    "MissingRequiredClientCapabilityError": jsonrpc.ErrorResponse,
    "UnsupportedProtocolVersionError": jsonrpc.ErrorResponse,
    "URLElicitationRequiredError": jsonrpc.ErrorResponse,
    # --- unions by sender
    "ClientRequest": Sent("client", "request"),
    "ServerRequest": Sent("server", "request"),
    # 2026-07-28: a client sends only notifications/cancelled, so the union is that one.
    "ClientNotification": ByVersion(
        Sent("client", "notification"), {"2026-07-28": t.CancelledNotification}
    ),
    "ServerNotification": Sent("server", "notification"),
    # 2026-07-28: a client answers no requests, so its result union is plain Result.
    "ClientResult": ByVersion(Answered("client"), {"2026-07-28": t.Result}),
    "ServerResult": Answered("server"),
    # --- lifecycle
    "InitializeRequest": t.InitializeRequest,
    "InitializeRequestParams": t.InitializeRequestParams,
    "InitializeResult": t.InitializeResult,
    "InitializedNotification": t.InitializedNotification,
    "PingRequest": t.PingRequest,
    "DiscoverRequest": t.DiscoverRequest,
    "DiscoverResult": t.DiscoverResult,
    "ClientCapabilities": t.ClientCapabilities,
    "ServerCapabilities": t.ServerCapabilities,
    # --- content
    "Annotations": t.Annotations,
    "TextContent": t.TextContent,
    "ImageContent": t.ImageContent,
    "AudioContent": t.AudioContent,
    "ResourceLink": t.ResourceLink,
    "EmbeddedResource": t.EmbeddedResource,
    "ToolUseContent": t.ToolUseContent,
    "ToolResultContent": t.ToolResultContent,
    "ContentBlock": t.ContentBlock,
    "SamplingMessageContentBlock": t.SamplingMessageContentBlock,
    "ResourceContents": t.ResourceContents,
    "TextResourceContents": t.TextResourceContents,
    "BlobResourceContents": t.BlobResourceContents,
    # --- tools
    "Tool": t.Tool,
    "ToolAnnotations": t.ToolAnnotations,
    "ToolExecution": t.ToolExecution,
    "ListToolsRequest": t.ListToolsRequest,
    "ListToolsResult": t.ListToolsResult,
    "CallToolRequest": t.CallToolRequest,
    "CallToolRequestParams": t.CallToolRequestParams,
    "CallToolResult": t.CallToolResult,
    "ToolListChangedNotification": t.ToolListChangedNotification,
    # --- resources
    "Resource": t.Resource,
    "ResourceTemplate": t.ResourceTemplate,
    "ListResourcesRequest": t.ListResourcesRequest,
    "ListResourcesResult": t.ListResourcesResult,
    "ListResourceTemplatesRequest": t.ListResourceTemplatesRequest,
    "ListResourceTemplatesResult": t.ListResourceTemplatesResult,
    "ResourceRequestParams": t.ResourceRequestParams,
    "ReadResourceRequest": t.ReadResourceRequest,
    "ReadResourceRequestParams": t.ReadResourceRequestParams,
    "ReadResourceResult": t.ReadResourceResult,
    "SubscribeRequest": t.SubscribeRequest,
    "SubscribeRequestParams": t.SubscribeRequestParams,
    "UnsubscribeRequest": t.UnsubscribeRequest,
    "UnsubscribeRequestParams": t.UnsubscribeRequestParams,
    "ResourceListChangedNotification": t.ResourceListChangedNotification,
    "ResourceUpdatedNotification": t.ResourceUpdatedNotification,
    "ResourceUpdatedNotificationParams": t.ResourceUpdatedNotificationParams,
    # --- prompts
    "Prompt": t.Prompt,
    "PromptArgument": t.PromptArgument,
    "PromptMessage": t.PromptMessage,
    "ListPromptsRequest": t.ListPromptsRequest,
    "ListPromptsResult": t.ListPromptsResult,
    "GetPromptRequest": t.GetPromptRequest,
    "GetPromptRequestParams": t.GetPromptRequestParams,
    "GetPromptResult": t.GetPromptResult,
    "PromptListChangedNotification": t.PromptListChangedNotification,
    # --- completion
    "PromptReference": t.PromptReference,
    "ResourceTemplateReference": t.ResourceTemplateReference,
    "CompleteRequest": t.CompleteRequest,
    "CompleteRequestParams": t.CompleteRequestParams,
    "CompleteResult": t.CompleteResult,
    # --- logging, progress, cancellation
    "SetLevelRequest": t.SetLevelRequest,
    "SetLevelRequestParams": t.SetLevelRequestParams,
    "LoggingMessageNotification": t.LoggingMessageNotification,
    "LoggingMessageNotificationParams": t.LoggingMessageNotificationParams,
    "ProgressNotification": t.ProgressNotification,
    "ProgressNotificationParams": t.ProgressNotificationParams,
    "CancelledNotification": t.CancelledNotification,
    "CancelledNotificationParams": t.CancelledNotificationParams,
    # --- roots
    "Root": t.Root,
    "ListRootsRequest": t.ListRootsRequest,
    "ListRootsResult": t.ListRootsResult,
    "RootsListChangedNotification": t.RootsListChangedNotification,
    # --- sampling
    "SamplingMessage": t.SamplingMessage,
    "ModelHint": t.ModelHint,
    "ModelPreferences": t.ModelPreferences,
    "ToolChoice": t.ToolChoice,
    "CreateMessageRequest": t.CreateMessageRequest,
    "CreateMessageRequestParams": t.CreateMessageRequestParams,
    "CreateMessageResult": t.CreateMessageResult,
    # --- elicitation
    "ElicitRequest": t.ElicitRequest,
    "ElicitRequestParams": t.ElicitRequestParams,
    "ElicitRequestFormParams": t.ElicitRequestFormParams,
    "ElicitRequestURLParams": t.ElicitRequestURLParams,
    "ElicitResult": t.ElicitResult,
    "ElicitationCompleteNotification": t.ElicitationCompleteNotification,
    "PrimitiveSchemaDefinition": t.PrimitiveSchemaDefinition,
    "StringSchema": t.StringSchema,
    "NumberSchema": t.NumberSchema,
    "BooleanSchema": t.BooleanSchema,
    "UntitledSingleSelectEnumSchema": t.UntitledSingleSelectEnumSchema,
    "TitledSingleSelectEnumSchema": t.TitledSingleSelectEnumSchema,
    "UntitledMultiSelectEnumSchema": t.UntitledMultiSelectEnumSchema,
    "TitledMultiSelectEnumSchema": t.TitledMultiSelectEnumSchema,
    "LegacyTitledEnumSchema": t.LegacyTitledEnumSchema,
    "SingleSelectEnumSchema": t.SingleSelectEnumSchema,
    "MultiSelectEnumSchema": t.MultiSelectEnumSchema,
    # 2025-06-18's EnumSchema is the one enum shape it had: our LegacyTitledEnumSchema.
    "EnumSchema": ByVersion(t.EnumSchema, {"2025-06-18": t.LegacyTitledEnumSchema}),
    # --- multi round-trip requests (2026-07-28)
    "InputRequest": t.InputRequest,
    "InputRequests": t.InputRequests,
    "InputResponse": t.InputResponse,
    "InputResponses": t.InputResponses,
    "InputRequiredResult": t.InputRequiredResult,
    "InputResponseRequestParams": t.InputResponseRequestParams,
    # --- subscriptions (2026-07-28)
    "SubscriptionFilter": t.SubscriptionFilter,
    "SubscriptionsListenRequest": t.SubscriptionsListenRequest,
    "SubscriptionsListenRequestParams": t.SubscriptionsListenRequestParams,
    "SubscriptionsListenResult": t.SubscriptionsListenResult,
    "SubscriptionsAcknowledgedNotification": t.SubscriptionsAcknowledgedNotification,
    "SubscriptionsAcknowledgedNotificationParams": t.SubscriptionsAcknowledgedNotificationParams,
    # --- tasks (2025-11-25)
    "Task": t.Task,
    "TaskMetadata": t.TaskMetadata,
    "RelatedTaskMetadata": t.RelatedTaskMetadata,
    "TaskAugmentedRequestParams": t.TaskAugmentedRequestParams,
    "CreateTaskResult": t.CreateTaskResult,
    "GetTaskRequest": t.GetTaskRequest,
    "GetTaskResult": t.GetTaskResult,
    "GetTaskPayloadRequest": t.GetTaskPayloadRequest,
    "GetTaskPayloadResult": t.GetTaskPayloadResult,
    "CancelTaskRequest": t.CancelTaskRequest,
    "CancelTaskResult": t.CancelTaskResult,
    "ListTasksRequest": t.ListTasksRequest,
    "ListTasksResult": t.ListTasksResult,
    "TaskStatusNotification": t.TaskStatusNotification,
    "TaskStatusNotificationParams": t.TaskStatusNotificationParams,
}


# --- Reasons a schema-required property may have a default here ------------------------------

#: (definition path, wire property) -> why our attribute has a default.
DEFAULTED: dict[tuple[str, str], str] = {
    ("CancelledNotificationParams", "requestId"): (
        "optional in 2025-11-25 (tasks are cancelled with tasks/cancel), required in the "
        "other revisions; the session always sends it"
    ),
    ("CancelledNotification.params", "requestId"): "as CancelledNotificationParams.requestId",
    ("ElicitRequestURLParams", "elicitationId"): (
        "required in 2025-11-25 only; 2026-07-28 dropped it (correlation is by requestState)"
    ),
    # The error object is one model for every error; these errors always carry data, which
    # the exceptions that make them set (checked by test_emitted_schema).
    ("UnsupportedProtocolVersionError.error", "data"): "UnsupportedProtocolVersion sets it",
    ("MissingRequiredClientCapabilityError.error", "data"): (
        "MissingRequiredClientCapability sets it"
    ),
    ("URLElicitationRequiredError.error", "data"): (
        "built from URLElicitationRequiredErrorData by whoever raises the error"
    ),
}


def _why_defaulted(path: str, prop: str, prop_schema: Any, cls: type, attribute: Any) -> str | None:
    """Why a property the schema requires may be left out when building our model."""
    if isinstance(prop_schema, dict) and attribute.default == prop_schema.get(
        "const", attrs.NOTHING
    ):
        return "a fixed tag (method, type, mode): the class is the value"
    if prop == "resultType" and attribute.default in ("complete", "input_required"):
        return (
            "defaults to 'complete': legacy peers never send it and the spec says to read "
            "its absence as 'complete'; always written to 2026-07-28 peers"
        )
    if attribute.name in _merged(cls, "__wire_defaults__"):
        return (
            "None means 'not given' (a legacy peer sends no caching hints); the converter "
            "writes __wire_defaults__ (0 ms, private) for it to 2026-07-28 peers"
        )
    if prop == "_meta" and _ref_name(prop_schema) == "RequestMetaObject":
        return (
            "2026-07-28 puts the per-request envelope in _meta; the session adds it "
            "(trio_mcp.protocol.write_envelope), and legacy revisions make _meta optional"
        )
    if prop == "params":
        return (
            "2026-07-28 requires params because the envelope lives in params._meta; the "
            "session always writes them there, and legacy revisions let params be omitted"
        )
    return DEFAULTED.get((path, prop))


_INPUT_OBJECTS_META = (
    "2026-07-28 lists no _meta on the objects inside inputRequests and inputResponses (they no "
    "longer extend Request and Result), yet keeps it on CreateMessageResult and every object "
    "accepts additional properties; we write what the caller set rather than drop it"
)

#: Attributes written to peers of a revision whose definition does not list them. No
#: definition forbids additional properties, so this is legal; each is a decision:
#: (class, attribute) -> (revisions, reason).
EXTRA_ATTRIBUTES: dict[tuple[type, str], tuple[frozenset[str], str]] = {
    (t.CreateMessageRequestParams, "meta"): (frozenset({"2026-07-28"}), _INPUT_OBJECTS_META),
    (t.ElicitRequestFormParams, "meta"): (frozenset({"2026-07-28"}), _INPUT_OBJECTS_META),
    (t.ElicitRequestURLParams, "meta"): (frozenset({"2026-07-28"}), _INPUT_OBJECTS_META),
    (t.ElicitResult, "meta"): (frozenset({"2026-07-28"}), _INPUT_OBJECTS_META),
    (t.ListRootsResult, "meta"): (frozenset({"2026-07-28"}), _INPUT_OBJECTS_META),
    (t.ClientCapabilities, "extensions"): (
        frozenset(v for v in VERSIONS if v != "2026-07-28"),
        "hosts of the MCP Apps extension declare capabilities.extensions on initialize-era "
        "connections too (SEP-1865's own example); servers of those revisions ignore it",
    ),
    (t.SubscriptionFilter, "task_ids"): (
        frozenset({"2026-07-28"}),
        "the tasks extension's filter key (TaskSubscriptionNotifications in its schema), "
        "written only when the client asks for task status notifications",
    ),
    (t.GetTaskPayloadResult, "extra"): (
        frozenset(VERSIONS),
        "not a property: its keys are written at the top level of the result, which the "
        "definition allows (additionalProperties)",
    ),
}


def _why_extra(path: str, cls: type, attribute: str, version: str) -> str | None:
    """Why an attribute may be written although the definition does not list it."""
    if attribute == "meta" and path.endswith(".params"):
        return (
            "inline params (2025-06-18, the tasks requests of 2025-11-25) repeat only their own "
            "fields; the base Request and Notification definitions give every params _meta"
        )
    allowed = EXTRA_ATTRIBUTES.get((cls, attribute))
    if allowed is not None and version in allowed[0]:
        return allowed[1]
    return None


# --- Schema helpers -------------------------------------------------------------------------


def _definitions(schema: dict[str, Any]) -> dict[str, Any]:
    return schema.get("$defs") or schema["definitions"]  # type: ignore[no-any-return]


def _ref_name(node: Any) -> str | None:
    if isinstance(node, dict) and "$ref" in node:
        return str(node["$ref"]).rsplit("/", 1)[-1]
    return None


def _resolve(defs: dict[str, Any], node: Any) -> Any:
    while (name := _ref_name(node)) is not None:
        node = defs[name]
    return node


def _object_shape(defs: dict[str, Any], node: Any) -> tuple[dict[str, Any], set[str]] | None:
    """The properties and required names of an object schema (``allOf`` merged)."""
    node = _resolve(defs, node)
    if not isinstance(node, dict):
        return None
    if "allOf" in node:
        properties: dict[str, Any] = {}
        required: set[str] = set()
        for part in node["allOf"]:
            shape = _object_shape(defs, part)
            if shape is not None:
                properties.update(shape[0])
                required |= shape[1]
        return properties, required
    if "properties" in node:
        return dict(node["properties"]), set(node.get("required", ()))
    return None


def _target(name: str, version: str) -> Any:
    """What represents ``name`` in ``version`` (``None`` if the mapping lacks it: that is
    :func:`test_every_definition_has_a_model`'s failure to report)."""
    target = DEFINITIONS.get(name)
    return target.for_version(version) if isinstance(target, ByVersion) else target


def _strip_none(tp: Any) -> Any:
    if get_origin(tp) in (Union, types.UnionType):
        members = [a for a in get_args(tp) if a is not type(None)]
        if len(members) == 1:
            return members[0]
    return tp


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and attrs.has(tp)


def _union_members(tp: Any) -> set[Any]:
    if get_origin(tp) in (Union, types.UnionType):
        return set(get_args(tp))
    return {tp}


def _literal_values(tp: Any) -> set[Any] | None:
    values: set[Any] = set()
    for member in _union_members(tp):
        if member is type(None):
            continue
        if get_origin(member) is not Literal:
            return None
        values |= set(get_args(member))
    return values


def _schemas() -> Iterator[tuple[str, dict[str, Any]]]:
    for version in VERSIONS:
        schema = load_schema(version)
        if schema is not None:
            yield version, schema


def _schema_or_skip(version: str) -> dict[str, Any]:
    schema = load_schema(version)
    if schema is None:
        pytest.skip(f"the {version} schema is not available")
    return schema


# --- Comparing one object definition with one model ------------------------------------------


def _compare_object(
    defs: dict[str, Any],
    version: str,
    path: str,
    shape: tuple[dict[str, Any], set[str]],
    cls: type,
    problems: list[str],
) -> None:
    properties, required = shape
    _resolve_types(cls)
    by_wire = {t.wire_name(cls, a.name): a for a in attrs.fields(cls)}
    for prop, prop_schema in properties.items():
        if prop in ENVELOPE_FIELDS:
            continue
        attribute = by_wire.get(prop)
        if attribute is None:
            problems.append(f"{path}.{prop}: no attribute of {cls.__name__} has this wire name")
            continue
        where = f"{path}.{prop} ({cls.__name__}.{attribute.name})"
        if not _present_in(cls, attribute.name, version):
            problems.append(f"{where}: the revision markers leave it out of {version}")
        defaulted = prop in required and attribute.default is not attrs.NOTHING
        if defaulted and _why_defaulted(path, prop, prop_schema, cls, attribute) is None:
            problems.append(f"{where}: required by the schema but has a default")
        _compare_values(defs, version, where, prop_schema, attribute.type, problems)
        inner = _strip_none(attribute.type)
        nested = _object_shape(defs, prop_schema) if _ref_name(prop_schema) is None else None
        if nested is not None and _is_model(inner):
            _compare_object(defs, version, f"{path}.{prop}", nested, inner, problems)
        items = prop_schema.get("items") if isinstance(prop_schema, dict) else None
        if get_origin(inner) is list and items is not None and _ref_name(items) is None:
            nested = _object_shape(defs, items)
            (item_type,) = get_args(inner)
            if nested is not None and _is_model(item_type):
                _compare_object(defs, version, f"{path}.{prop}[]", nested, item_type, problems)
    if not cls.__module__.startswith("trio_mcp._types."):
        return  # the JSON-RPC layer's messages: the definitions list their envelope fields
    for attribute in attrs.fields(cls):
        wire = t.wire_name(cls, attribute.name)
        if wire in properties or not _present_in(cls, attribute.name, version):
            continue
        if _why_extra(path, cls, attribute.name, version) is None:
            problems.append(
                f"{path}: {cls.__name__}.{attribute.name} ({wire}) is written to {version} "
                "peers but the schema has no such property"
            )


def _compare_values(
    defs: dict[str, Any], version: str, where: str, prop_schema: Any, tp: Any, problems: list[str]
) -> None:
    """A ``const`` or ``enum`` property against a ``Literal`` attribute."""
    node = _resolve(defs, prop_schema)
    if not isinstance(node, dict):
        return
    literal = _literal_values(tp)
    if literal is None:
        return
    if "const" in node and node["const"] not in literal:
        problems.append(f"{where}: schema value {node['const']!r}, ours {sorted(literal)}")
    if "enum" in node and set(node["enum"]) != literal:
        problems.append(f"{where}: schema values {sorted(node['enum'])}, ours {sorted(literal)}")


# --- The checks -------------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_every_definition_has_a_model(version: str) -> None:
    defs = _definitions(_schema_or_skip(version))
    missing = sorted(set(defs) - set(DEFINITIONS))
    assert not missing, f"definitions of {version} without a model in DEFINITIONS: {missing}"


def test_the_mapping_names_only_real_definitions() -> None:
    schemas = dict(_schemas())
    if len(schemas) < len(VERSIONS):
        pytest.skip("the spec schemas are not all available")
    known = set().union(*(_definitions(s) for s in schemas.values()))
    assert sorted(set(DEFINITIONS) - known) == []


@pytest.mark.parametrize("version", VERSIONS)
def test_object_definitions_match_their_models(version: str) -> None:
    defs = _definitions(_schema_or_skip(version))
    problems: list[str] = []
    checked = 0
    for name in sorted(defs):
        target = _target(name, version)
        shape = _object_shape(defs, defs[name])
        if not _is_model(target) or shape is None or _ref_name(defs[name]) is not None:
            continue
        checked += 1
        _compare_object(defs, version, name, shape, target, problems)
    assert checked > 50
    assert not problems, "\n".join(problems)


#: Unions whose alias has members an older revision lacks (the alias follows the newest):
#: (definition, version) -> reason.
UNIONS_GREW: dict[tuple[str, str], str] = {
    ("PrimitiveSchemaDefinition", "2025-06-18"): (
        "titled and multi-select enums came in 2025-11-25; requestedSchema is plain JSON in "
        "the model, so no revision marker can drop them, and the strategies leave them out "
        "for 2025-06-18"
    ),
}


def _member_targets(defs: dict[str, Any], version: str, node: dict[str, Any]) -> set[Any] | None:
    members: set[Any] = set()
    for part in node["anyOf"]:
        name = _ref_name(part)
        if name is None:
            return None  # an inline member (JSONValue's scalars): nothing to compare
        members |= _union_members(_target(name, version))
    return members


@pytest.mark.parametrize("version", VERSIONS)
def test_union_definitions_match_their_aliases(version: str) -> None:
    defs = _definitions(_schema_or_skip(version))
    problems = []
    for name, node in sorted(defs.items()):
        target = _target(name, version)
        if "anyOf" not in node or isinstance(target, Sent | Answered):
            continue
        expected = _member_targets(defs, version, node)
        if expected is None:
            continue
        ours = _union_members(target)
        grew = UNIONS_GREW.get((name, version))
        if ours != expected and not (grew is not None and ours > expected):
            problems.append(f"{name}: schema members {expected}, ours {ours}")
    assert not problems, "\n".join(problems)


_JSON_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "object": dict,
    "array": list,
}


@pytest.mark.parametrize("version", VERSIONS)
def test_scalar_definitions_match_their_aliases(version: str) -> None:
    defs = _definitions(_schema_or_skip(version))
    problems = []
    for name, node in sorted(defs.items()):
        target = _target(name, version)
        if "properties" in node or "anyOf" in node or "allOf" in node:
            continue
        if "$ref" in node:
            base = _target(str(_ref_name(node)), version)
            if not (isinstance(target, type) and issubclass(target, base)):
                problems.append(f"{name}: refers to {base}, ours is {target}")
            continue
        if "enum" in node:
            if _literal_values(target) != set(node["enum"]):
                problems.append(f"{name}: schema values {node['enum']}, ours {target}")
            continue
        kinds = node["type"] if isinstance(node["type"], list) else [node["type"]]
        expected = {_JSON_TYPES[kind] for kind in kinds}
        ours = {get_origin(member) or member for member in _union_members(target)}
        if ours != expected:
            problems.append(f"{name}: schema types {kinds}, ours {target}")
    assert not problems, "\n".join(problems)


#: Methods the table lets a side send in a revision although that revision's union leaves
#: them out: (union, version) -> {method: reason}.
LOOSER_THAN_SCHEMA: dict[tuple[str, str], dict[str, str]] = {
    ("ClientNotification", "2026-07-28"): {
        "notifications/progress": (
            "METHODS has one sender per method; progress is 'both' for the legacy era. In "
            "2026-07-28 a client receives no requests, so it never has a progress token to "
            "report on and the session never sends one"
        ),
    },
}


def _sent(version: str, sender: str, kind: str) -> set[str]:
    return {
        spec.method
        for spec in t.METHODS.values()
        if spec.sender in (sender, "both")
        and spec.is_request == (kind == "request")
        and spec.in_version(version)
    }


def _method_of(defs: dict[str, Any], name: str) -> str:
    return str(defs[name]["properties"]["method"]["const"])


_UNIONS = (
    ("ClientRequest", Sent("client", "request")),
    ("ServerRequest", Sent("server", "request")),
    ("ClientNotification", Sent("client", "notification")),
    ("ServerNotification", Sent("server", "notification")),
)


@pytest.mark.parametrize("version", VERSIONS)
def test_message_unions_match_the_method_table(version: str) -> None:
    defs = _definitions(_schema_or_skip(version))
    problems = []
    for name, sent in _UNIONS:
        node = defs.get(name)
        if node is None:
            schema_methods: set[str] = set()  # no such union: that side sends none
        elif "anyOf" in node:
            schema_methods = {_method_of(defs, str(_ref_name(m))) for m in node["anyOf"]}
        else:
            schema_methods = {str(node["properties"]["method"]["const"])}
        ours = _sent(version, sent.sender, sent.kind)
        looser = set(LOOSER_THAN_SCHEMA.get((name, version), {}))
        if schema_methods != ours - looser:
            problems.append(f"{name}: schema {sorted(schema_methods)}, METHODS {sorted(ours)}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("version", VERSIONS)
def test_result_unions_match_the_method_table(version: str) -> None:
    defs = _definitions(_schema_or_skip(version))
    problems = []
    for name, answerer in (("ClientResult", "client"), ("ServerResult", "server")):
        node = defs[name]
        refs = [str(_ref_name(m)) for m in node["anyOf"]] if "anyOf" in node else []
        schema_results = {_target(ref, version) for ref in refs}
        # Result itself stands for EmptyResult; InputRequiredResult answers any MRTR request.
        schema_results -= {t.Result, t.InputRequiredResult}
        requester = "server" if answerer == "client" else "client"
        ours = {
            spec.result
            for spec in t.METHODS.values()
            if spec.is_request
            and spec.sender in (requester, "both")
            and spec.in_version(version)
            and spec.result is not t.EmptyResult
        }
        if schema_results != ours:
            problems.append(f"{name}: schema {schema_results}, METHODS {ours}")
    assert not problems, "\n".join(problems)


def test_error_codes_are_known() -> None:
    schemas = dict(_schemas())
    if not schemas:
        pytest.skip("the spec schemas are not available")
    codes: dict[str, int] = {}
    for defs in map(_definitions, schemas.values()):
        _collect_codes(defs, codes)
    assert codes, "no error definitions found"
    unknown = {name: code for name, code in codes.items() if code not in set(ErrorCode)}
    assert not unknown


def _collect_codes(defs: dict[str, Any], codes: dict[str, int]) -> None:
    for name, node in defs.items():
        shape = _object_shape(defs, node)
        if shape is None:
            continue
        if "code" in shape[0] and "const" in shape[0]["code"]:
            codes[name] = shape[0]["code"]["const"]
        error = _object_shape(defs, shape[0].get("error"))
        if error is not None and "const" in error[0].get("code", {}):
            codes[name] = error[0]["code"]["const"]
