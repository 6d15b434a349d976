"""A host: many MCP servers behind one namespaced view, each isolated and supervised, with
the host as the security boundary (consent hooks, per-server policy, tool pinning, audit)."""

from ._host._audit import (
    DEFAULT_AUDIT_BUFFER as DEFAULT_AUDIT_BUFFER,
    Audit as Audit,
    AuditEvent as AuditEvent,
    AuditKind as AuditKind,
)
from ._host._config import (
    ConfigError as ConfigError,
    HttpServerConfig as HttpServerConfig,
    InProcessServerConfig as InProcessServerConfig,
    ServerConfig as ServerConfig,
    StdioServerConfig as StdioServerConfig,
    parse_config as parse_config,
)
from ._host._consent import (
    Allow as Allow,
    Consent as Consent,
    Decision as Decision,
    Deny as Deny,
    ElicitationRequest as ElicitationRequest,
    ResourceReadRequest as ResourceReadRequest,
    Rewrite as Rewrite,
    SamplingRequest as SamplingRequest,
    ToolCallRequest as ToolCallRequest,
    ToolChange as ToolChange,
    allow_all as allow_all,
    allow_read_only as allow_read_only,
)
from ._host._host import (
    Host as Host,
    HostOptions as HostOptions,
    ResourceUpdates as ResourceUpdates,
    ServerState as ServerState,
    open_host as open_host,
)
from ._host._model_tools import (
    ToolStyle as ToolStyle,
    parse_tool_use as parse_tool_use,
    tool_definitions as tool_definitions,
    tool_result as tool_result,
)
from ._host._pinning import (
    DEFAULT_MAX_DESCRIPTION as DEFAULT_MAX_DESCRIPTION,
    MAX_SCHEMA_DEPTH as MAX_SCHEMA_DEPTH,
    ToolStatus as ToolStatus,
)
from ._host._policy import ServerPolicy as ServerPolicy, parse_policy as parse_policy
