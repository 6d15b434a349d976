"""Implementation of :mod:`trio_mcp.http`: ``server/`` is the ASGI app (served by
Hypercorn), ``client/`` the httpx client; ``_headers.py`` (the MCP request headers) is
what both sides share.

Three words in module names say which way of speaking MCP over HTTP a module serves:

* *modern*: the stateless era (2026-07-28), every request its own POST
  (``server/_modern.py``; the client's is ``client/_stream.py``).
* *legacy*: the initialize-handshake era (2025-03-26 to 2025-11-25) of Streamable HTTP,
  with its sessions (``server/_session_engine.py``, ``_session_manager.py``,
  ``_resumable_streams.py``; ``client/_legacy.py``).
* *sse_2024*: the HTTP+SSE transport of 2024-11-05 (``GET /sse``, ``POST /messages``),
  deprecated since 2025-03-26 (``server/_sse_2024.py``; ``client/_sse_2024.py``, which
  the client falls back to when a server refuses ``initialize``).
"""
