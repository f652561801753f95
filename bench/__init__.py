"""pybrain's benchmark: `make bench` or `python -m bench [--quick] [--skip-longmemeval] [--million]`.

It starts its own throwaway embedded PostgreSQL, builds synthetic workspaces
of 10k and 100k memories, measures remember, search and recall inside the
database and through the Python client, the bulk-ingest rate of
brain.observe_batch, retrieval quality on LongMemEval-S with the local MiniLM
embedder, and the cold start of the `brain` command. docs/benchmarks.md
explains each figure; results go to bench/results/latest.json.
"""
