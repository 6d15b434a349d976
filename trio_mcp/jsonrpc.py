"""JSON-RPC 2.0: messages, parsing, serialization, and the error hierarchy."""

from ._errors import (
    ConnectionClosed as ConnectionClosed,
)
from ._errors import (
    ErrorCode as ErrorCode,
)
from ._errors import (
    McpError as McpError,
)
from ._errors import (
    MissingRequiredClientCapability as MissingRequiredClientCapability,
)
from ._errors import (
    ProtocolError as ProtocolError,
)
from ._errors import (
    RequestTimeout as RequestTimeout,
)
from ._errors import (
    UnsupportedProtocolVersion as UnsupportedProtocolVersion,
)
from ._jsonrpc import (
    Batch as Batch,
)
from ._jsonrpc import (
    ErrorResponse as ErrorResponse,
)
from ._jsonrpc import (
    InvalidMessage as InvalidMessage,
)
from ._jsonrpc import (
    Message as Message,
)
from ._jsonrpc import (
    Notification as Notification,
)
from ._jsonrpc import (
    Request as Request,
)
from ._jsonrpc import (
    ResultResponse as ResultResponse,
)
from ._jsonrpc import (
    dumps as dumps,
)
from ._jsonrpc import (
    parse as parse,
)
from ._jsonrpc import (
    parse_value as parse_value,
)
from ._jsonrpc import (
    serialize as serialize,
)
