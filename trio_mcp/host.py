"""A host: many MCP servers behind one namespaced view, each isolated and supervised."""

from ._host._config import (
    HttpServerConfig as HttpServerConfig,
    InProcessServerConfig as InProcessServerConfig,
    ServerConfig as ServerConfig,
    StdioServerConfig as StdioServerConfig,
    parse_config as parse_config,
)
from ._host._host import (
    Host as Host,
    ResourceUpdates as ResourceUpdates,
    ServerState as ServerState,
    open_host as open_host,
)
