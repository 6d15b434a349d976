"""JSON-RPC 2.0: messages, parsing, serialization, and the error hierarchy."""

from ._errors import (
    ConnectionClosed as ConnectionClosed,
    ErrorCode as ErrorCode,
    McpError as McpError,
    MissingRequiredClientCapability as MissingRequiredClientCapability,
    ProtocolError as ProtocolError,
    RequestTimeout as RequestTimeout,
    UnsupportedProtocolVersion as UnsupportedProtocolVersion,
    URLElicitationRequired as URLElicitationRequired,
)
from ._jsonrpc import (
    Batch as Batch,
    ErrorResponse as ErrorResponse,
    InvalidMessage as InvalidMessage,
    Message as Message,
    Notification as Notification,
    Request as Request,
    ResultResponse as ResultResponse,
    dumps as dumps,
    parse as parse,
    parse_value as parse_value,
    serialize as serialize,
)
