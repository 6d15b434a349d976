"""Implementation of :mod:`trio_mcp.server`."""
