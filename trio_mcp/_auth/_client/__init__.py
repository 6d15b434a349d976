"""The client side of MCP authorization: an ``httpx.Auth`` flow and what it needs."""
