"""Implementation of :mod:`trio_mcp.types` (wire models, one module per topic)."""
