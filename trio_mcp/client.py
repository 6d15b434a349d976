"""Writing MCP clients: :class:`Client` and the handlers for what servers ask of clients."""

from ._client._client import (
    Client as Client,
)
from ._client._client import (
    ElicitationHandler as ElicitationHandler,
)
from ._client._client import (
    LogHandler as LogHandler,
)
from ._client._client import (
    RootsHandler as RootsHandler,
)
from ._client._client import (
    SamplingHandler as SamplingHandler,
)
from ._client._client import (
    connect_client as connect_client,
)
from ._client._client import (
    open_client as open_client,
)
from ._client._listen import Change as Change
from ._client._listen import Listener as Listener
from ._protocol._era import EraCache as EraCache
