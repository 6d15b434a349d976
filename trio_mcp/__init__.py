"""trio_mcp: the Model Context Protocol for Trio.

The pieces most programs need are here, and only here (``Server``, ``Context``, ``run``,
``ToolError``, ``Client`` and the functions that open one, the errors); the rest live in the
public modules ``types``, ``jsonrpc``, ``protocol``, ``session``, ``transports``,
``server``, ``client``, ``host``, ``http`` (Streamable HTTP, HTTP+SSE; the ``http`` extra),
``websocket``, ``auth``, ``tasks``, ``fleet``, ``skills``, ``apps``, ``cards``, ``testing``
(the ``testing`` extra), ``fuzz`` and ``pytest_plugin`` (see
``docs/reference/api-stability.md``).

The client's names load on first use, so a server program (``import trio_mcp.server``,
``trio_mcp.run``) never imports the client.
"""

from typing import TYPE_CHECKING

from . import _lazy
from ._errors import (
    ConnectionClosed as ConnectionClosed,
    ErrorCode as ErrorCode,
    McpError as McpError,
    MissingRequiredClientCapability as MissingRequiredClientCapability,
    ProtocolError as ProtocolError,
    RequestTimeout as RequestTimeout,
    RetryLater as RetryLater,
    UnsupportedProtocolVersion as UnsupportedProtocolVersion,
    URLElicitationRequired as URLElicitationRequired,
)
from ._server._context import Context as Context
from ._server._server import Server as Server
from ._server._stdio import run as run
from ._server._tools import ToolError as ToolError
from ._version import __version__ as __version__

# What __getattr__ below loads on first use: on_first_use reads these statements.
# isort: off
if TYPE_CHECKING:
    from ._client._client import Client as Client, connect_client as connect_client
    from ._client._client import open_client as open_client
    from ._client._stdio import connect_stdio_client as connect_stdio_client
    from ._client._stdio import open_stdio_client as open_stdio_client
# isort: on

if not TYPE_CHECKING:
    __getattr__ = _lazy.on_first_use(globals())
