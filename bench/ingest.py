"""Bulk-ingest rate of brain.observe_batch: observed rows with precomputed embeddings.

Each batch is one observe_batch call (one transaction). The texts are
generated engineering notes ("headline. body"), embedded with the hash
embedder beforehand, so the figure is the database's write path alone: gate,
chunking, exact dedup, extraction, kind rows, audit and the embedding rows.
Batches of index_defer_rows (100) chunks or more leave their vectors out of the
HNSW index; brain.index_vectors then indexes them (a rebuild of the space's
index, or inserts) and runs their near-identical dedup, timed separately, so
the report gives both the rate of the calls and the rate to a fully indexed,
deduplicated workspace. Searches while the vectors wait are timed too.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import psycopg

from bench import hashvec, latency, loader
from bench.corpus import Generator
from bench.server import CLIENT_ROLE, BenchServer
from bench.util import batched, log, summary
from pybrain.db import Float8Matrix

DB = "bench_ingest"


def _texts(gen: Generator, n: int) -> list[str]:
    return [f"{m.headline}. {m.body}" for m in gen.memories(n)]


def _prepare(conn: psycopg.Connection, texts: list[str], size: int, project: str = "") -> list[tuple]:
    """Batches of (texts, their chunks' hash vectors), from observe_batch's check_only answer."""
    out = []
    for batch in batched(texts, size):
        checked = conn.execute(
            "SELECT embedding_input FROM brain.observe_batch(texts => %s, project => %s, check_only => true)"
            " WHERE action = 'valid'",
            (batch, project),
        ).fetchall()
        out.append((batch, Float8Matrix(hashvec.vectors([r[0] for r in checked]).astype("float64"))))
    return out


def _run_batches(conn: psycopg.Connection, batches: list[tuple], project: str = "") -> dict[str, Any]:
    """One observe_batch call per batch; only the calls are timed."""
    total_rows, total_s, rates = 0, 0.0, []
    for texts, vecs in batches:
        start = time.perf_counter()
        rows = conn.execute(
            "SELECT count(*) FROM brain.observe_batch(texts => %s, project => %s, embeddings => %s)",
            (texts, project, vecs),
        ).fetchone()[0]
        seconds = time.perf_counter() - start
        total_rows += rows
        total_s += seconds
        rates.append(rows / seconds)
    return {
        "rows": total_rows,
        "seconds": round(total_s, 2),
        "rows_per_s": round(total_rows / total_s),
        "batch_size": len(batches[0][0]),
        "min_batch_rows_per_s": round(min(rates)),
        "max_batch_rows_per_s": round(max(rates)),
    }


def _index(conn: psycopg.Connection, calls: dict[str, Any]) -> dict[str, Any]:
    """brain.index_vectors until nothing waits; with the figures of the calls before it."""
    start = time.perf_counter()
    steps = []
    while (done := conn.execute("SELECT brain.index_vectors()").fetchone()[0])["action"] != "none":
        steps.append(done)
    seconds = time.perf_counter() - start
    total = calls["seconds"] + seconds
    return {
        "seconds": round(seconds, 2),
        "actions": sorted({d["action"] for d in steps}),
        "indexed": sum(d["indexed"] for d in steps),
        "folded": sum(d["folded"] for d in steps),
        "rows_per_s_with_index": round(calls["rows"] / total) if total else None,
    }


def _search(conn: psycopg.Connection, owner: psycopg.Connection, n: int = 200) -> dict[str, Any]:
    """Hybrid search p50/p95 (in the database), and how many vectors wait outside the index."""
    owner.execute("ANALYZE brain.memory")  # as autovacuum would after thousands of inserts
    gen = Generator(99)
    queries = [m.headline for m in gen.memories(n)]
    vecs = hashvec.vectors(queries)
    latency.install_timers(owner, latency.TIMERS)
    waiting = owner.execute(
        "SELECT count(*) FROM brain.embedding e JOIN brain.embedding_space s USING (workspace_id, space_id)"
        " WHERE e.ingest_seq > s.indexed_through"
    ).fetchone()[0]
    ms = [latency.timed_search(conn, q, v, max_results=10)["ms"] for q, v in zip(queries, vecs, strict=True)]
    return {"waiting_vectors": waiting, **summary(ms)}


def run(server: BenchServer, *, seed: int, rows: int, quick: bool, profile: bool) -> dict[str, Any]:
    log(f"== bulk ingest: brain.observe_batch, {rows:,} observed rows, precomputed hash embeddings")
    server.create_database(DB)
    gen = Generator(seed)
    out: dict[str, Any] = {}
    # Timed as the client role (row-level security), as every client writes; the superuser
    # (owner) runs ANALYZE, which only the table's owner may.
    with server.connect(DB) as owner, server.connect_client(DB) as conn:
        loader.register_space(owner, "hash", "feature-hash-v1", 384)
        loader.set_workspace(conn, 1)
        # A fresh database: the planner has no statistics on brain.memory yet.
        out["cold_first_batch"] = _run_batches(conn, _prepare(conn, _texts(gen, 500), 500))
        out["cold_first_batch"]["index"] = _index(conn, out["cold_first_batch"])
        log(f"  fresh workspace, first batch of 500: {out['cold_first_batch']['rows_per_s']} rows/s")
        owner.execute("ANALYZE")
        out["batch_1000"] = _run_batches(conn, _prepare(conn, _texts(gen, rows), 1000))
        out["search_while_waiting"] = _search(conn, owner)
        out["batch_1000"]["index"] = _index(conn, out["batch_1000"])
        out["search_after_index"] = _search(conn, owner)
        calls, index, waiting = out["batch_1000"], out["batch_1000"]["index"], out["search_while_waiting"]
        log(
            f"  batches of 1000: {calls['rows_per_s']} rows/s; indexed in {index['seconds']} s:"
            f" {index['rows_per_s_with_index']} rows/s in all; search p50 {waiting['p50']} ms with"
            f" {waiting['waiting_vectors']} vectors waiting"
        )
        if not quick:
            out["batch_500"] = _run_batches(conn, _prepare(conn, _texts(gen, rows // 2), 500))
            out["batch_500"]["index"] = _index(conn, out["batch_500"])
            log(f"  batches of 500: {out['batch_500']['rows_per_s']} rows/s")
            # Below index_defer_rows: each batch inserts its vectors into the index itself.
            out["batch_50"] = _run_batches(conn, _prepare(conn, _texts(gen, 2000), 50))
            log(f"  batches of 50 (indexed at once): {out['batch_50']['rows_per_s']} rows/s")
        if profile:
            batches = _prepare(conn, _texts(gen, 500), 500)
            out["profile_batch_500"] = latency.profile_functions(
                owner, CLIENT_ROLE, lambda c: _run_batches(c, batches)
            )
    if not quick:
        out["batch_1000_two_connections"] = _two_connections(server, gen, rows // 2)
        log(f"  two connections: {out['batch_1000_two_connections']['rows_per_s']} rows/s")
    with server.connect(DB) as owner:
        # A new workspace in a database whose statistics predate it: the same plans as a fresh database.
        (ws,) = owner.execute(
            "INSERT INTO brain.workspace (organization_id, name) VALUES (1, 'ingest-new')"
            " RETURNING workspace_id"
        ).fetchone()
        owner.execute("SELECT brain.grant_workspace(%s, %s, 'write')", (CLIENT_ROLE, ws))
        owner.execute("SELECT set_config('brain.workspace', %s, false)", (str(ws),))
        loader.register_space(owner, "hash", "feature-hash-v1", 384)
    with server.connect_client(DB) as conn:
        conn.execute("SELECT set_config('brain.workspace', %s, false)", (str(ws),))
        out["new_workspace_first_batch"] = _run_batches(conn, _prepare(conn, _texts(gen, 500), 500))
        log(f"  new workspace, first batch of 500: {out['new_workspace_first_batch']['rows_per_s']} rows/s")
    server.drop_database(DB)
    return out


def _two_connections(server: BenchServer, gen: Generator, rows: int) -> dict[str, Any]:
    """Two writers at once, on different projects (writers of one kind and project take turns)."""
    with server.connect_client(DB) as conn:
        loader.set_workspace(conn, 1)
        prepared = [_prepare(conn, _texts(gen, rows // 2), 1000, f"ingest-{i}") for i in range(2)]
    results: list[dict[str, Any]] = [{}, {}]

    def work(i: int) -> None:
        with server.connect_client(DB) as conn:
            loader.set_workspace(conn, 1)
            results[i] = _run_batches(conn, prepared[i], project=f"ingest-{i}")

    start = time.perf_counter()
    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    total = sum(r["rows"] for r in results)
    return {
        "rows": total,
        "seconds": round(wall, 2),
        "rows_per_s": round(total / wall),
        "batch_size": 1000,
        "note": "wall time of both writers, observe_batch calls only",
    }
