"""Writing MCP servers: :class:`Server`, the :class:`Context` handlers receive, and the
pieces a server is made of."""

from ._server._completion import MAX_VALUES as MAX_VALUES, Completer as Completer
from ._server._context import Context as Context
from ._server._prompts import PromptSpec as PromptSpec
from ._server._rate_limit import RateLimit as RateLimit
from ._server._request_state import RequestStateSealer as RequestStateSealer
from ._server._resources import (
    DirectoryOptions as DirectoryOptions,
    DirectoryResources as DirectoryResources,
    ResourceSpec as ResourceSpec,
    TemplateSpec as TemplateSpec,
)
from ._server._server import ServeOptions as ServeOptions, Server as Server
from ._server._stdio import (
    DEFAULT_DRAIN_TIMEOUT as DEFAULT_DRAIN_TIMEOUT,
    RunOptions as RunOptions,
    run as run,
    run_stdio as run_stdio,
)
from ._server._task_settings import (
    TASKS_EXTENSION as TASKS_EXTENSION,
    TaskSettings as TaskSettings,
)
from ._server._tools import (
    TaskStart as TaskStart,
    TaskSupport as TaskSupport,
    ToolError as ToolError,
    ToolOptions as ToolOptions,
    ToolSpec as ToolSpec,
)
from ._server._typeschema import Field as Field, SchemaError as SchemaError
from ._server._uritemplate import UriTemplate as UriTemplate
