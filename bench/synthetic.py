"""One synthetic workspace: generate, load, then measure remember, search and recall.

The vectors are the hash embedder's by default. With a MiniLM source the
same corpus is embedded with all-MiniLM-L6-v2 (cached, see bench/embcache.py)
and only the read side is measured: search latency and vector recall on
vectors with a real model's geometry.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import psycopg

from bench import boot, hashvec, latency, loader
from bench.corpus import Generator
from bench.server import CLIENT_ROLE, BenchServer
from bench.util import log, timed
from pybrain import db


def prewarm(conn: psycopg.Connection) -> dict[str, Any]:
    """Read every table and index of the brain schema into shared_buffers, smallest first (pg_prewarm):
    the figures are then those of a server that has been running, not of a copy just made, whose
    pages a first pass of queries would read from the operating system's cache. What does not fit
    in shared_buffers pushes out what was read before it."""
    t0 = time.perf_counter()
    if conn.execute("SELECT FROM pg_extension WHERE extname = 'pg_prewarm'").fetchone() is None:
        conn.execute("CREATE EXTENSION pg_prewarm")  # (a hot standby has it from its primary)
    blocks = 0
    for (oid,) in conn.execute(
        "SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = 'brain' AND c.relkind IN ('r', 'i') ORDER BY pg_relation_size(c.oid), c.oid"
    ).fetchall():
        blocks += conn.execute("SELECT pg_prewarm(%s::regclass)", (oid,)).fetchone()[0]
    return {"mb": blocks * 8 // 1024, "seconds": round(time.perf_counter() - t0, 1)}


def load_workspace(
    server: BenchServer,
    name: str,
    size: int,
    *,
    seed: int,
    embed: Callable[[list[str]], np.ndarray],
    minilm: bool = False,
) -> tuple[list[Any], int, list[int], dict[str, Any]]:
    """The synthetic workspace of `size` memories as database `name`: a copy of the one saved under a
    kept data directory, or generated and loaded (and then saved there). Returns the corpus, the
    embedding space, the memory ids and what the load measured."""
    gen = Generator(seed)
    with timed() as t_gen:
        corpus = gen.memories(size)
    hashvec.check([m.embedding_input() for m in corpus[:300]])
    log(f"  generated {size:,} memories in {t_gen[0]:.1f}s")
    provider, model = ("local", "all-MiniLM-L6-v2") if minilm else ("hash", "feature-hash-v1")
    # With a kept data directory the loaded workspace is saved once and copied by later runs.
    saved = f"{name}_loaded_{seed}"
    if server.persistent and server.has_database(saved):
        server.restore_database(saved, name)
        loaded = json.loads(server.database_comment(saved) or "{}") | {"reused": saved}
        with server.connect(name) as conn:
            space_id = loader.register_space(conn, provider, model, 384)
            ids = [r[0] for r in conn.execute("SELECT memory_id FROM brain.memory ORDER BY memory_id")]
    else:
        # A kept data directory may hold an interrupted set-based load: it is resumed.
        resume = server.persistent and size > 100_000 and server.has_database(name)
        url = server.url(name) if resume else server.create_database(name)
        if resume:
            # the interrupted load may predate this tree's SQL
            with server.connect(name) as conn:
                report = db.migrate(conn)
            log(f"  resuming {name}; migrated: {', '.join(report.applied) or 'nothing new'}")
        with server.connect(name) as conn:
            space_id = loader.register_space(conn, provider, model, 384, statements=True)
        # Above 100k memories the set-based path (minutes instead of an hour on two busy cores).
        if size > 100_000:
            loaded = loader.load_bulk(url, corpus, space_id=space_id, embed=embed, resume=resume)
        else:
            loaded = loader.load(url, corpus, space_id=space_id, embed=embed)
        ids = [i for i in loaded.pop("ids") if i is not None]
        loaded.pop("vectors")
        loaded.pop("vector_row_of")
        if server.persistent:
            log(f"  saving the loaded workspace as {saved}")
            server.save_database(name, saved, json.dumps(loaded))
    return corpus, space_id, ids, loaded


def run(
    server: BenchServer,
    size: int,
    *,
    seed: int,
    n_queries: int,
    n_filtered: int,
    n_recall_vectors: int,
    n_remember: int,
    n_remember_e2e: int,
    n_recall: int,
    profile: bool,
    throughput_seconds: float = 8.0,
    minilm: Callable[[list[str]], np.ndarray] | None = None,
) -> dict[str, Any]:
    """minilm: MiniLM vectors for a list of texts; given, the run measures search and recall only."""
    name = f"bench_{size}" + ("_minilm" if minilm else "")
    embed = minilm or hashvec.vectors
    log(
        f"== synthetic workspace of {size:,} memories (database {name}, "
        f"{'MiniLM' if minilm else 'hash'} vectors)"
    )
    corpus, space_id, ids, loaded = load_workspace(
        server, name, size, seed=seed, embed=embed, minilm=bool(minilm)
    )
    provider, model = ("local", "all-MiniLM-L6-v2") if minilm else ("hash", "feature-hash-v1")

    result: dict[str, Any] = {
        "memories": size,
        "vectors": f"{provider}:{model}",
        "load": loaded,
    }
    try:
        # conn: the superuser (loading, statistics, exact answers, the raw floor); client: the role
        # users have, under row-level security, which every pybrain figure is timed as.
        with server.connect(name) as conn, server.connect_client(name) as client:
            result["table_sizes"] = dict(
                zip(
                    ("memory", "embedding", "hnsw_index"),
                    conn.execute(
                        "SELECT pg_size_pretty(pg_total_relation_size('brain.memory')),"
                        " pg_size_pretty(pg_relation_size('brain.embedding')),"
                        " pg_size_pretty(pg_relation_size(%s::regclass))",
                        (f"brain.embedding_hnsw_{space_id}",),
                    ).fetchone(),
                    strict=True,
                )
            )
            result["kinds"] = dict(
                conn.execute("SELECT kind, count(*) FROM brain.memory GROUP BY 1 ORDER BY 1").fetchall()
            )
            # the workspace's word frequencies, as brain.maintain samples them (it runs daily)
            started = time.perf_counter()
            client.execute("SELECT set_config('brain.workspace', '1', false)")
            if client.execute("SELECT to_regprocedure('brain.analyze_lexemes(integer)')").fetchone()[0]:
                result["analyze_lexemes"] = client.execute("SELECT brain.analyze_lexemes()").fetchone()[0]
            else:  # an earlier release's SQL (the planner's statistics then)
                conn.execute("ANALYZE brain.memory")
                result["analyze_lexemes"] = {"absent": "ANALYZE brain.memory"}
            result["analyze_lexemes"]["seconds"] = round(time.perf_counter() - started, 2)
            log(f"  sampled the workspace's word frequencies: {result['analyze_lexemes']}")
            result["prewarm"] = prewarm(conn)
            log(
                f"  read the workspace into PostgreSQL's cache first (pg_prewarm, a server that has been"
                f" running): {result['prewarm']['mb']:,} MB in {result['prewarm']['seconds']} s"
            )
            latency.prepare(conn, 1)
            latency.prepare(client, 1, owner=conn)
            qgen = Generator(seed + 1)
            queries = qgen.queries(n_queries)
            qvecs = embed(queries)

            log(
                f"  search as the client role {CLIENT_ROLE}: {n_queries} queries x"
                " (hybrid, vector only, lexical only)"
            )
            result["search"] = latency.search_latency(client, queries, qvecs, owner=conn)
            latency.log_summary("hybrid search", result["search"]["hybrid"])
            result["search_breakdown"] = latency.search_breakdown(
                client, lambda: server.connect_client(name), queries[:50], qvecs[:50], result["search"]
            )
            result["search_odd"] = latency.odd_queries(client)
            latency.log_summary(
                f"hybrid search, {result['search_odd']['queries']} odd queries (fragments, typos,"
                f" stop words); slowest {result['search_odd']['slowest']!r}",
                result["search_odd"],
            )
            result["search_superuser"] = latency.search_latency(conn, queries, qvecs, legs=False)
            latency.log_summary("hybrid search as the superuser", result["search_superuser"]["hybrid"])

            rnd = random.Random(seed + 2)
            tags = [f"comp-{rnd.randrange(100):02d}" for _ in range(n_filtered)]
            log(f"  filtered search: {n_filtered} queries with a 1% tag filter")
            result["search_filtered"] = latency.filtered_search(
                client, queries[:n_filtered], qvecs[:n_filtered], tags, space_id, 1, owner=conn
            )
            latency.log_summary("filtered search", result["search_filtered"])
            log(f"  filtered searches complete: {result['search_filtered']['fraction_complete']}")
            log(f"  filters of four selectivities: {n_filtered} queries each")
            result["search_by_filter"] = latency.filter_selectivity(
                client, queries[:n_filtered], qvecs[:n_filtered], tags, owner=conn
            )
            for label, r in result["search_by_filter"].items():
                latency.log_summary(
                    f"filter {label}", r | {"n": f"{r['n']}, kept {r['rows_kept_first_query']:,}"}
                )

            if not minilm:
                log("  the raw PostgreSQL floor: HNSW top-10, full-text top-10, filtered HNSW, INSERT")
                result["raw_floor"] = latency.raw_floor(
                    conn, queries, qvecs, tags, space_id, Generator(seed + 8).memories(min(100, n_remember))
                )
                result["floor_ratios"] = latency.floor_ratios(result)
                result["floor_context"] = latency.floor_context(result)

            log(f"  vector recall@10: {n_recall_vectors} query vectors against exact scans")
            result["vector_recall"] = latency.vector_recall(
                conn,
                qvecs[-n_recall_vectors:],
                space_id,
                1,
                ef_sweep=(64, 100, 200, 400) if minilm else (200, 400, 800),
            )
            log(f"  vector recall@10 = {result['vector_recall']['mean_recall_at_10']}")
            result["vector_recall_filtered"] = latency.vector_recall(
                conn,
                qvecs[:n_recall_vectors],
                space_id,
                1,
                tags=tags[:n_recall_vectors]
                if len(tags) >= n_recall_vectors
                else [tags[i % len(tags)] for i in range(n_recall_vectors)],
            )
            log(
                "  vector recall@10 with a 1% tag filter = "
                f"{result['vector_recall_filtered']['mean_recall_at_10']}"
            )

            if minilm:
                return result

            log(f"  recall: {n_recall} memories")
            result["recall"] = latency.recall_latency(client, rnd.sample(ids, n_recall))
            latency.log_summary("recall", result["recall"])

            wgen = Generator(seed + 3)
            items = latency.remember_workload(wgen, corpus, n_remember + n_remember_e2e, rnd)
            log(f"  remember in the database: {n_remember} writes (60% new, 40% near-duplicates)")
            result["remember"] = latency.remember_in_db(client, items[:n_remember])
            latency.log_summary("remember", result["remember"])
            log(f"  remember by scope size: {min(100, n_remember)} new facts into each of three projects")
            result["remember_by_scope"] = latency.remember_by_scope(
                client, Generator(seed + 7), min(100, n_remember)
            )
            for label, r in result["remember_by_scope"].items():
                latency.log_summary(f"remember, {label}", r)
            log(f"  remember end to end (Python client, hash embedder): {n_remember_e2e} writes")
            result["remember_e2e"] = latency.remember_end_to_end(client, 1, items[n_remember:])
            latency.log_summary("remember e2e", result["remember_e2e"])
            result["search_e2e"] = latency.search_end_to_end(client, 1, queries[: min(50, n_queries)])
            latency.log_summary("search e2e", result["search_e2e"])
            result["boot"] = boot.run(client, seed=seed + 5, n=min(100, n_queries), owner=conn)
            log("  remember throughput with 1, 2, 4 and 8 clients")
            result["remember_throughput"] = latency.remember_throughput(
                server.client_url(name), Generator(seed + 6), seconds=throughput_seconds
            )
            log(
                "  remember throughput: "
                + ", ".join(
                    f"{r['clients']} clients {r['writes_per_s']}/s (x{r['speedup']})"
                    for r in result["remember_throughput"]["runs"].values()
                )
            )
            result["floor_ratios"] = latency.floor_ratios(result)
            result["floor_context"] = latency.floor_context(result)

            if profile:
                log(f"  profiling brain.search and brain.remember as {CLIENT_ROLE} (track_functions = all)")
                extra = latency.remember_workload(Generator(seed + 4), corpus, 100, rnd)
                result["profile_search"] = latency.profile_functions(
                    conn,
                    CLIENT_ROLE,
                    lambda c: [
                        latency.timed_search(c, q, v) for q, v in zip(queries[:50], qvecs[:50], strict=True)
                    ],
                )
                result["profile_remember"] = latency.profile_functions(
                    conn, CLIENT_ROLE, lambda c: latency.remember_in_db(c, extra)
                )
    finally:
        server.drop_database(name)
    return result
