"""MCP over HTTP: Streamable HTTP (both protocol eras on one endpoint) and the legacy
2024-11-05 HTTP+SSE transport. The server is an ASGI app, served by ``serve`` on trio_mcp's
own HTTP/1.1 front end (httptools) or Hypercorn's Trio worker; the client runs on httpx."""

from ._extras import require_extra

require_extra("http", "trio_mcp.http")

from ._http.client._connect import (
    DEFAULT_TIMEOUT as DEFAULT_TIMEOUT,
    HttpClientOptions as HttpClientOptions,
    HttpStreamOptions as HttpStreamOptions,
    connect_http_client as connect_http_client,
    connect_http_stream as connect_http_stream,
    era_key as era_key,
    open_http_client as open_http_client,
    open_http_stream as open_http_stream,
)
from ._http.client._stream import (
    HttpClientStream as HttpClientStream,
    HttpClientStreamOptions as HttpClientStreamOptions,
)
from ._http.server._asgi import (
    AppOptions as AppOptions,
    McpAsgiApp as McpAsgiApp,
    asgi_app as asgi_app,
    open_asgi_app as open_asgi_app,
)
from ._http.server._callers import PeerPrefixes as PeerPrefixes
from ._http.server._event_store import (
    EventStore as EventStore,
    MemoryEventStore as MemoryEventStore,
    Replay as Replay,
)
from ._http.server._http11_parse import Http11Limits as Http11Limits
from ._http.server._security import OriginPolicy as OriginPolicy
from ._http.server._serve import serve as serve
from ._http.server._session_engine import close_sse_stream as close_sse_stream
