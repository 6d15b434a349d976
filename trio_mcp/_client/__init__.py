"""Implementation of :mod:`trio_mcp.client`."""
