"""Implementation of :mod:`trio_mcp.http` (Streamable HTTP, legacy HTTP+SSE)."""
