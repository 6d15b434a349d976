"""Implementation of :mod:`trio_mcp.testing`."""
