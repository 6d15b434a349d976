"""trio_mcp: the Model Context Protocol for Trio.

The pieces most programs need are here; the rest live in the public modules
``types``, ``jsonrpc``, ``protocol``, ``session``, ``transports``, ``server``,
``client``, ``host``, ``http`` (Streamable HTTP, HTTP+SSE; the ``http`` extra),
``websocket``, ``testing`` (the ``testing`` extra) and ``pytest_plugin``.
"""

from ._client._client import (
    Client as Client,
    connect_client as connect_client,
    open_client as open_client,
)
from ._client._stdio import (
    connect_stdio_client as connect_stdio_client,
    open_stdio_client as open_stdio_client,
)
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
from ._server._context import Context as Context
from ._server._server import Server as Server
from ._server._stdio import run as run
from ._server._tools import ToolError as ToolError
from ._version import __version__ as __version__
