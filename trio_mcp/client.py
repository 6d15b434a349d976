"""Writing MCP clients: :class:`Client` and the handlers for what servers ask of clients."""

from ._client._client import (
    Client as Client,
    LogHandler as LogHandler,
    connect_client as connect_client,
    open_client as open_client,
)
from ._client._handlers import (
    ElicitationCompleteHandler as ElicitationCompleteHandler,
    ElicitationHandler as ElicitationHandler,
    RootsHandler as RootsHandler,
    SamplingHandler as SamplingHandler,
)
from ._client._listen import Change as Change, Listener as Listener
from ._client._options import ClientOptions as ClientOptions
from ._client._stdio import (
    StdioClientOptions as StdioClientOptions,
    connect_stdio_client as connect_stdio_client,
    open_stdio_client as open_stdio_client,
)
from ._client._tasks import TaskCancelled as TaskCancelled, ToolTask as ToolTask
from ._protocol._era import EraCache as EraCache
