"""What we write validates against the official JSON Schema of the revision in use.

For every definition of the 2026-07-28, 2025-11-25 and 2025-06-18 schemas (as mapped in
``test_types_coverage.DEFINITIONS``), instances drawn with
``trio_mcp.testing.strategy_for(model, version=...)`` are written with
``converter_for(version)``, wrapped the way the session sends them, and validated against
that definition of that revision's schema with ``jsonschema`` (the schema's own
definitions resolve every ``$ref``; nothing is fetched).

Messages are checked as the session emits them: requests and notifications in a JSON-RPC
envelope, modern (2026-07-28) client requests with the per-request ``_meta`` envelope
(``trio_mcp.protocol.write_envelope``), modern results with ``serverInfo`` in ``_meta``
(as ``Connection.respond`` adds it), errors as ``McpError.error`` serialized by
:mod:`trio_mcp.jsonrpc`.

Where a model can carry more than a revision's schema allows and revision markers cannot
express it (a value, not an attribute, differs), the strategies leave it out for that
revision; ``WIDER_THAN_SCHEMA`` lists each such case with an instance that the schema
does reject, so the list stays exact.

Only these checks skip, when the schema files are absent.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, get_args

import attrs
import orjson
import pytest
from hypothesis import given, settings, strategies as st
from jsonschema import Draft7Validator, Draft202012Validator
from jsonschema.exceptions import best_match
from jsonschema.protocols import Validator
from spec_support import SCHEMA_FILES, load_schema
from test_types_coverage import DEFINITIONS, Answered, ByVersion, Sent

import trio_mcp
from trio_mcp import jsonrpc, types as t
from trio_mcp._types._converter import _resolve
from trio_mcp._versions import FIRST_MODERN_VERSION
from trio_mcp.protocol import write_envelope
from trio_mcp.testing import (
    json_objects,
    json_values,
    meta_objects,
    progress_tokens,
    request_ids,
    strategy_for,
)

VERSIONS = tuple(SCHEMA_FILES)
SCHEMAS = {version: load_schema(version) for version in VERSIONS}

#: A handful of drawn instances per definition on the CI profile (each nested definition
#: is also validated inside every message that contains it); deeper profiles scale up.
FEW = settings(max_examples=max(5, settings.default.max_examples // 12))

Documents = st.SearchStrategy[Any]


# --- Validators --------------------------------------------------------------------------------


def _defs_key(schema: dict[str, Any]) -> str:
    return "$defs" if "$defs" in schema else "definitions"


@functools.cache
def _validator(version: str, name: str) -> Validator:
    schema = SCHEMAS[version]
    assert schema is not None
    key = _defs_key(schema)
    root = {"$schema": schema["$schema"], key: schema[key], "$ref": f"#/{key}/{name}"}
    cls = Draft202012Validator if "2020-12" in schema["$schema"] else Draft7Validator
    return cls(root)  # type: ignore[no-any-return]


def _problem(version: str, name: str, document: Any) -> str | None:
    error = best_match(_validator(version, name).iter_errors(document))
    if error is None:
        return None
    where = "/".join(map(str, error.absolute_path)) or "(top)"
    text = orjson.dumps(document).decode()
    return f"{name} ({version}) at {where}: {error.message[:300]}\n  document: {text[:1500]}"


def _assert_valid(version: str, name: str, document: Any) -> None:
    problem = _problem(version, name, document)
    assert problem is None, problem


# --- What the session writes ---------------------------------------------------------------------


def _write(version: str) -> Callable[[Any], Any]:
    return t.converter_for(version).unstructure  # type: ignore[no-any-return]


def _is_modern(version: str) -> bool:
    return version >= FIRST_MODERN_VERSION


@functools.cache
def _client_envelopes(version: str) -> Documents:
    """What a modern client puts in every request's ``_meta``: version, capabilities, info."""
    write = _write(version)
    return st.builds(
        lambda caps, info, level: {
            "protocol_version": version,
            "client_capabilities": write(caps),
            "client_info": None if info is None else write(info),
            "log_level": level,
        },
        strategy_for(t.ClientCapabilities, version=version),
        st.none() | strategy_for(t.Implementation, version=version),
        st.none() | st.sampled_from(t.LOGGING_LEVELS),
    )


def _spec(cls: type, version: str) -> t.MethodSpec | None:
    spec = t.METHODS.get(attrs.fields_dict(cls)["method"].default)
    return spec if spec is not None and spec.in_version(version) else None


@functools.cache
def _message(version: str, cls: type) -> Documents:
    """A request or notification as the session sends it on ``version``.

    A method the revision does not send on its own (2026-07-28's input requests, which
    travel inside ``inputRequests``) is written bare: ``{"method", "params"}``.
    """
    write = _write(version)
    spec = _spec(cls, version)
    is_request = issubclass(cls, t.Request)
    needs_envelope = (
        _is_modern(version) and spec is not None and is_request and spec.sender != "server"
    )

    def build(value: Any, id: Any, envelope: dict[str, Any]) -> dict[str, Any]:
        params = None if value.params is None else write(value.params)
        if needs_envelope:
            params = write_envelope(params, **envelope)
        if spec is None:
            return {"method": value.method, **({} if params is None else {"params": params})}
        message = (
            jsonrpc.JsonRpcRequest(id, value.method, params)
            if is_request
            else jsonrpc.JsonRpcNotification(value.method, params)
        )
        return jsonrpc.serialize(message)

    envelopes = _client_envelopes(version) if needs_envelope else st.just({})
    return st.builds(build, strategy_for(cls, version=version), request_ids(), envelopes)


#: Params of the requests a modern server sends inside ``inputRequests``: no envelope.
_INPUT_REQUEST_PARAMS = (
    t.CreateMessageRequestParams,
    t.ElicitRequestFormParams,
    t.ElicitRequestURLParams,
)


@functools.cache
def _params(version: str, cls: type) -> Documents:
    """Request params as the session writes them: with the envelope in ``_meta`` when a
    modern client sends them."""
    write = _write(version)
    if not _is_modern(version) or cls in _INPUT_REQUEST_PARAMS:
        return strategy_for(cls, version=version).map(write)
    return st.builds(
        lambda value, envelope: write_envelope(write(value), **envelope),
        strategy_for(cls, version=version),
        _client_envelopes(version),
    )


@functools.cache
def _result(version: str, cls: type) -> Documents:
    """A result as written by the model (what the definition of the result describes)."""
    return strategy_for(cls, version=version).map(_write(version))


@functools.cache
def _response(version: str, results: tuple[type, ...]) -> Documents:
    """A JSON-RPC result response, with ``serverInfo`` added to a modern result's ``_meta``
    the way ``Connection.respond`` does."""
    write = _write(version)

    def build(result: dict[str, Any], id: Any, info: Any) -> dict[str, Any]:
        if _is_modern(version):
            meta = dict(result.get("_meta") or {})
            meta.setdefault("io.modelcontextprotocol/serverInfo", write(info))
            result = {**result, "_meta": meta}
        return jsonrpc.serialize(jsonrpc.ResultResponse(id, result))

    return st.builds(
        build,
        st.one_of([_result(version, cls) for cls in results]),
        request_ids(),
        strategy_for(t.Implementation, version=version),
    )


def _error(code: int, data: Documents | None = None) -> Documents:
    """The error object of an ``McpError`` as :func:`trio_mcp.jsonrpc.serialize` writes it."""
    return st.builds(
        lambda message, data, id: jsonrpc.serialize(
            jsonrpc.ErrorResponse(id, trio_mcp.McpError(message, code=code, data=data).error)
        ),
        st.text(max_size=10),
        st.none() if data is None else data,
        request_ids(),
    )


def _error_responses(version: str) -> Documents:
    codes = [int(code) for code in trio_mcp.ErrorCode if code not in (-32000, -32001)]
    return st.sampled_from(codes).flatmap(lambda code: _error(code, st.none() | json_values()))


# --- Which documents each definition gets ----------------------------------------------------


def _sent(version: str, sender: str | None, kind: str) -> list[type]:
    for spec in t.METHODS.values():
        _resolve(spec.model)
    return [
        spec.model
        for spec in t.METHODS.values()
        if spec.in_version(version)
        and spec.is_request == (kind == "request")
        and (sender is None or spec.sender in (sender, "both"))
    ]


def _answered(version: str, answerer: str | None) -> list[type]:
    requester = {"client": "server", "server": "client", None: None}[answerer]
    results = {
        spec.result
        for spec in t.METHODS.values()
        if spec.is_request
        and spec.in_version(version)
        and (requester is None or spec.sender in (requester, "both"))
    }
    if _is_modern(version) and answerer != "client":
        results.add(t.InputRequiredResult)
    return sorted(results or {t.EmptyResult}, key=lambda cls: cls.__name__)


def _messages(version: str, models: list[type]) -> Documents:
    return st.one_of([_message(version, cls) for cls in models])


#: 2026-07-28's per-result response envelopes: the results each one carries.
_RESULT_RESPONSES = {
    "CallToolResultResponse": (t.CallToolResult, t.InputRequiredResult),
    "CompleteResultResponse": (t.CompleteResult,),
    "DiscoverResultResponse": (t.DiscoverResult,),
    "GetPromptResultResponse": (t.GetPromptResult, t.InputRequiredResult),
    "ListPromptsResultResponse": (t.ListPromptsResult,),
    "ListResourceTemplatesResultResponse": (t.ListResourceTemplatesResult,),
    "ListResourcesResultResponse": (t.ListResourcesResult,),
    "ListToolsResultResponse": (t.ListToolsResult,),
    "ReadResourceResultResponse": (t.ReadResourceResult, t.InputRequiredResult),
    "SubscriptionsListenResultResponse": (t.SubscriptionsListenResult,),
}


def _special(version: str, name: str) -> Documents | None:
    """Documents for definitions that are not one model written as is."""
    write = _write(version)
    E = trio_mcp.ErrorCode
    if name in _RESULT_RESPONSES:
        return _response(version, _RESULT_RESPONSES[name])
    if name in ("JSONRPCResultResponse",) or (name, version) == ("JSONRPCResponse", "2025-06-18"):
        return _response(version, tuple(_answered(version, None)))
    if name in ("JSONRPCErrorResponse", "JSONRPCError"):
        return _error_responses(version)
    if name == "JSONRPCResponse":
        return _response(version, tuple(_answered(version, None))) | _error_responses(version)
    if name in ("JSONRPCRequest", "Request"):
        return _messages(version, _sent(version, None, "request"))
    if name in ("JSONRPCNotification", "Notification"):
        return _messages(version, _sent(version, None, "notification"))
    if name == "JSONRPCMessage":
        return st.one_of(
            _messages(
                version, _sent(version, None, "request") + _sent(version, None, "notification")
            ),
            _response(version, tuple(_answered(version, None))),
            _error_responses(version),
        )
    if name == "PaginatedRequest":
        paginated = [
            cls
            for cls in _sent(version, None, "request")
            if t.PaginatedRequestParams in get_args(attrs.fields_dict(cls)["params"].type)
        ]
        return _messages(version, paginated)
    codes = {
        "ParseError": E.PARSE_ERROR,
        "InvalidRequestError": E.INVALID_REQUEST,
        "MethodNotFoundError": E.METHOD_NOT_FOUND,
        "InvalidParamsError": E.INVALID_PARAMS,
        "InternalError": E.INTERNAL_ERROR,
    }
    if name in codes:
        return _error(codes[name], st.none() | json_values()).map(lambda r: r["error"])
    if name == "HeaderMismatchError":
        return _error(E.HEADER_MISMATCH)
    if name == "MissingRequiredClientCapabilityError":
        return st.builds(
            lambda caps, id: jsonrpc.serialize(
                jsonrpc.ErrorResponse(
                    id, trio_mcp.MissingRequiredClientCapability(required_capabilities=caps).error
                )
            ),
            strategy_for(t.ClientCapabilities, version=version).map(write),
            request_ids(),
        )
    if name == "UnsupportedProtocolVersionError":
        return st.builds(
            lambda supported, requested, id: jsonrpc.serialize(
                jsonrpc.ErrorResponse(
                    id,
                    trio_mcp.UnsupportedProtocolVersion(
                        supported=supported, requested=requested
                    ).error,
                )
            ),
            st.lists(st.sampled_from(VERSIONS), min_size=1, unique=True),
            st.text(max_size=12),
            request_ids(),
        )
    if name == "URLElicitationRequiredError":
        return _error(
            E.URL_ELICITATION_REQUIRED,
            strategy_for(t.URLElicitationRequiredErrorData, version=version).map(write),
        )
    scalars: dict[str, Documents] = {
        "RequestId": request_ids(),
        "ProgressToken": progress_tokens(),
        "Cursor": st.text(max_size=8),
        "ResultType": st.sampled_from(["complete", "input_required"]),
        "MetaObject": meta_objects(),
        # 2026-07-28's JSONValue has no non-integral numbers and no null: see WIDER_THAN_SCHEMA.
        "JSONValue": json_values(floats=False, null=False),
        "JSONObject": json_objects(floats=False, null=False),
        "JSONArray": st.lists(json_values(floats=False, null=False), max_size=3),
    }
    if name in scalars:
        return scalars[name]
    if name in ("Role", "LoggingLevel", "TaskStatus"):
        return st.sampled_from(get_args(DEFINITIONS[name]))
    if name in ("InputRequests", "InputResponses"):
        member = t.InputRequest if name == "InputRequests" else t.InputResponse
        return st.dictionaries(
            st.text(max_size=5), strategy_for(member, version=version).map(write), max_size=3
        )
    return None


def _documents(version: str, name: str) -> Documents:
    special = _special(version, name)
    if special is not None:
        return special
    target = DEFINITIONS[name]
    if isinstance(target, ByVersion):
        target = target.for_version(version)
    if isinstance(target, Sent):
        return _messages(version, _sent(version, target.sender, target.kind))
    if isinstance(target, Answered):
        return st.one_of([_result(version, cls) for cls in _answered(version, target.answerer)])
    if isinstance(target, type) and issubclass(target, t.Request | t.Notification):
        return _message(version, target)
    if isinstance(target, type) and issubclass(target, t.RequestParams):
        return _params(version, target)
    # A model, or a union of models (ContentBlock, InputRequest, ...), written as is.
    return strategy_for(target, version=version).map(_write(version))


def _cases() -> list[Any]:
    """One case per definition name, with the revisions whose schema has it."""
    available = {v: s for v, s in SCHEMAS.items() if s is not None}
    if not available:
        return [pytest.param("", (), id="no-schemas")]
    names: dict[str, list[str]] = {}
    for version, schema in available.items():
        for name in schema[_defs_key(schema)]:
            names.setdefault(name, []).append(version)
    return [pytest.param(name, tuple(names[name]), id=name) for name in sorted(names)]


@FEW
@pytest.mark.parametrize(("name", "versions"), _cases())
@given(data=st.data())
def test_what_we_write_validates(name: str, versions: tuple[str, ...], data: st.DataObject) -> None:
    """For each revision whose schema has ``name``: what we write for it validates."""
    missing = [v for v in VERSIONS if SCHEMAS[v] is None]
    if not versions:
        pytest.skip(f"the spec schemas are not available: {missing}")
    for version in versions:
        document = data.draw(_documents(version, name), label=f"{name} for {version}")
        _assert_valid(version, name, document)


@pytest.mark.parametrize("version", VERSIONS)
def test_the_schema_is_there_to_check_against(version: str) -> None:
    """Makes a missing schema visible as a skip: its revision is left out of the checks."""
    if SCHEMAS[version] is None:
        pytest.skip(f"the {version} schema is not available")
    assert _validator(version, "JSONRPCMessage") is not None


# --- Where the models are wider than a schema -------------------------------------------------

_URL_PARAMS = {"mode": "url", "message": "m", "url": "https://example.com/"}

#: (description, revisions, definition, document the model can produce): what the models can
#: carry that a revision's schema rejects, and why it is left as it is. The strategies never
#: generate these for the revisions listed. Each document must fail validation, which keeps
#: this list exact.
WIDER_THAN_SCHEMA: list[tuple[str, tuple[str, ...], str, Any]] = [
    (
        "ElicitResult.content holds any number: the TypeScript source says `number`, the "
        "published schemas of all three revisions say integer",
        VERSIONS,
        "ElicitResult",
        t.unstructure(t.ElicitResult(action="accept", content={"ratio": 0.5})),
    ),
    (
        "ElicitResult.content may hold a list of strings (a multi-select answer), which "
        "arrived in 2025-11-25; a value, not an attribute, so no revision marker drops it",
        ("2025-06-18",),
        "ElicitResult",
        t.unstructure(t.ElicitResult(action="accept", content={"colours": ["red"]})),
    ),
    (
        "a sampling message's content may be a list of blocks, or a tool_use/tool_result "
        "block (2025-11-25); 2025-06-18 has one text, image or audio block",
        ("2025-06-18",),
        "SamplingMessage",
        t.unstructure(t.SamplingMessage(role="user", content=[t.TextContent(text="hi")])),
    ),
    (
        "ElicitRequest.params may be URL mode (2025-11-25); 2025-06-18 has form mode only. "
        "A union member, not an attribute, so no revision marker drops it",
        ("2025-06-18",),
        "ElicitRequest",
        {"method": "elicitation/create", "params": _URL_PARAMS},
    ),
    (
        "requestedSchema is plain JSON; a multi-select enum property (2025-11-25) is not "
        "in 2025-06-18's PrimitiveSchemaDefinition. (A titled single-select, "
        "{type: string, oneOf}, still passes there as a StringSchema with an extra keyword.)",
        ("2025-06-18",),
        "PrimitiveSchemaDefinition",
        t.unstructure(t.UntitledMultiSelectEnumSchema(items=t.UntitledEnumItems(enum=["a"]))),
    ),
    (
        "capability sub-objects and sampling metadata are dict[str, Any]; 2026-07-28's "
        "JSONValue lists no non-integral number",
        ("2026-07-28",),
        "ServerCapabilities",
        t.unstructure(t.ServerCapabilities(experimental={"x": {"ratio": 0.5}})),
    ),
    (
        "the same for null",
        ("2026-07-28",),
        "CreateMessageRequestParams",
        t.unstructure(
            t.CreateMessageRequestParams(messages=[], max_tokens=1, metadata={"trace": None})
        ),
    ),
    (
        "CancelledNotificationParams.request_id is optional because 2025-11-25 lets tasks "
        "be cancelled without it; 2026-07-28 and 2025-06-18 require it",
        ("2026-07-28", "2025-06-18"),
        "CancelledNotification",
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"reason": "r"}},
    ),
    (
        "ElicitRequestURLParams.elicitation_id is optional because 2026-07-28 dropped it; "
        "2025-11-25 requires it",
        ("2025-11-25",),
        "ElicitRequestURLParams",
        _URL_PARAMS,
    ),
    # Value ranges: the models are plain data, validation belongs at the edges.
    (
        "structuredContent is Any in the model; 2025-11-25 and 2025-06-18 require an object",
        ("2025-11-25", "2025-06-18"),
        "CallToolResult",
        t.unstructure(t.CallToolResult(content=[], structured_content=[1, 2])),
    ),
    (
        "a tool's inputSchema is a plain dict; every revision requires type: object",
        VERSIONS,
        "Tool",
        t.unstructure(t.Tool(name="a", input_schema={"type": "string"})),
    ),
    (
        "priorities are plain floats; the schemas bound them to [0, 1]",
        VERSIONS,
        "Annotations",
        t.unstructure(t.Annotations(priority=2.0)),
    ),
    (
        "ttl_ms is a plain int; the schema says minimum 0",
        ("2026-07-28",),
        "ListToolsResult",
        t.unstructure(t.ListToolsResult(tools=[], ttl_ms=-1), "2026-07-28"),
    ),
    (
        "Completion.values is a plain list; 2026-07-28's schema allows at most 100 (the "
        "prose of every revision says so too)",
        ("2026-07-28",),
        "CompleteResult",
        t.unstructure(t.CompleteResult(completion=t.Completion(values=["v"] * 101))),
    ),
]


def _wider_cases() -> list[Any]:
    return [
        pytest.param(version, definition, document, id=f"{version}-{definition}-{i}")
        for i, (_, versions, definition, document) in enumerate(WIDER_THAN_SCHEMA)
        for version in versions
    ]


@pytest.mark.parametrize(("version", "definition", "document"), _wider_cases())
def test_what_the_models_carry_beyond_a_schema_is_exactly_what_is_listed(
    version: str, definition: str, document: Any
) -> None:
    if SCHEMAS[version] is None:
        pytest.skip(f"the {version} schema is not available")
    assert _problem(version, definition, document) is not None, (
        "the schema accepts this now: remove the entry from WIDER_THAN_SCHEMA"
    )


def test_an_error_response_without_an_id_says_null() -> None:
    # A decision, not an oversight: JSON-RPC 2.0 section 5 says the id of an error to a
    # message whose id could not be read "MUST be Null", and the official Python SDK
    # writes (and requires) exactly that. The 2025-11-25 and 2026-07-28 schemas would
    # rather the key were left out, which the SDK would refuse to read; no schema accepts
    # null, so this one message is checked against JSON-RPC itself.
    error = jsonrpc.ErrorResponse(None, t.Error(code=-32700, message="Parse error"))
    assert orjson.loads(jsonrpc.dumps(error)) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse error"},
    }
