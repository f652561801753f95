"""`brain mcp`: the MCP server (stdio), one tool per user-facing SQL function.

Two profiles: `lean` (the default: the ten tools an agent uses in a session,
their schemas within MCP_TOKEN_BUDGET) and `full` (every tool, for power users
and operators). Each tool is one call of the Python client, which is one SQL call. The server
keeps the session it booted and passes it on every call (the heartbeat);
every call, failed or not, is recorded in brain.tool_event. Nothing but
JSON-RPC goes to stdout: logs go to stderr.

The package: `tools/` (the tools, by concern), `profiles` (which profile serves which tool),
`arguments` (argument checks), `render` (what an agent reads, quoted as brain.quote_text
quotes), `schemas` (tools/list's schemas and their token cost), `session` (per-session state),
`server` (the server and `serve`).
"""

from pybrain.mcp.profiles import DEFAULT_PROFILE, LEAN_TOOLS, MCP_TOKEN_BUDGET, PROFILES, check_profile
from pybrain.mcp.render import age, json_text, quote, render_hits
from pybrain.mcp.schemas import schema_tokens
from pybrain.mcp.server import BrainMCP, build_server, serve
from pybrain.mcp.session import Service, SessionState

__all__ = [
    "DEFAULT_PROFILE",
    "LEAN_TOOLS",
    "MCP_TOKEN_BUDGET",
    "PROFILES",
    "BrainMCP",
    "Service",
    "SessionState",
    "age",
    "build_server",
    "check_profile",
    "json_text",
    "quote",
    "render_hits",
    "schema_tokens",
    "serve",
]
