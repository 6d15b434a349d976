"""MCP over WebSocket: one JSON-RPC message per text frame, subprotocol ``mcp``."""

from ._extras import require_extra

require_extra("http", "trio_mcp.websocket", "trio_websocket", "httpx")

from ._websocket import (
    SUBPROTOCOL as SUBPROTOCOL,
    WebSocketClientOptions as WebSocketClientOptions,
    WebSocketStream as WebSocketStream,
    connect_websocket_client as connect_websocket_client,
    open_websocket_client as open_websocket_client,
    serve_websocket as serve_websocket,
    websocket_stream as websocket_stream,
)
