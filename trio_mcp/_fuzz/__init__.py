"""Implementation of the fuzzer (``trio-mcp fuzz``, :func:`trio_mcp.fuzz.fuzz`):
Hypothesis state machines that drive any MCP server over a real transport and check
what it answers against the requirements of the spec."""
