"""A fleet: several worker processes (on one machine or many) that serve as one MCP server,
sharing their state through Redis, so that any worker answers any request.

Give every worker the same :class:`RedisState` (or its URL) as ``state=``:
:func:`trio_mcp.http.serve` (with ``workers=N`` too), :func:`trio_mcp.http.asgi_app`,
:func:`trio_mcp.websocket.serve_websocket`. :func:`rotate_request_state_key` changes the
fleet's ``requestState`` key without refusing the rounds in flight. See the how-to "Run
several workers" for what crosses workers and what each failure looks like.
"""

from ._fleet._rotate import rotate_request_state_key as rotate_request_state_key
from ._fleet._state import RedisState as RedisState
