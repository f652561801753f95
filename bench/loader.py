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


def register_space(
    conn: psycopg.Connection, provider: str, model: str, dims: int, *, statements: bool = False
) -> int:
    """The space's id. statements: then, on the owner's autocommit connection, the function
    files applied again when the space is new, as `brain init` does (the space's own
    statements: the boot's PATTERN rules, planned once a session)."""
    row = conn.execute(
        "SELECT space_id FROM brain.use_embedding_space(provider => %s, model => %s, dims => %s)",
        (provider, model, dims),
    ).fetchone()
    if statements:
        from pybrain import db

        if db.spaces_without_statements(conn):
            db.migrate(conn)
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
    out = {
        "rows": n,
        "created": len(created),
        "actions": actions,
        "remember_seconds": round(t_rows[0], 1),
        "remember_rows_per_s": round(n / t_rows[0]),
    }
    out |= index_vectors(url, workspace, space_id, [ids[i] for i in created], vecs)
    return out | {
        "ids": [ids[i] for i in range(n)],
        "vectors": vecs,
        "vector_row_of": {ids[i]: row for row, i in enumerate(created)},
    }


def index_vectors(
    url: str, workspace: int, space_id: int, memory_ids: list[int], vecs: np.ndarray
) -> dict[str, Any]:
    """COPY the vectors with the space's HNSW index dropped, rebuild it, clear the flags, VACUUM ANALYZE.

    A resumed load copies only the vectors not stored yet, and keeps a built index when none were missing.
    """
    with psycopg.connect(url, autocommit=True) as conn:
        index = f"embedding_hnsw_{space_id}"
        (indexdef,) = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE schemaname = 'brain' AND indexname = %s", (index,)
        ).fetchone()
        stored = {
            r[0]
            for r in conn.execute(
                "SELECT memory_id FROM brain.embedding WHERE workspace_id = %s AND space_id = %s",
                (workspace, space_id),
            )
        }
        missing = [row for row, memory_id in enumerate(memory_ids) if memory_id not in stored]
        t_copy = t_index = [0.0]
        if missing:
            conn.execute(f"DROP INDEX brain.{index}")
            with timed() as t_copy:
                copy_embeddings(conn, workspace, space_id, [memory_ids[r] for r in missing], vecs[missing])
            log(f"  copied {len(missing):,} embeddings in {t_copy[0]:.1f}s; building the HNSW index")
            with timed() as t_index:
                # The graph is built in memory when it fits (1M x 384 dims needs ~2 GB).
                conn.execute("SET maintenance_work_mem = '4GB'")
                conn.execute(indexdef)
        else:
            log(f"  all {len(memory_ids):,} embeddings and the HNSW index are stored already")
        with timed() as t_flag:
            conn.execute(
                "UPDATE brain.memory SET dedup_pending = false WHERE workspace_id = %s AND dedup_pending",
                (workspace,),
            )
        with timed() as t_vacuum:
            conn.execute("VACUUM ANALYZE brain.memory")
            conn.execute("VACUUM ANALYZE brain.embedding")
            for table in ("fact", "rule", "task", "incident", "audit"):
                conn.execute(f"VACUUM ANALYZE brain.{table}")
            conn.execute("ANALYZE")
    log(f"  HNSW index built in {t_index[0]:.1f}s; flags {t_flag[0]:.1f}s; vacuum {t_vacuum[0]:.1f}s")
    return {
        "embedding_copy_seconds": round(t_copy[0], 1),
        "hnsw_build_seconds": round(t_index[0], 1),
        "vacuum_seconds": round(t_vacuum[0] + t_flag[0], 1),
    }


# Set-based load for the largest workspaces: each chunk of staged memories
# goes through the write core, brain._store_memories, in one call (the memory
# rows with the columns every write fills: normalized text, #tags, @people,
# topics, action items, dormancy, injection flags; their kind rows from the
# drafts' details), instead of one brain.remember per memory. What it leaves
# out: the gate (the generated texts pass it), the audit rows and the semantic
# dedup (the texts are distinct; exact duplicates are skipped by the core's
# unique index).
BULK_STAGE = """
CREATE TEMP TABLE bench_stage (
    i bigint, kind text, headline text, body text, category text, project text, tags text[],
    severity text, status text, priority integer, error_message text, what_was_wrong text,
    what_is_correct text)
"""

BULK_STORE = """
SELECT brain._store_memories(
    ARRAY(SELECT jsonb_populate_record(NULL::brain.memory, jsonb_build_object(
                     'kind', s.kind, 'category', coalesce(s.category, 'note'), 'origin', 'explicit',
                     'project', s.project, 'headline', s.headline, 'body', s.body,
                     'tags', ARRAY(SELECT DISTINCT lower(brain.trim_space(t))
                                   FROM unnest(coalesce(s.tags, '{}')
                                               || brain.extract_tags(s.headline || E'\\n' || s.body)) AS t
                                   WHERE brain.trim_space(t) <> ''),
                     'dormant_after', CASE WHEN s.kind = 'fact' THEN brain._dormant_after(now(),
                                          (brain.setting('fact_halflife_days'))::double precision) END,
                     'flag_reasons', brain.injection_signals(concat_ws(E'\\n', s.headline, s.body))))
          FROM bench_stage s WHERE s.i >= %(lo)s AND s.i < %(hi)s ORDER BY s.i),
    details => ARRAY(SELECT brain._draft_details(brain._draft(s.kind, s.headline), s.severity, NULL, s.status,
                                                 s.priority, NULL, s.what_was_wrong, s.what_is_correct,
                                                 s.error_message, NULL, NULL, NULL)
                     FROM bench_stage s WHERE s.i >= %(lo)s AND s.i < %(hi)s ORDER BY s.i))
"""

# The memory each staged memory is (after a resumed load): the active one of its kind,
# project and text.
BULK_FOUND = """
SELECT s.i, m.memory_id
FROM bench_stage s
JOIN brain.memory m ON m.workspace_id = %(ws)s AND m.kind = s.kind AND m.project = s.project
                   AND m.state = 'active'
                   AND m.normalized_hash = md5(brain.normalize_text(s.headline, s.body))::uuid
WHERE s.i >= %(lo)s AND s.i < %(hi)s
ORDER BY s.i
"""


def load_bulk(
    url: str,
    memories: list[Memory],
    *,
    workspace: int = 1,
    space_id: int,
    chunk: int = 50_000,
    embed: Callable[[list[str]], np.ndarray] | None = None,
    resume: bool = False,
) -> dict[str, Any]:
    """Stores memories set-based (see BULK_STORE); returns what load() returns. resume: the
    workspace holds the first chunks of an interrupted load of the same memories."""
    n = len(memories)
    fields = (
        "kind",
        "headline",
        "body",
        "category",
        "project",
        "tags",
        "severity",
        "status",
        "priority",
        "error_message",
        "what_was_wrong",
        "what_is_correct",
    )
    with psycopg.connect(url, autocommit=True) as conn, timed() as t_rows:
        set_workspace(conn, workspace)
        conn.execute(BULK_STAGE)
        with conn.cursor() as cur, cur.copy(f"COPY bench_stage (i, {', '.join(fields)}) FROM STDIN") as copy:
            for i, m in enumerate(memories):
                copy.write_row((i, *(getattr(m, f) for f in fields)))
        ids: list[int | None] = [None] * n
        for lo in range(0, n, chunk):
            hi = min(lo + chunk, n)
            if resume:
                # A chunk is one statement: an interrupted load stored whole chunks. One whose
                # memories are all there is taken as stored (the first of each text created).
                found = conn.execute(BULK_FOUND, {"ws": workspace, "lo": lo, "hi": hi}).fetchall()
                if len(found) == hi - lo:
                    seen: set[int] = set()
                    for i, memory_id in found:
                        ids[i] = None if memory_id in seen else memory_id
                        seen.add(memory_id)
                    log(f"  resuming: memories {lo:,} to {hi - 1:,} are stored")
                    continue
            (stored,) = conn.execute(BULK_STORE, {"lo": lo, "hi": hi}).fetchone()
            ids[lo:hi] = stored  # NULL where the text repeats an active memory: skipped
            log(f"  stored {hi:,}/{n:,} (set-based, through brain._store_memories)")
        created_ids = [i for i in ids if i is not None]
        rows = conn.execute(
            "SELECT m.memory_id, brain.embedding_input(m.headline, m.body) FROM brain.memory m"
            " WHERE m.workspace_id = %s AND m.memory_id = ANY(%s)",
            (workspace, created_ids),
        ).fetchall()
    input_of = dict(rows)
    inputs = [input_of[i] for i in ids if i is not None]
    with timed() as t_vec:
        vecs = (embed or hashvec.vectors)(inputs)
    created = [i for i in range(n) if ids[i] is not None]
    log(f"  {len(created):,} stored set-based in {t_rows[0]:.1f}s; vectors in {t_vec[0]:.1f}s")
    out = {
        "rows": n,
        "created": len(created),
        "actions": {"created": len(created), "skipped": n - len(created)},
        "path": "set-based, chunks through brain._store_memories (bench.loader.load_bulk)",
        "remember_seconds": round(t_rows[0], 1),
        "remember_rows_per_s": round(n / t_rows[0]),
    }
    out |= index_vectors(url, workspace, space_id, [ids[i] for i in created], vecs)
    return out | {
        "ids": ids,
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
