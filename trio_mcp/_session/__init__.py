"""Implementation of :mod:`trio_mcp.session`: the Trio engine."""
