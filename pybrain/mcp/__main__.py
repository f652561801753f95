"""`python -m pybrain.mcp`: the server on stdio, as `brain mcp` runs it."""

from pybrain.mcp.server import serve

serve()
