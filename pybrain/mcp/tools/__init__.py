"""The MCP tools, grouped by concern; each takes the SDK's Context, makes one call of the
Python client, and has its docstring as its description. pybrain.mcp.profiles says which
profile serves which."""
