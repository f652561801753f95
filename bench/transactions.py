"""Transactions a user's call costs: remember, search and a session's end through the Python client.

Each operation runs through `pybrain.client.Brain` on a connection of its own, as
the CLI and the hooks run it, against a fresh database; the server's count of
committed and rolled-back transactions of that database (pg_stat_database, each
backend's counts flushed with pg_stat_force_next_flush) is read before and after,
less what the counting itself costs (the same steps around no operation). The
figure is the median of `runs` runs of each operation: a change to the client that
adds a round of BEGIN/COMMIT shows here as a whole number.

    python -m bench.transactions
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import psycopg

from bench.server import BenchServer
from bench.util import log

DB = "bench_transactions"


def _count(watch: psycopg.Connection) -> int:
    watch.execute("SELECT pg_stat_clear_snapshot()")
    (n,) = watch.execute(
        "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()"
    ).fetchone()
    return int(n)


def _flushed(conn: psycopg.Connection, watch: psycopg.Connection) -> int:
    """The database's transactions so far, once conn's and watch's own are flushed."""
    conn.execute("SELECT pg_stat_force_next_flush()")
    watch.execute("SELECT pg_stat_force_next_flush()")
    time.sleep(0.05)  # (a backend flushes when it goes idle)
    return _count(watch)


def measure(server: BenchServer, runs: int = 5) -> dict[str, Any]:
    from pybrain.client import Brain
    from pybrain.embed import get_embedder

    url = server.create_database(DB)
    embedder = get_embedder("hash")
    # each operation, and what it needs done before it (not counted)
    ops: dict[str, tuple[Callable[[Any, int], Any], Callable[[Any, int], Any]]] = {
        "nothing": (lambda brain, i: None, lambda brain, i: None),
        "remember": (
            lambda brain, i: None,
            lambda brain, i: brain.remember("fact", f"The export job {i} runs at 0{i % 9}:15 UTC"),
        ),
        "search": (lambda brain, i: None, lambda brain, i: brain.search("when does the export job run")),
        "session end": (
            lambda brain, i: brain.boot_session("bench", project="shop"),
            lambda brain, i: brain.end_session_of("bench", project="shop", handoff=f"Run {i} done."),
        ),
    }
    counts: dict[str, list[int]] = {name: [] for name in ops}
    with psycopg.connect(url, autocommit=True) as watch, psycopg.connect(url, autocommit=True) as conn:
        brain = Brain(conn, embedder=embedder)
        brain.use_embedding_space()
        for i in range(runs):
            for name, (setup, op) in ops.items():
                setup(brain, i)
                before = _flushed(conn, watch)
                op(brain, i)
                counts[name].append(_flushed(conn, watch) - before)
    base = statistics.median(counts.pop("nothing"))
    result = {name: statistics.median(c) - base for name, c in counts.items()}
    log("  transactions a call: " + ", ".join(f"{k} {v:g}" for k, v in result.items()))
    return {"runs": runs, "transactions": result, "counting_itself": base}


def main() -> int:
    server = BenchServer()
    try:
        print(measure(server))
    finally:
        server.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
