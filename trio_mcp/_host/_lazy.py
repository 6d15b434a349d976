"""What a host loads only when it needs it: the HTTP client (for servers reached over HTTP) and
URI templates (to route a resource read by template), the MCP Apps views (for servers whose
tools have them). A host of stdio servers loads neither
(see "What importing loads" in ``docs/reference/layout.md``). Code here writes
``_lazy.Name``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import on_first_use

# What __getattr__ below loads on first use: on_first_use reads these statements.
# isort: off
if TYPE_CHECKING:
    from .._apps._fetching import tool_ui, view_from_result
    from .._http.client._connect import open_http_client
    from .._server._uritemplate import UriTemplate
# isort: on

if not TYPE_CHECKING:
    __getattr__ = on_first_use(globals())
