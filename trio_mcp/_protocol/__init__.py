"""Implementation of :mod:`trio_mcp.protocol`: the sans-IO connection core."""
