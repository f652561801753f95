"""The HTTP side of pybrain: the MCP server over HTTP and the dashboard."""
