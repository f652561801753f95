"""`brain serve`: the MCP server over streamable HTTP, with bearer tokens (docs/serve.md).

auth: verify a token against the database and run a transaction as its role
and workspace; pool: a Brain whose calls take a pooled connection; app: the
Starlette application and the server. ui: the dashboard (`brain ui`,
docs/dashboard.md) on the same stack.
"""
