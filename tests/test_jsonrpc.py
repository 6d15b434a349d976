"""JSON-RPC parsing and serialization: every malformed input maps to the right error."""

from __future__ import annotations

import pickle

import orjson
import pytest

from trio_mcp import (
    ConnectionClosed,
    ErrorCode,
    McpError,
    MissingRequiredClientCapability,
    ProtocolError,
    RequestTimeout,
    UnsupportedProtocolVersion,
    jsonrpc,
)
from trio_mcp.jsonrpc import (
    Batch,
    ErrorResponse,
    InvalidMessage,
    JsonRpcNotification,
    JsonRpcRequest,
    ResultResponse,
)
from trio_mcp.types import Error


def reply_of(data: bytes) -> tuple[int, object]:
    parsed = jsonrpc.parse(data)
    assert isinstance(parsed, InvalidMessage), parsed
    assert parsed.reply is not None
    return parsed.reply.error.code, parsed.reply.id


@pytest.mark.parametrize(
    ("data", "code", "id"),
    [
        (b'{"jsonrpc": "2.0", "id": 1, "method": ', ErrorCode.PARSE_ERROR, None),
        (b"\xff\xfe", ErrorCode.PARSE_ERROR, None),
        (b"", ErrorCode.PARSE_ERROR, None),
        (b"[]", ErrorCode.INVALID_REQUEST, None),
        (b"42", ErrorCode.INVALID_REQUEST, None),
        (b'"hello"', ErrorCode.INVALID_REQUEST, None),
        (b'{"jsonrpc": "1.0", "id": 3, "method": "x"}', ErrorCode.INVALID_REQUEST, 3),
        (b'{"id": 3, "method": "x"}', ErrorCode.INVALID_REQUEST, 3),
        (b'{"jsonrpc": "2.0", "id": 1.5, "method": "x"}', ErrorCode.INVALID_REQUEST, None),
        (b'{"jsonrpc": "2.0", "id": true, "method": "x"}', ErrorCode.INVALID_REQUEST, None),
        (b'{"jsonrpc": "2.0", "id": null, "method": "x"}', ErrorCode.INVALID_REQUEST, None),
        (b'{"jsonrpc": "2.0", "id": [1], "method": "x"}', ErrorCode.INVALID_REQUEST, None),
        (b'{"jsonrpc": "2.0", "id": 7, "method": 5}', ErrorCode.INVALID_REQUEST, 7),
        (
            b'{"jsonrpc": "2.0", "id": 7, "method": "x", "params": [1, 2]}',
            ErrorCode.INVALID_PARAMS,
            7,
        ),
        (
            b'{"jsonrpc": "2.0", "id": 7, "method": "x", "params": "p"}',
            ErrorCode.INVALID_REQUEST,
            7,
        ),
        (b'{"jsonrpc": "2.0", "id": "a"}', ErrorCode.INVALID_REQUEST, "a"),
        # Not request objects, so not notifications either (JSON-RPC 2.0 section 7's own
        # example): -32600 with a null id.
        (b'{"jsonrpc": "2.0", "method": 5}', ErrorCode.INVALID_REQUEST, None),
        (b'{"jsonrpc": "2.0", "method": 1, "params": "bar"}', ErrorCode.INVALID_REQUEST, None),
        (b'{"jsonrpc": "2.0", "method": "x", "params": 5}', ErrorCode.INVALID_REQUEST, None),
        (b'{"jsonrpc": "2.0", "method": "x", "params": true}', ErrorCode.INVALID_REQUEST, None),
    ],
)
def test_malformed_input_gets_the_right_error(data: bytes, code: int, id: object) -> None:
    assert reply_of(data) == (code, id)


@pytest.mark.parametrize(
    "data",
    [
        # A valid JSON-RPC notification whose params MCP cannot read: never answered.
        b'{"jsonrpc": "2.0", "method": "x", "params": [1]}',
        b'{"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "m"}}',
        b'{"jsonrpc": "2.0", "id": 1, "result": []}',
        b'{"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": "m"}}',
        b'{"jsonrpc": "2.0", "id": 1, "error": "boom"}',
        b'{"id": 1, "result": {}}',
    ],
)
def test_broken_responses_and_array_param_notifications_are_never_answered(data: bytes) -> None:
    # Answering a broken response could start an error ping-pong between peers.
    parsed = jsonrpc.parse(data)
    assert isinstance(parsed, InvalidMessage)
    assert parsed.reply is None


def test_a_malformed_response_names_the_request_it_answers() -> None:
    parsed = jsonrpc.parse(b'{"jsonrpc": "2.0", "id": 9, "result": "not an object"}')
    assert isinstance(parsed, InvalidMessage)
    assert parsed.response_id == 9


def test_valid_messages_parse_to_their_kinds() -> None:
    assert jsonrpc.parse(b'{"jsonrpc":"2.0","id":"r1","method":"ping"}') == JsonRpcRequest(
        "r1", "ping", None
    )
    assert jsonrpc.parse(b'{"jsonrpc":"2.0","method":"n","params":{"a":1}}') == JsonRpcNotification(
        "n", {"a": 1}
    )
    assert jsonrpc.parse(b'{"jsonrpc":"2.0","id":2,"result":{"x":1}}') == ResultResponse(
        2, {"x": 1}
    )
    assert jsonrpc.parse(
        b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m","data":[1]}}'
    ) == ErrorResponse(None, Error(code=-32700, message="m", data=[1]))
    # Unknown top-level fields from a newer peer are tolerated.
    assert jsonrpc.parse(b'{"jsonrpc":"2.0","id":1,"method":"m","extra":true}') == JsonRpcRequest(
        1, "m", None
    )


def test_batches_parse_item_by_item() -> None:
    parsed = jsonrpc.parse(
        b'[{"jsonrpc":"2.0","method":"a"}, 5, {"jsonrpc":"2.0","id":1,"method":"b"}]'
    )
    assert isinstance(parsed, Batch)
    first, second, third = parsed.items
    assert first == JsonRpcNotification("a", None)
    assert isinstance(second, InvalidMessage) and second.reply is not None
    assert third == JsonRpcRequest(1, "b", None)


def test_a_request_id_repeated_in_a_batch_is_answered_with_an_error() -> None:
    """Issue 11, item 9: each repeat of a request id within one batch becomes an invalid
    message answering -32600 with that id (JSON-RPC: a response for every request); the
    first keeps it. A notification, or the same digits as a string, is no repeat."""
    parsed = jsonrpc.parse(
        b'[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":"1","method":"ping"},'
        b'{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":1,"method":"tools/list"},'
        b'{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]'
    )
    assert isinstance(parsed, Batch)
    assert parsed.items[:3] == (
        JsonRpcRequest(1, "ping", None),
        JsonRpcRequest("1", "ping", None),
        JsonRpcNotification("n", None),
    )
    assert parsed.items[5] == JsonRpcRequest(2, "ping", None)
    for repeat in parsed.items[3:5]:
        assert isinstance(repeat, InvalidMessage)
        assert repeat.reply == ErrorResponse(
            1,
            Error(
                code=-32600,
                message="Invalid Request: request id 1 is used more than once in this batch",
            ),
        )
    assert parsed.repeated_ids == (1,)
    assert jsonrpc.parse(b'[{"jsonrpc":"2.0","id":1,"method":"a"}]') == Batch(
        (JsonRpcRequest(1, "a", None),)
    )


@pytest.mark.parametrize(
    "message",
    [
        JsonRpcRequest(1, "tools/call", {"name": "x"}),
        JsonRpcRequest("s", "ping", None),
        JsonRpcNotification("notifications/initialized", None),
        JsonRpcNotification("n", {"ünï": "cödé"}),
        ResultResponse(3, {}),
        ErrorResponse(4, Error(code=-32601, message="Method not found")),
        ErrorResponse(None, Error(code=-32700, message="Parse error", data={"at": 1})),
    ],
)
def test_serialize_then_parse_gives_back_the_message(message: jsonrpc.Message) -> None:
    data = jsonrpc.dumps(message)
    assert b"\n" not in data
    assert orjson.loads(data)["jsonrpc"] == "2.0"
    assert jsonrpc.parse(data) == message


def test_error_codes_and_hierarchy() -> None:
    assert ProtocolError("x").code == ErrorCode.INVALID_REQUEST
    assert ConnectionClosed().code == ErrorCode.CONNECTION_CLOSED
    assert RequestTimeout("t").code == -32001
    for cls in (ProtocolError, ConnectionClosed, RequestTimeout, UnsupportedProtocolVersion):
        assert issubclass(cls, McpError)
    error = McpError("bad", code=ErrorCode.INVALID_PARAMS, data={"k": 1})
    assert error.error == Error(code=-32602, message="bad", data={"k": 1})


@pytest.mark.parametrize(
    "error",
    [
        McpError("m", code=-32602, data=[1]),
        ProtocolError("p"),
        ConnectionClosed("gone", returncode=3, stderr_tail="boom"),
        RequestTimeout("slow"),
        UnsupportedProtocolVersion(supported=["2026-07-28"], requested="1999"),
        MissingRequiredClientCapability(required_capabilities={"sampling": {}}),
    ],
)
def test_errors_pickle(error: McpError) -> None:
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert (copy.code, copy.message, copy.data) == (error.code, error.message, error.data)
    assert str(copy) == str(error)


def test_errors_from_the_wire_become_the_specific_exception() -> None:
    unsupported = McpError.from_error(
        Error(code=-32022, message="no", data={"supported": ["2026-07-28"], "requested": "x"})
    )
    assert isinstance(unsupported, UnsupportedProtocolVersion)
    assert unsupported.supported == ["2026-07-28"]
    assert unsupported.requested == "x"
    missing = McpError.from_error(
        Error(code=-32021, message="no", data={"requiredCapabilities": {"roots": {}}})
    )
    assert isinstance(missing, MissingRequiredClientCapability)
    assert missing.required_capabilities == {"roots": {}}
    # Garbage data from a peer never breaks the conversion.
    assert isinstance(
        McpError.from_error(Error(code=-32022, message="no", data="junk")),
        UnsupportedProtocolVersion,
    )
    plain = McpError.from_error(Error(code=-32000, message="custom"))
    assert type(plain) is McpError and plain.code == -32000
