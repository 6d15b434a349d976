"""Implementation of :mod:`trio_mcp.host`."""
