"""Writing MCP clients: the client's options, the handlers for what servers ask of clients,
listeners and tool tasks. :class:`trio_mcp.Client` and the functions that open one
(:func:`trio_mcp.open_client`, :func:`trio_mcp.open_stdio_client` and their ``connect_*``
forms) are :mod:`trio_mcp`'s."""

from ._client._client import LogHandler as LogHandler
from ._client._handlers import (
    ElicitationCompleteHandler as ElicitationCompleteHandler,
    ElicitationHandler as ElicitationHandler,
    RootsHandler as RootsHandler,
    SamplingHandler as SamplingHandler,
)
from ._client._listen import Change as Change, Listener as Listener
from ._client._options import ClientOptions as ClientOptions
from ._client._stdio import StdioClientOptions as StdioClientOptions
from ._client._tasks import TaskCancelled as TaskCancelled, ToolTask as ToolTask
from ._protocol._era import EraCache as EraCache
