"""The MCP tool surface an agent loads: tools and schema tokens of each profile, from the
server's own tools/list (pybrain.mcp.schema_tokens: compact JSON at 4 characters a token)."""

from __future__ import annotations

from typing import Any

import anyio

from pybrain.mcp import DEFAULT_PROFILE, MCP_TOKEN_BUDGET, PROFILES, Service, build_server, schema_tokens


def run() -> dict[str, Any]:
    out: dict[str, Any] = {"default": DEFAULT_PROFILE, "budget_tokens": MCP_TOKEN_BUDGET, "profiles": {}}
    for profile in PROFILES:
        server = build_server(Service(brain=None), profile)  # type: ignore[arg-type]
        tools = anyio.run(server.list_tools)
        out["profiles"][profile] = {
            "tools": len(tools),
            "schema_tokens": schema_tokens(tools),
            "names": [t.name for t in tools],
        }
    return out
