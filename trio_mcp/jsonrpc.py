"""JSON-RPC 2.0: the envelope classes (:class:`JsonRpcRequest`, :class:`JsonRpcNotification`,
the two responses), parsing and serialization. The typed MCP requests they carry are
:mod:`trio_mcp.types`; the error hierarchy is :mod:`trio_mcp`'s (``trio_mcp.McpError``)."""

from ._jsonrpc import (
    Batch as Batch,
    ErrorResponse as ErrorResponse,
    InvalidMessage as InvalidMessage,
    JsonRpcNotification as JsonRpcNotification,
    JsonRpcRequest as JsonRpcRequest,
    Message as Message,
    ResultResponse as ResultResponse,
    dumps as dumps,
    parse as parse,
    parse_value as parse_value,
    serialize as serialize,
)
