"""The MCP Apps extension (SEP-1865, ``io.modelcontextprotocol/ui``): tools with
interactive views that hosts render in sandboxed iframes.

Server side: :meth:`Server.app <trio_mcp.Server.app>` registers a view (a ``ui://``
resource of type ``text/html;profile=mcp-app`` with its CSP and permissions), and
``@server.tool(ui=...)`` links a tool to it (:class:`ToolUi`: the view and who may call
the tool). :func:`supports_apps` tells whether a client renders views.

Client side: ``extensions=client_extension()`` declares that the client renders them;
:func:`tool_ui` reads a tool's link, :func:`read_view` reads a view and checks it into an
:class:`AppView`, with the Content Security Policy and permission policy to enforce. In a
host: :meth:`Host.view <trio_mcp.host.Host.view>` reads the view of a tool from the
tool's own server, :meth:`Host.call_tool_from_view
<trio_mcp.host.Host.call_tool_from_view>` carries a view's tool calls to that server only,
and app-only tools never reach the model's tool list.
"""

from ._apps._fetching import (
    AppView as AppView,
    read_view as read_view,
    tool_ui as tool_ui,
    view_from_result as view_from_result,
)
from ._apps._format import (
    APP_MIME_TYPE as APP_MIME_TYPE,
    APPS_EXTENSION as APPS_EXTENSION,
    MAX_APP_BYTES as MAX_APP_BYTES,
    AppCsp as AppCsp,
    AppFormatError as AppFormatError,
    AppMeta as AppMeta,
    Permission as Permission,
    ToolUi as ToolUi,
    Visibility as Visibility,
    client_extension as client_extension,
    supports_apps as supports_apps,
)
