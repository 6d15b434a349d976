"""MCP over HTTP: Streamable HTTP (both eras) and the legacy 2024-11-05 HTTP+SSE transport."""

from ._http._client import (
    DEFAULT_TIMEOUT as DEFAULT_TIMEOUT,
    connect_http_client as connect_http_client,
    connect_http_stream as connect_http_stream,
    era_key as era_key,
    open_http_client as open_http_client,
    open_http_stream as open_http_stream,
)
from ._http._client_stream import HttpClientStream as HttpClientStream
