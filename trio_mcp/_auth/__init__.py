"""OAuth 2.1 authorization for MCP over HTTP (client and server sides; see trio_mcp.auth)."""
