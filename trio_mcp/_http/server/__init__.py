"""Implementation of :mod:`trio_mcp.http`: the server side."""
