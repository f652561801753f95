"""The seam between SQL and Python.

- catalogue: each public brain.* function and its traits, read from the database
  (brain.catalogue): no list of function names is kept in Python;
- transport: how one call reaches the database (arguments, retries, races,
  request keys, replica routing, WAL-position waits);
- core, memories, sessions, embedding: the Brain's state and its typed methods,
  which hold no transport code;
- brain: the Brain put together, and open_brain, the one place a Brain is built,
  for each purpose (CLI, MCP, serve, dashboard, hooks, worker);
- vectors: how a batch of vectors travels (Float8Matrix).

pybrain.client and pybrain.connector are the faces docs/python.md shows. This
package's own module imports nothing: pybrain.db takes Float8Matrix from
pybrain.api.vectors without loading the Brain.
"""
