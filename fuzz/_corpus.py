"""What the fuzzers send: params for every method, modern envelopes good and bad, and
malformed wire messages, each with the answer JSON-RPC and MCP require for it.

Shared by the sans-IO state machine and the session interleaving test, so both agree on
what "the right error" is.
"""

from __future__ import annotations

import copy
from typing import Any, Final

import attrs
import orjson

from trio_mcp import ErrorCode
from trio_mcp.protocol import CLIENT_CAPABILITIES, CLIENT_INFO, LOG_LEVEL, PROTOCOL_VERSION

#: A method no revision defines: it goes to the application's handler.
CUSTOM_METHOD: Final = "x/custom"

#: Params every request method accepts (``None``: no params at all).
VALID_PARAMS: Final[dict[str, dict[str, Any] | None]] = {
    "ping": None,
    "server/discover": None,
    "tools/list": None,
    "tools/call": {"name": "echo", "arguments": {"x": 1}},
    "resources/list": None,
    "resources/templates/list": None,
    "resources/read": {"uri": "file:///a"},
    "resources/subscribe": {"uri": "file:///a"},
    "resources/unsubscribe": {"uri": "file:///a"},
    "prompts/list": None,
    "prompts/get": {"name": "p"},
    "completion/complete": {
        "ref": {"type": "ref/prompt", "name": "p"},
        "argument": {"name": "a", "value": "v"},
    },
    "logging/setLevel": {"level": "info"},
    "subscriptions/listen": {"notifications": {"toolsListChanged": True}},
    "sampling/createMessage": {"messages": [], "maxTokens": 10},
    "roots/list": None,
    "elicitation/create": {"message": "m", "requestedSchema": {"type": "object", "properties": {}}},
    "tasks/get": {"taskId": "t"},
    "tasks/result": {"taskId": "t"},
    "tasks/list": None,
    "tasks/cancel": {"taskId": "t"},
    CUSTOM_METHOD: {"anything": [1, 2]},
}

#: Params of the right JSON type but the wrong shape: the receiver answers -32602.
#: (Methods whose params hold only ``_meta`` have no entry.)
INVALID_PARAMS: Final[dict[str, dict[str, Any]]] = {
    "tools/list": {"cursor": 5},
    "tools/call": {"name": 5},
    "resources/list": {"cursor": 5},
    "resources/templates/list": {"cursor": 5},
    "resources/read": {"uri": 5},
    "resources/subscribe": {},
    "resources/unsubscribe": {},
    "prompts/list": {"cursor": 5},
    "prompts/get": {},
    "completion/complete": {
        "ref": {"type": "ref/nope"},
        "argument": {"name": "a", "value": "v"},
    },
    "logging/setLevel": {"level": "loud"},
    "subscriptions/listen": {"notifications": 5},
    "sampling/createMessage": {"messages": 5, "maxTokens": 10},
    "elicitation/create": {"message": 5},
    "tasks/get": {},
    "tasks/result": {"taskId": 5},
    "tasks/list": {"cursor": 5},
    "tasks/cancel": {},
}

REQUEST_METHODS: Final = tuple(VALID_PARAMS)

#: Notifications a peer may send, with params of the right shape.
NOTIFICATIONS: Final[dict[str, dict[str, Any] | None]] = {
    "notifications/message": {"level": "info", "data": "hello"},
    "notifications/resources/updated": {"uri": "file:///a"},
    "notifications/resources/list_changed": None,
    "notifications/tools/list_changed": None,
    "notifications/prompts/list_changed": None,
    "notifications/roots/list_changed": None,
    "notifications/elicitation/complete": {"elicitationId": "e"},
    "notifications/subscriptions/acknowledged": {"notifications": {}},
    "notifications/initialized": None,
    "x/note": {"anything": True},
}


# --- The modern envelope -----------------------------------------------------------------------


@attrs.frozen
class EnvelopeCase:
    """A ``_meta`` for a modern request and what a modern server must answer.

    ``code`` is ``None`` for a valid envelope. ``-32602`` marks a missing or malformed
    required field (2026-07-28 basic/index: "A request missing any required field is
    malformed; the server MUST reject it with -32602"); ``-32022`` an unsupported
    version (basic/versioning: "it MUST respond with an UnsupportedProtocolVersionError").
    """

    name: str
    meta: Any
    code: int | None


def _meta(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: {}}
    for key, value in fields.items():
        wire = {
            "version": PROTOCOL_VERSION,
            "caps": CLIENT_CAPABILITIES,
            "info": CLIENT_INFO,
            "level": LOG_LEVEL,
        }[key]
        if value is _ABSENT:
            base.pop(wire, None)
        else:
            base[wire] = value
    return base


_ABSENT: Final = object()
_INVALID = ErrorCode.INVALID_PARAMS
_UNSUPPORTED = ErrorCode.UNSUPPORTED_PROTOCOL_VERSION

ENVELOPES: Final = (
    EnvelopeCase("valid", _meta(), None),
    EnvelopeCase(
        "valid with info and level",
        _meta(info={"name": "rogue", "version": "1"}, level="debug", caps={"roots": {}}),
        None,
    ),
    EnvelopeCase("absent", _ABSENT, _INVALID),
    EnvelopeCase("_meta not an object", [1], _INVALID),
    EnvelopeCase("no version", _meta(version=_ABSENT), _INVALID),
    EnvelopeCase("version not a string", _meta(version=20260728), _INVALID),
    EnvelopeCase("future version", _meta(version="2099-01-01"), _UNSUPPORTED),
    EnvelopeCase("legacy version", _meta(version="2025-11-25"), _UNSUPPORTED),
    EnvelopeCase("garbage version", _meta(version="banana"), _UNSUPPORTED),
    EnvelopeCase("no capabilities", _meta(caps=_ABSENT), _INVALID),
    EnvelopeCase("capabilities not an object", _meta(caps="all"), _INVALID),
    EnvelopeCase("capabilities malformed", _meta(caps={"roots": 5}), _INVALID),
    EnvelopeCase("clientInfo malformed", _meta(info={"name": 5}), _INVALID),
    EnvelopeCase("logLevel unknown", _meta(level="loud"), _INVALID),
)


def with_meta(params: dict[str, Any] | None, meta: Any) -> dict[str, Any] | None:
    """A copy of ``params`` with ``_meta`` set to a copy of ``meta`` (left out when ``meta``
    is the absent marker)."""
    if meta is _ABSENT:
        return copy.deepcopy(params)
    out = copy.deepcopy(params) or {}
    out["_meta"] = copy.deepcopy(meta)
    return out


def has_meta_key(params: dict[str, Any] | None, key: str) -> bool:
    meta = params.get("_meta") if params else None
    return type(meta) is dict and key in meta


# --- Malformed wire messages -------------------------------------------------------------------


@attrs.frozen
class Malformed:
    """Bytes that are not a valid JSON-RPC message, and the answer they must get.

    ``code`` is the error to reply with; ``None`` means nothing may be sent back (JSON-RPC:
    a notification or a broken response is never answered). ``reply_id`` is the id the
    error must carry: the request's, or ``None`` (null) when it could not be read.
    """

    name: str
    data: bytes
    code: int | None
    reply_id: str | None = None


def _json(value: Any) -> bytes:
    return orjson.dumps(value)


_PARSE = ErrorCode.PARSE_ERROR
_REQUEST = ErrorCode.INVALID_REQUEST

MALFORMED: Final = (
    # JSON-RPC 2.0 section 5.1: -32700 for invalid JSON, with a null id.
    Malformed("truncated JSON", b'{"jsonrpc": "2.0", "id": 1, "method": "ping"', _PARSE),
    Malformed("invalid UTF-8", b'\xff\xfe{"jsonrpc": "2.0"}', _PARSE),
    Malformed("not JSON", b"hello", _PARSE),
    # -32600: valid JSON that is not a request object.
    Malformed("a number", b"42", _REQUEST),
    Malformed("a string", b'"ping"', _REQUEST),
    Malformed("null", b"null", _REQUEST),
    Malformed("empty batch", b"[]", _REQUEST),
    Malformed(
        "jsonrpc 1.0", _json({"jsonrpc": "1.0", "id": "m1", "method": "ping"}), _REQUEST, "m1"
    ),
    Malformed("no jsonrpc", _json({"id": "m2", "method": "ping"}), _REQUEST, "m2"),
    Malformed(
        "jsonrpc not a string",
        _json({"jsonrpc": 2.0, "id": "m3", "method": "ping"}),
        _REQUEST,
        "m3",
    ),
    # MCP basic/index: "Requests MUST include a string or integer ID ... MUST NOT be null".
    Malformed("null id", _json({"jsonrpc": "2.0", "id": None, "method": "ping"}), _REQUEST),
    Malformed("float id", _json({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}), _REQUEST),
    Malformed("boolean id", _json({"jsonrpc": "2.0", "id": True, "method": "ping"}), _REQUEST),
    Malformed("object id", _json({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}), _REQUEST),
    Malformed("array id", _json({"jsonrpc": "2.0", "id": [1], "method": "ping"}), _REQUEST),
    Malformed(
        "method not a string", _json({"jsonrpc": "2.0", "id": "m4", "method": 5}), _REQUEST, "m4"
    ),
    # MCP params are objects: an array is "Invalid params", a scalar not even a request.
    Malformed(
        "array params",
        _json({"jsonrpc": "2.0", "id": "m5", "method": "ping", "params": [1]}),
        ErrorCode.INVALID_PARAMS,
        "m5",
    ),
    Malformed(
        "scalar params",
        _json({"jsonrpc": "2.0", "id": "m6", "method": "ping", "params": 5}),
        _REQUEST,
        "m6",
    ),
    Malformed(
        "neither request nor response", _json({"jsonrpc": "2.0", "id": "m7"}), _REQUEST, "m7"
    ),
    # JSON-RPC 2.0 section 7: a notification-shaped object that is not a valid request object
    # gets -32600 with a null id.
    Malformed("notification method not a string", _json({"jsonrpc": "2.0", "method": 5}), _REQUEST),
    Malformed(
        "notification scalar params",
        _json({"jsonrpc": "2.0", "method": 1, "params": "bar"}),
        _REQUEST,
    ),
    # Valid JSON-RPC notifications whose params MCP cannot read, and broken responses, are
    # never answered.
    Malformed(
        "notification array params",
        _json({"jsonrpc": "2.0", "method": "notifications/initialized", "params": [1]}),
        None,
    ),
    Malformed("response without jsonrpc", _json({"id": "m8", "result": {}}), None),
    Malformed(
        "response with result and error",
        _json({"jsonrpc": "2.0", "id": "m9", "result": {}, "error": {"code": 1, "message": "x"}}),
        None,
    ),
    Malformed("result not an object", _json({"jsonrpc": "2.0", "id": "m10", "result": 5}), None),
    Malformed("error not an object", _json({"jsonrpc": "2.0", "id": "m11", "error": "bad"}), None),
    Malformed(
        "error code not an integer",
        _json({"jsonrpc": "2.0", "id": "m12", "error": {"code": "x", "message": "m"}}),
        None,
    ),
    Malformed("response float id", _json({"jsonrpc": "2.0", "id": 1.5, "result": {}}), None),
)

#: ``requestId``/``progressToken`` values that name no request: wrong JSON types, including
#: ones Python would otherwise confuse with an integer id (``true == 1``, ``1.0 == 1``).
ALIEN_IDS: Final[tuple[Any, ...]] = (None, True, False, 1.0, 2.0, [1], {"id": 1}, "nope", 10**12)


def malformed_answer(id: Any, kind: str) -> bytes:
    """A broken response carrying ``id``: the request it names must fail, not hang."""
    if kind == "result not an object":
        return _json({"jsonrpc": "2.0", "id": id, "result": [1, 2]})
    if kind == "both result and error":
        return _json(
            {"jsonrpc": "2.0", "id": id, "result": {}, "error": {"code": 1, "message": ""}}
        )
    return _json({"jsonrpc": "2.0", "id": id, "error": {"code": "not a number", "message": 5}})


MALFORMED_ANSWERS: Final = ("result not an object", "both result and error", "broken error")
