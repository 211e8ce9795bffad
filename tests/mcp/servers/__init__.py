"""Real MCP servers the tests start, over stdio and streamable HTTP."""
