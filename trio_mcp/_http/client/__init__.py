"""Implementation of :mod:`trio_mcp.http`: the client side."""
