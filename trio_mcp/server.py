"""Writing MCP servers: the pieces a server is made of (tool, resource and prompt specs,
their options, completion, rate limits, ``run_stdio``). :class:`trio_mcp.Server`, the
:class:`trio_mcp.Context` handlers receive, :class:`trio_mcp.ToolError` and
:func:`trio_mcp.run` are :mod:`trio_mcp`'s."""

from ._server._completion import MAX_VALUES as MAX_VALUES, Completer as Completer
from ._server._prompts import PromptSpec as PromptSpec
from ._server._rate_limit import RateLimit as RateLimit
from ._server._request_state import RequestStateSealer as RequestStateSealer
from ._server._resources import (
    DirectoryOptions as DirectoryOptions,
    DirectoryResources as DirectoryResources,
    ResourceSpec as ResourceSpec,
    TemplateSpec as TemplateSpec,
)
from ._server._server import ServeOptions as ServeOptions
from ._server._stdio import (
    DEFAULT_DRAIN_TIMEOUT as DEFAULT_DRAIN_TIMEOUT,
    RunOptions as RunOptions,
    run_stdio as run_stdio,
)
from ._server._task_settings import (
    TASKS_EXTENSION as TASKS_EXTENSION,
    TaskSettings as TaskSettings,
)
from ._server._tools import (
    TaskStart as TaskStart,
    TaskSupport as TaskSupport,
    ToolOptions as ToolOptions,
    ToolSpec as ToolSpec,
)
from ._server._typeschema import Field as Field, SchemaError as SchemaError
from ._server._uritemplate import UriTemplate as UriTemplate
