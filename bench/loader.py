"""Bulk loading of a synthetic workspace.

Through the API, a write with an embedding costs ~3-4 ms on this class of
machine, most of it the incremental HNSW insert and the semantic-dedup lookup
(see the ingest figures), so 100k memories would take 7+ minutes. The loader
therefore splits the work:

1. every memory goes through `brain.remember` *without* an embedding (the
   whole write gate, exact dedup, extraction, kind rows, audit), in batches
   of 2000 per transaction on two connections;
2. the hash vectors of the returned `embedding_input`s are copied into
   brain.embedding with the space's HNSW index dropped, and the index is then
   rebuilt with the exact definition brain.use_embedding_space gave it;
3. the loaded rows are marked as deduplicated (the generator's texts are
   distinct) and everything is VACUUM ANALYZEd.

The searched data and indexes are the same as after one-by-one writes; only
the HNSW graph is built in one pass instead of incrementally.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector

from bench import hashvec
from bench.corpus import Memory
from bench.util import log, timed

BULK_REMEMBER = """
CREATE OR REPLACE FUNCTION pg_temp.bench_bulk_remember(items jsonb)
RETURNS TABLE (i integer, action text, memory_id bigint, embedding_input text)
LANGUAGE plpgsql AS $$
DECLARE
    e jsonb;
    r brain.write_result;
BEGIN
    FOR n IN 0 .. jsonb_array_length(items) - 1 LOOP
        e := items -> n;
        r := brain.remember(
            kind => e->>'kind', headline => e->>'headline', body => e->>'body',
            category => e->>'category', project => e->>'project',
            tags => ARRAY(SELECT jsonb_array_elements_text(e->'tags')),
            severity => e->>'severity', status => e->>'status', priority => (e->>'priority')::integer,
            error_message => e->>'error_message', what_was_wrong => e->>'what_was_wrong',
            what_is_correct => e->>'what_is_correct');
        i := n; action := r.action; memory_id := r.memory_id; embedding_input := r.embedding_input;
        RETURN NEXT;
    END LOOP;
END
$$;
"""


def set_workspace(conn: psycopg.Connection, workspace: int) -> None:
    conn.execute("SELECT set_config('brain.workspace', %s, false)", (str(workspace),))


def register_space(conn: psycopg.Connection, provider: str, model: str, dims: int) -> int:
    row = conn.execute(
        "SELECT space_id FROM brain.use_embedding_space(provider => %s, model => %s, dims => %s)",
        (provider, model, dims),
    ).fetchone()
    return int(row[0])


def load(
    url: str,
    memories: list[Memory],
    *,
    workspace: int = 1,
    space_id: int,
    batch: int = 2000,
    workers: int = 2,
    vectors: np.ndarray | None = None,
    embed: Callable[[list[str]], np.ndarray] | None = None,
) -> dict[str, Any]:
    """Stores memories in the workspace; returns timings and the ids created, in input order.

    The embeddings are the vectors embed() gives for each memory's
    embedding_input (hash vectors by default), or the given vectors (one row
    per memory).
    """
    n = len(memories)
    ids: list[int | None] = [None] * n
    inputs: list[str | None] = [None] * n
    actions: dict[str, int] = {}
    jobs: queue.Queue = queue.Queue()
    for start in range(0, n, batch):
        jobs.put(start)
    lock = threading.Lock()
    analyzed_at = [0]
    done = [0]
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            with psycopg.connect(url, autocommit=True) as conn:
                set_workspace(conn, workspace)
                conn.execute(BULK_REMEMBER)
                while True:
                    try:
                        start = jobs.get_nowait()
                    except queue.Empty:
                        return
                    chunk = memories[start : start + batch]
                    payload = json.dumps([m.remember_args() for m in chunk])
                    with conn.transaction():
                        rows = conn.execute(
                            "SELECT i, action, memory_id, embedding_input"
                            " FROM pg_temp.bench_bulk_remember(%s)",
                            (payload,),
                        ).fetchall()
                    with lock:
                        for i, action, memory_id, embedding_input in rows:
                            actions[action] = actions.get(action, 0) + 1
                            if action == "created":
                                ids[start + i] = memory_id
                                inputs[start + i] = embedding_input
                        done[0] += len(chunk)
                        # A fresh table has no planner statistics, and the write path's
                        # lookups then pick plans that scan the workspace (see
                        # docs/benchmarks.md): analyze whenever the table has doubled.
                        need_analyze = done[0] >= 2 * analyzed_at[0]
                        if need_analyze:
                            analyzed_at[0] = done[0]
                    if need_analyze:
                        conn.execute("ANALYZE brain.memory")
                        conn.execute("ANALYZE brain.fact")
                    if done[0] % (batch * 10) < batch:
                        log(f"  remembered {done[0]:,}/{n:,}")
        except BaseException as exc:  # reported by the caller
            errors.append(exc)

    with timed() as t_rows:
        threads = [threading.Thread(target=worker) for _ in range(workers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    if errors:
        raise errors[0]

    created = [i for i in range(n) if ids[i] is not None]
    with timed() as t_vec:
        if vectors is None:
            vecs = (embed or hashvec.vectors)([inputs[i] for i in created])
        else:
            vecs = np.asarray(vectors, dtype=np.float32)[created]
    log(f"  {len(created):,} stored ({actions}); vectors in {t_vec[0]:.1f}s")

    with psycopg.connect(url, autocommit=True) as conn:
        index = f"embedding_hnsw_{space_id}"
        (indexdef,) = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE schemaname = 'brain' AND indexname = %s", (index,)
        ).fetchone()
        conn.execute(f"DROP INDEX brain.{index}")
        with timed() as t_copy:
            copy_embeddings(conn, workspace, space_id, [ids[i] for i in created], vecs)
        log(f"  copied {len(created):,} embeddings in {t_copy[0]:.1f}s; building the HNSW index")
        with timed() as t_index:
            # The graph is built in memory when it fits (1M x 384 dims needs ~2 GB).
            conn.execute("SET maintenance_work_mem = '4GB'")
            conn.execute(indexdef)
        with timed() as t_flag:
            conn.execute(
                "UPDATE brain.memory SET dedup_pending = false WHERE workspace_id = %s AND dedup_pending",
                (workspace,),
            )
        with timed() as t_vacuum:
            conn.execute("VACUUM ANALYZE brain.memory")
            conn.execute("VACUUM ANALYZE brain.embedding")
            conn.execute("VACUUM ANALYZE brain.fact")
            conn.execute("VACUUM ANALYZE brain.audit")
            conn.execute("ANALYZE")
    log(f"  HNSW index built in {t_index[0]:.1f}s; flags {t_flag[0]:.1f}s; vacuum {t_vacuum[0]:.1f}s")
    return {
        "rows": n,
        "created": len(created),
        "actions": actions,
        "remember_seconds": round(t_rows[0], 1),
        "remember_rows_per_s": round(n / t_rows[0]),
        "embedding_copy_seconds": round(t_copy[0], 1),
        "hnsw_build_seconds": round(t_index[0], 1),
        "vacuum_seconds": round(t_vacuum[0] + t_flag[0], 1),
        "ids": [ids[i] for i in range(n)],
        "vectors": vecs,
        "vector_row_of": {ids[i]: row for row, i in enumerate(created)},
    }


def copy_embeddings(
    conn: psycopg.Connection, workspace: int, space_id: int, memory_ids: list[int], vecs: np.ndarray
) -> None:
    """Binary COPY of vectors into brain.embedding (as the superuser: row-level security does not apply)."""
    register_vector(conn)
    with (
        conn.cursor() as cur,
        cur.copy(
            "COPY brain.embedding (workspace_id, space_id, memory_id, embedding)"
            " FROM STDIN WITH (FORMAT BINARY)"
        ) as copy,
    ):
        copy.set_types(["int8", "int8", "int8", "vector"])
        for memory_id, vec in zip(memory_ids, vecs, strict=True):
            copy.write_row((workspace, space_id, memory_id, vec))
