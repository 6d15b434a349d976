"""Writing MCP clients: :class:`Client` and the handlers for what servers ask of clients."""

from ._client._client import (
    Client as Client,
    ElicitationCompleteHandler as ElicitationCompleteHandler,
    ElicitationHandler as ElicitationHandler,
    LogHandler as LogHandler,
    RootsHandler as RootsHandler,
    SamplingHandler as SamplingHandler,
    connect_client as connect_client,
    open_client as open_client,
)
from ._client._listen import Change as Change, Listener as Listener
from ._client._stdio import (
    connect_stdio_client as connect_stdio_client,
    open_stdio_client as open_stdio_client,
)
from ._protocol._era import EraCache as EraCache
