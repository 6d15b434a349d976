"""The MCP Apps extension (SEP-1865, ``io.modelcontextprotocol/ui``): both sides.

``_format`` is what both sides agree on (identifiers, ``_meta.ui`` of resources and
tools, the policies a host builds); ``_serving`` makes a view a resource of a
:class:`~trio_mcp.Server`; ``_fetching`` reads a view from a :class:`~trio_mcp.Client`
and checks it. The public names are in :mod:`trio_mcp.apps`.
"""
