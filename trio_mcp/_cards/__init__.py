"""Server Cards (SEP-2127): a static document describing a remote MCP server, read before
connecting, and the MCP Catalog that lists the cards of an origin.

``_model`` is the card and catalog themselves and their strict reading; ``_generate``
builds a card from a :class:`~trio_mcp.Server`; ``_serving`` answers the card and catalog
endpoints of the ASGI app; ``_fetching`` reads them with httpx and turns a card into a
host's server config. The public names are in :mod:`trio_mcp.cards`.
"""
