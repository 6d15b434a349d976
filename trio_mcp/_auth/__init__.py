"""OAuth 2.1 authorization: the resource server side (token verification at the HTTP edge)
and the client side. Public names are re-exported by :mod:`trio_mcp.auth`."""
