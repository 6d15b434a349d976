"""Implementations of the transports (see :mod:`trio_mcp.transports`)."""
