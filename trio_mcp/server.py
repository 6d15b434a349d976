"""Writing MCP servers: :class:`Server`, the :class:`Context` handlers receive, and the
pieces a server is made of."""

from ._server._completion import MAX_VALUES as MAX_VALUES
from ._server._completion import Completer as Completer
from ._server._context import Context as Context
from ._server._prompts import PromptSpec as PromptSpec
from ._server._request_state import RequestStateSealer as RequestStateSealer
from ._server._resources import (
    DirectoryResources as DirectoryResources,
)
from ._server._resources import (
    ResourceSpec as ResourceSpec,
)
from ._server._resources import (
    TemplateSpec as TemplateSpec,
)
from ._server._server import Server as Server
from ._server._tools import ToolError as ToolError
from ._server._tools import ToolSpec as ToolSpec
from ._server._typeschema import Field as Field
from ._server._typeschema import SchemaError as SchemaError
from ._server._uritemplate import UriTemplate as UriTemplate
