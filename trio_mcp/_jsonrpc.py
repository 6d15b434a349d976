"""JSON-RPC 2.0 messages: parse bytes into messages, serialize messages into bytes.

Parsing never raises for bad input. Whatever arrives becomes a message, a
:class:`Batch`, or an :class:`InvalidMessage` that carries the error response
to send back (or ``None`` when JSON-RPC says not to answer). An object that is
not a valid request object gets -32600, with a null id when it has none (a
``method`` that is not a string, ``params`` that are not structured); only two
kinds of bad input get no answer: a broken *response* (answering it could start
an error ping-pong) and a well-formed notification whose params are an array
(valid JSON-RPC, but MCP params are objects; a notification is never answered).
Params and results stay plain JSON data here; the types layer reads them.
"""

from __future__ import annotations

from typing import Any, TypeAlias

import attrs
import orjson

from ._errors import ErrorCode
from ._types._base import Error, RequestId

__all__ = [
    "Batch",
    "ErrorResponse",
    "InvalidMessage",
    "Message",
    "JsonRpcNotification",
    "JsonRpcRequest",
    "ResultResponse",
    "dumps",
    "parse",
    "parse_value",
    "serialize",
]


@attrs.frozen
class JsonRpcRequest:
    """A JSON-RPC request: ``id``, ``method`` and ``params`` as plain JSON data (the typed
    MCP request it carries is a :class:`trio_mcp.types.Request`)."""

    id: RequestId
    method: str
    params: dict[str, Any] | None = None


@attrs.frozen
class JsonRpcNotification:
    """A JSON-RPC notification: ``method`` and ``params`` as plain JSON data (the typed MCP
    notification it carries is a :class:`trio_mcp.types.Notification`)."""

    method: str
    params: dict[str, Any] | None = None


@attrs.frozen
class ResultResponse:
    id: RequestId
    result: dict[str, Any]


@attrs.frozen
class ErrorResponse:
    #: ``None`` only when the request's id could not be read.
    id: RequestId | None
    error: Error


Message: TypeAlias = JsonRpcRequest | JsonRpcNotification | ResultResponse | ErrorResponse


@attrs.frozen
class InvalidMessage:
    """Something that is not a valid JSON-RPC message.

    Attributes:
        reason: what was wrong, for logs.
        reply: the error response to send back, or ``None`` when nothing may be sent.
        response_id: for a malformed *response*, its id if readable: the pending
            request it answers should fail with a protocol error.
    """

    reason: str
    reply: ErrorResponse | None
    response_id: RequestId | None = None


@attrs.frozen
class Batch:
    """A JSON-RPC batch (legal only in 2024-11-05 and 2025-03-26).

    A request whose id an earlier request of the same batch already carries is an
    :class:`InvalidMessage` among the items, answering -32600 with that id: JSON-RPC
    wants a response for every request of a batch, and MCP forbids reusing an id in a
    session, so the repeat is answered with an error rather than run (or dropped).

    Attributes:
        items: the messages, in order.
        repeated_ids: the ids that more than one request of the batch carries (for a
            transport that answers a batch as a whole, such as HTTP).
    """

    items: tuple[Message | InvalidMessage, ...]
    repeated_ids: tuple[RequestId, ...] = ()


def _invalid(code: int, reason: str, id: RequestId | None = None) -> InvalidMessage:
    message = "Parse error" if code == ErrorCode.PARSE_ERROR else "Invalid Request"
    if code == ErrorCode.INVALID_PARAMS:
        message = "Invalid params"
    return InvalidMessage(
        reason, ErrorResponse(id, Error(code=code, message=f"{message}: {reason}"))
    )


def _is_id(value: object) -> bool:
    return type(value) is str or type(value) is int


def parse(data: bytes | bytearray | memoryview | str) -> Message | Batch | InvalidMessage:
    """Parse one JSON text (a message or a batch).

    Invalid JSON or invalid UTF-8 gives -32700 with a null id; a value that is
    not a JSON-RPC message gives -32600.
    """
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        return _invalid(ErrorCode.PARSE_ERROR, str(exc).split(":", 1)[0])
    return parse_value(value)


def parse_value(value: object) -> Message | Batch | InvalidMessage:
    """Classify already-decoded JSON as a message, a batch, or an invalid message."""
    if type(value) is dict:
        return _parse_object(value)
    if type(value) is list:
        if not value:
            return _invalid(ErrorCode.INVALID_REQUEST, "empty batch")
        return _parse_batch(value)
    return _invalid(
        ErrorCode.INVALID_REQUEST, f"a message must be a JSON object, not {type(value).__name__}"
    )


def _parse_batch(values: list[Any]) -> Batch:
    items: list[Message | InvalidMessage] = []
    seen: set[RequestId] = set()
    repeated: list[RequestId] = []
    for value in values:
        if type(value) is not dict:
            items.append(_invalid(ErrorCode.INVALID_REQUEST, "batch item is not an object"))
            continue
        item = _parse_object(value)
        if type(item) is JsonRpcRequest:
            if item.id in seen:
                if item.id not in repeated:
                    repeated.append(item.id)
                item = _invalid(
                    ErrorCode.INVALID_REQUEST,
                    f"request id {item.id!r} is used more than once in this batch",
                    item.id,
                )
            else:
                seen.add(item.id)
        items.append(item)
    return Batch(tuple(items), tuple(repeated))


def _parse_object(obj: dict[str, Any]) -> Message | InvalidMessage:
    raw_id = obj.get("id")
    id = raw_id if _is_id(raw_id) else None
    if obj.get("jsonrpc") != "2.0":
        if "method" not in obj and ("result" in obj or "error" in obj):
            return InvalidMessage('response without "jsonrpc": "2.0"', None, id)
        return _invalid(ErrorCode.INVALID_REQUEST, 'missing "jsonrpc": "2.0"', id)
    if "method" in obj:
        method = obj["method"]
        is_request = "id" in obj
        if type(method) is not str:
            # Not a request object at all, so not a notification either: JSON-RPC answers
            # an invalid request object with -32600 (id null when it has none).
            return _invalid(ErrorCode.INVALID_REQUEST, "method must be a string", id)
        params = obj.get("params")
        if is_request:
            if id is None:
                return _invalid(ErrorCode.INVALID_REQUEST, "id must be a string or an integer")
            if params is not None and type(params) is not dict:
                code = (
                    ErrorCode.INVALID_PARAMS if type(params) is list else ErrorCode.INVALID_REQUEST
                )
                return _invalid(code, "params must be an object", id)
            return JsonRpcRequest(id, method, params)
        if params is not None and type(params) is not dict:
            if type(params) is list:
                # A valid JSON-RPC notification whose params MCP cannot read: like any
                # notification, never answered.
                return InvalidMessage("notification params must be an object", None)
            return _invalid(ErrorCode.INVALID_REQUEST, "params must be an object or an array")
        return JsonRpcNotification(method, params)
    if "result" in obj:
        if "error" in obj:
            return InvalidMessage("response has both result and error", None, id)
        if id is None:
            return InvalidMessage("response id must be a string or an integer", None)
        result = obj["result"]
        if type(result) is not dict:
            return InvalidMessage("result must be an object", None, id)
        return ResultResponse(id, result)
    if "error" in obj:
        error = obj["error"]
        if raw_id is not None and id is None:
            return InvalidMessage("response id must be a string, an integer or null", None)
        if (
            type(error) is not dict
            or type(error.get("code")) is not int
            or type(error.get("message")) is not str
        ):
            return InvalidMessage(
                "error must be an object with an integer code and a string message", None, id
            )
        return ErrorResponse(
            id, Error(code=error["code"], message=error["message"], data=error.get("data"))
        )
    return _invalid(
        ErrorCode.INVALID_REQUEST, "neither a request, a notification nor a response", id
    )


def serialize(message: Message) -> dict[str, Any]:
    """The JSON object of ``message``."""
    if type(message) is ResultResponse:
        return {"jsonrpc": "2.0", "id": message.id, "result": message.result}
    if type(message) is JsonRpcRequest:
        if message.params is None:
            return {"jsonrpc": "2.0", "id": message.id, "method": message.method}
        return {
            "jsonrpc": "2.0",
            "id": message.id,
            "method": message.method,
            "params": message.params,
        }
    if type(message) is JsonRpcNotification:
        if message.params is None:
            return {"jsonrpc": "2.0", "method": message.method}
        return {"jsonrpc": "2.0", "method": message.method, "params": message.params}
    if type(message) is ErrorResponse:
        error: dict[str, Any] = {"code": message.error.code, "message": message.error.message}
        if message.error.data is not None:
            error["data"] = message.error.data
        return {"jsonrpc": "2.0", "id": message.id, "error": error}
    raise TypeError(f"not a JSON-RPC message: {message!r}")


def dumps(message: Message | list[Message]) -> bytes:
    """Serialize a message (or a batch of messages) to compact JSON bytes."""
    if type(message) is list:
        return orjson.dumps([serialize(m) for m in message])
    return orjson.dumps(serialize(message))  # type: ignore[arg-type]
