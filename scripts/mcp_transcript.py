"""Drive `brain mcp` with the MCP SDK's client and print the exchange, for the README.

Run with BRAIN_HOME (or BRAIN_DATABASE_URL) pointing at a scratch database.
"""

from __future__ import annotations

import json
import os
import sys

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

from pybrain.mcp import schema_tokens

CALLS = [
    ("boot_session", {"source": "claude", "project": "shop", "task": "speed up checkout"}),
    (
        "remember",
        {
            "kind": "rule",
            "severity": "BLOCKER",
            "project": "shop",
            "headline": "Never run migrations during business hours",
            "body": "Lock contention stalls checkout; schedule them after 22:00.",
        },
    ),
    (
        "remember",
        {
            "kind": "fact",
            "project": "shop",
            "headline": "Checkout p95 is 1.8 s",
            "body": "Measured on 2026-11-20; the payment call takes 1.1 s of it.",
        },
    ),
    (
        "remember",
        {
            "kind": "fact",
            "project": "shop",
            "headline": "Checkout p95 is about 1.8 seconds",
            "body": "Measured on 2026-11-20, the payment provider call takes 1.1 s of it.",
        },
    ),
    (
        "supersede",
        {
            "old_id": 2,
            "headline": "Checkout p95 is 0.9 s after caching",
            "body": "Payment tokens are cached now.",
            "reason": "token cache shipped",
        },
    ),
    ("search", {"query": "how slow is checkout", "project": "shop"}),
    ("search", {"query": "checkout", "limit": 5}),
    ("recall", {"id": 2}),
    ("end_session", {"handoff": "Token cache shipped; next: profile the cart page."}),
]


async def main() -> None:
    env = {k: v for k, v in os.environ.items() if k.startswith("BRAIN_")}
    params = StdioServerParameters(command=sys.executable, args=["-m", "pybrain", "mcp"], env=env)
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            tools = await s.list_tools()
            names = ", ".join(t.name for t in tools.tools)
            print(f"tools/list: {len(tools.tools)} tools, {schema_tokens(tools.tools)} tokens: {names}\n")
            for name, arguments in CALLS:
                result = await s.call_tool(name, arguments)
                print(f"→ {name} {json.dumps(arguments, ensure_ascii=False)}")
                if result.is_error:
                    print(f"← error: {result.content[0].text}\n")
                elif name == "boot_session":
                    out = result.structured_content
                    print(f"← session {out['session_id']}:\n{out['boot']}")
                else:
                    print(f"← {result.content[0].text}\n")  # what the agent reads


if __name__ == "__main__":
    anyio.run(main)
