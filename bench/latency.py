"""Latencies measured inside the database, and end to end through the Python client.

In-database timings come from PL/pgSQL wrappers (schema bench_t of the
benchmark's database, created by the benchmark, not part of pybrain) that read
clock_timestamp() before and after one call of brain.remember, brain.search or
brain.recall. Each wrapper is called in its own autocommit statement, as a
client would: the figure excludes the network round trip, parsing of the
outer statement and the commit, and includes everything the function does.
"""

from __future__ import annotations

import dataclasses
import os
import random
import time
from typing import Any

import numpy as np
import psycopg

from bench import hashvec
from bench.corpus import Generator, Memory
from bench.util import log, summary
from pybrain.client import Brain
from pybrain.embed import get_embedder
from pybrain.errors import BrainError

TIMERS = """
CREATE OR REPLACE FUNCTION bench_t.bench_t_remember(
    p_kind text, p_headline text, p_body text, p_category text, p_project text, p_tags text[],
    p_severity text, p_status text, p_priority integer, p_error_message text, p_what_was_wrong text,
    p_what_is_correct text, p_embedding double precision[],
    OUT action text, OUT memory_id bigint, OUT similarity real, OUT error_code text, OUT ms double precision)
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz;
    r brain.write_result;
BEGIN
    t0 := clock_timestamp();
    BEGIN
        r := brain.remember(kind => p_kind, headline => p_headline, body => p_body, category => p_category,
            project => p_project, tags => p_tags, severity => p_severity, status => p_status,
            priority => p_priority, error_message => p_error_message, what_was_wrong => p_what_was_wrong,
            what_is_correct => p_what_is_correct, embedding => p_embedding);
        action := r.action; memory_id := r.memory_id; similarity := r.similarity;
    EXCEPTION WHEN OTHERS THEN
        action := 'refused'; error_code := SQLSTATE;
    END;
    ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
END
$$;

CREATE OR REPLACE FUNCTION bench_t.bench_t_search(
    p_query text, p_embedding double precision[], p_tags text[], p_max_results integer,
    p_min_relevance double precision DEFAULT 0, p_neighbours integer DEFAULT 0, p_kinds text[] DEFAULT NULL,
    OUT ids bigint[], OUT vector_ranks integer[], OUT sims real[], OUT ms double precision,
    OUT relevances real[])
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz;
BEGIN
    t0 := clock_timestamp();
    -- in the order search returned them (its ordinality, not a column)
    SELECT coalesce(array_agg(s.id ORDER BY s.ordinality), '{}'),
           coalesce(array_agg(s.vector_rank ORDER BY s.ordinality), '{}'),
           coalesce(array_agg(s.similarity ORDER BY s.ordinality), '{}'),
           coalesce(array_agg(s.relevance ORDER BY s.ordinality), '{}')
    INTO ids, vector_ranks, sims, relevances
    FROM brain.search(query => p_query, query_embedding => p_embedding, tags => p_tags, kinds => p_kinds,
                      max_results => p_max_results, min_relevance => p_min_relevance,
                      neighbours => p_neighbours)
         WITH ORDINALITY AS s;
    ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
END
$$;

CREATE OR REPLACE FUNCTION bench_t.bench_t_recall(p_id bigint, OUT ok boolean, OUT ms double precision)
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz;
BEGIN
    t0 := clock_timestamp();
    ok := brain.recall(p_id) IS NOT NULL;
    ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
END
$$;
"""


def prepare(conn: psycopg.Connection, workspace: int, *, owner: psycopg.Connection | None = None) -> None:
    """conn's workspace, and the timers (installed by owner, the superuser, when conn is a client
    role, which may not create functions)."""
    conn.execute("SELECT set_config('brain.workspace', %s, false)", (str(workspace),))
    install_timers(owner or conn, TIMERS)


def install_timers(owner: psycopg.Connection, timers: str) -> None:
    """Timing wrappers in schema bench_t of the benchmark's database (not part of pybrain), which
    every role may run: each runs as its caller, under the caller's row-level security."""
    owner.execute("CREATE SCHEMA IF NOT EXISTS bench_t")
    owner.execute(timers)
    owner.execute("GRANT USAGE ON SCHEMA bench_t TO PUBLIC")
    owner.execute("GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA bench_t TO PUBLIC")


def _vec(v: np.ndarray | None) -> list[float] | None:
    return None if v is None else [float(x) for x in v]


def timed_search(
    conn: psycopg.Connection,
    query: str,
    vec: np.ndarray | None,
    *,
    tags: list[str] | None = None,
    max_results: int = 10,
    min_relevance: float = 0.0,
    neighbours: int = 0,
    kinds: list[str] | None = None,
) -> dict[str, Any]:
    """One brain.search, timed in the database. min_relevance 0 (every result the
    ranking gives) unless asked: the latency and recall figures measure the ranking."""
    ids, ranks, sims, ms, relevances = conn.execute(
        "SELECT * FROM bench_t.bench_t_search(%s, %s, %s, %s, %s, %s, %s)",
        (query, _vec(vec), tags, max_results, min_relevance, neighbours, kinds),
    ).fetchone()
    return {"ids": ids, "vector_ranks": ranks, "sims": sims, "ms": ms, "relevances": relevances}


# --- search ----------------------------------------------------------------


def search_latency(
    conn: psycopg.Connection,
    queries: list[str],
    qvecs: np.ndarray,
    *,
    owner: psycopg.Connection | None = None,
    legs: bool = True,
) -> dict[str, Any]:
    """Hybrid (text + embedding), vector only ('' + embedding) and lexical only (text), top 10.
    With legs, the rows each leg matches (counted by owner, the superuser, when given)."""
    for q, v in zip(queries[:20], qvecs[:20], strict=True):  # warm-up, not recorded
        timed_search(conn, q, v)
    out: dict[str, Any] = {}
    for mode in ("hybrid", "vector", "lexical"):
        times, counts = [], []
        for q, v in zip(queries, qvecs, strict=True):
            r = timed_search(conn, "" if mode == "vector" else q, None if mode == "lexical" else v)
            times.append(r["ms"])
            counts.append(len(r["ids"]))
        out[mode] = summary(times) | {"mean_results": round(float(np.mean(counts)), 2)}
    if legs:
        out["leg_sizes"] = leg_sizes(owner or conn, queries[:50])
    return out


def odd_queries(conn: psycopg.Connection, rounds: int = 3) -> dict[str, Any]:
    """Hybrid search (hash vectors) for ODD_QUERIES, as conn's role: each query's best of
    `rounds` calls, then their p50, p95 and worst, and the slowest query."""
    vecs = hashvec.vectors(list(ODD_QUERIES))
    best: dict[str, float] = {}
    for _ in range(rounds):
        for q, v in zip(ODD_QUERIES, vecs, strict=True):
            ms = timed_search(conn, q, v)["ms"]
            best[q] = min(best.get(q, ms), ms)
    slowest = max(best, key=best.__getitem__)
    return summary(list(best.values())) | {
        "max": round(best[slowest], 2),
        "slowest": slowest,
        "queries": len(best),
    }


def search_breakdown(
    conn: psycopg.Connection, connect: Any, queries: list[str], qvecs: np.ndarray, search: dict[str, Any]
) -> dict[str, Any]:
    """Where a search's time goes, from figures of the same queries: the query words' weighing
    (brain.lexical_terms, which every search with text runs first), each leg alone, what fusing
    and weighting adds to both (hybrid minus vector-only minus lexical-only plus the weighing,
    which both runs paid), and the first search of a new session (its statements are
    planned then, and prepared for the session's later calls) against a later one."""
    terms = []
    for q in queries:
        start = time.perf_counter()
        conn.execute("SELECT count(*) FROM brain.lexical_terms(%s)", (q,)).fetchone()
        terms.append((time.perf_counter() - start) * 1000)
    first, later = [], []
    for q, v in list(zip(queries, qvecs, strict=True))[:10]:
        with connect() as fresh:
            fresh.execute("SELECT set_config('brain.workspace', '1', false)")
            for bucket in (first, later):
                start = time.perf_counter()
                fresh.execute(
                    "SELECT count(*) FROM brain.search(%s, %s, min_relevance => 0)", (q, _vec(v))
                ).fetchone()
                bucket.append((time.perf_counter() - start) * 1000)
    p50 = {mode: (search.get(mode) or {}).get("p50") for mode in ("hybrid", "vector", "lexical")}
    words = summary(terms)["p50"]
    fusion = (
        round(p50["hybrid"] - p50["vector"] - p50["lexical"] + words, 2)
        if all(p50.values()) and words is not None
        else None
    )
    return {
        "lexical_terms_ms": summary(terms) | {"note": "a round trip each, from the client"},
        "vector_leg_p50_ms": p50["vector"],
        "lexical_leg_p50_ms_with_terms": p50["lexical"],
        "fusion_and_weighting_ms": fusion,
        "first_search_of_a_session_ms": summary(first) | {"note": "round trip; plans and prepares"},
        "second_search_of_a_session_ms": summary(later) | {"note": "round trip; the prepared plan"},
    }


def leg_sizes(conn: psycopg.Connection, queries: list[str]) -> dict[str, Any]:
    """How many rows the lexical leg (rows matching the search's tsquery) and the trigram leg (queries
    of 3+ characters and at most 5 words, word_similarity >= 0.5 to the headline, when the leg runs)
    match. The trigram leg ranks every match; the lexical leg scores at most lexical_max_rows of them
    (its ranked rows)."""
    (total,) = conn.execute(
        "SELECT count(*) FROM brain.memory"
        " WHERE workspace_id = brain.current_workspace() AND state = 'active'"
    ).fetchone()
    # The tsquery brain.search builds: brain.lexical_query where it exists, else every lexeme.
    (has_lexical_query,) = conn.execute(
        "SELECT to_regprocedure('brain.lexical_query(text)') IS NOT NULL"
    ).fetchone()
    tsquery_fn = "brain.lexical_query" if has_lexical_query else "brain.query_lexemes"
    (cap,) = conn.execute("SELECT (brain.setting('lexical_max_rows'))::integer").fetchone()
    lexical, fuzzy = [], []
    for q in queries:
        (n,) = conn.execute(
            "SELECT count(*) FROM brain.memory m WHERE m.workspace_id = brain.current_workspace()"
            f" AND m.state = 'active' AND m.tsv @@ {tsquery_fn}(%s)",
            (q,),
        ).fetchone()
        lexical.append(n)
        if len(q.strip()) >= 3 and len(q.split()) <= 5:
            with conn.transaction():
                conn.execute("SET LOCAL pg_trgm.word_similarity_threshold = 0.5")
                (n,) = conn.execute(
                    "SELECT count(*) FROM brain.memory m WHERE m.workspace_id = brain.current_workspace()"
                    " AND m.state = 'active' AND %s OPERATOR(public.<%%) m.headline",
                    (q.strip(),),
                ).fetchone()
            fuzzy.append(n)

    def stats(xs: list[int]) -> dict[str, Any]:
        if not xs:
            return {"queries": 0}
        med = float(np.median(xs))
        return {
            "queries": len(xs),
            "median_rows": int(med),
            "p95_rows": int(np.percentile(xs, 95)),
            "median_share": round(med / total, 3) if total else None,
        }

    ranked = stats([min(n, cap) for n in lexical])
    return {
        "active_rows": total,
        "tsquery": tsquery_fn,
        "lexical": stats(lexical)
        | {
            "lexical_max_rows": cap,
            "median_ranked": ranked.get("median_rows"),
            "p95_ranked": ranked.get("p95_rows"),
        },
        "trigram": stats(fuzzy),
    }


def filtered_search(
    conn: psycopg.Connection,
    queries: list[str],
    qvecs: np.ndarray,
    tags: list[str],
    space_id: int,
    workspace: int,
    max_results: int = 10,
    *,
    owner: psycopg.Connection | None = None,
) -> dict[str, Any]:
    """Hybrid search restricted to one component tag (~1% of rows); checks the result count
    (counted by owner, the superuser, when given).

    The vector leg must find every row that passes the filter and is at least
    vector_min_similarity similar to the query, up to its candidate count:
    HNSW alone would return fewer under a selective filter, which is what
    pgvector's iterative scans are for. So a search must return max_results
    rows whenever at least that many such rows exist (the text legs can only
    add rows). That number is counted exactly, without indexes.
    """
    times, full, short_ok = [], 0, 0
    shortfalls = []
    for q, v, tag in zip(queries, qvecs, tags, strict=True):
        r = timed_search(conn, q, v, tags=[tag], max_results=max_results)
        times.append(r["ms"])
        expected = min(max_results, _vector_eligible_rows(owner or conn, v, tag, space_id, workspace))
        if len(r["ids"]) >= expected:
            if expected == max_results:
                full += 1
            else:
                short_ok += 1
        else:
            shortfalls.append({"query": q, "tag": tag, "returned": len(r["ids"]), "expected": expected})
    n = len(queries)
    exist = full + len([s for s in shortfalls if s["expected"] == max_results])
    return summary(times) | {
        "filter": "tags => ARRAY['comp-NN'] (each tag on ~1% of rows)",
        "queries": n,
        "fraction_complete": round((full + short_ok) / n, 3),
        "queries_where_max_results_exist": exist,
        "fraction_full_when_max_results_exist": round(full / exist, 3) if exist else None,
        "shortfalls": shortfalls[:10],
    }


def filter_selectivity(
    conn: psycopg.Connection,
    queries: list[str],
    qvecs: np.ndarray,
    tags: list[str],
    *,
    owner: psycopg.Connection | None = None,
) -> dict[str, Any]:
    """Hybrid search under filters that keep about 0.1%, 1%, 10% and 70% of the rows (a task of one
    component, one component, the rules, the facts): p50 / p95, the rows each filter keeps, and how
    many searches came back with fewer than 10 results."""
    filters = {
        "0.1% (kinds task, one component tag)": lambda tag: {"kinds": ["task"], "tags": [tag]},
        "1% (one component tag)": lambda tag: {"tags": [tag]},
        "10% (kinds rule)": lambda tag: {"kinds": ["rule"]},
        "70% (kinds fact)": lambda tag: {"kinds": ["fact"]},
    }
    out: dict[str, Any] = {}
    for label, make in filters.items():
        times, short = [], 0
        for q, v, tag in zip(queries, qvecs, tags, strict=True):
            r = timed_search(conn, q, v, **make(tag))
            times.append(r["ms"])
            short += len(r["ids"]) < 10
        f = make(tags[0])
        (kept,) = (
            (owner or conn)
            .execute(
                "SELECT count(*) FROM brain.memory WHERE workspace_id = brain.current_workspace()"
                " AND state = 'active' AND (%(kinds)s::text[] IS NULL OR kind = ANY(%(kinds)s))"
                " AND (%(tags)s::text[] IS NULL OR tags @> %(tags)s)",
                {"kinds": f.get("kinds"), "tags": f.get("tags")},
            )
            .fetchone()
        )
        out[label] = summary(times) | {"rows_kept_first_query": kept, "searches_under_10_results": short}
    return out


def _vector_eligible_rows(
    conn: psycopg.Connection, v: np.ndarray, tag: str, space_id: int, workspace: int
) -> int:
    """Rows that pass the filter and that the vector leg may return (similarity >= vector_min_similarity)."""
    with conn.transaction():
        conn.execute("SET LOCAL enable_indexscan = off")
        (n,) = conn.execute(
            """
            SELECT count(*)
            FROM brain.memory m
            JOIN brain.embedding e ON e.workspace_id = m.workspace_id AND e.memory_id = m.memory_id
                                  AND e.space_id = %(space)s
            WHERE m.workspace_id = %(ws)s AND m.state = 'active' AND m.tags @> ARRAY[%(tag)s]
              AND (m.dormant_after IS NULL OR m.dormant_after > now())
              AND (m.expires_at IS NULL OR m.expires_at > now())
              AND 1 - (e.embedding::public.vector(384) OPERATOR(public.<=>) %(vec)s::public.vector(384))
                  >= (brain.setting('vector_min_similarity'))::double precision
            """,
            {"space": space_id, "ws": workspace, "tag": tag, "vec": _vec_text(v)},
        ).fetchone()
    return int(n)


def _vec_text(v: np.ndarray) -> str:
    return "[" + ",".join(repr(float(x)) for x in v) + "]"


# --- vector recall@10 ------------------------------------------------------


def vector_recall(
    conn: psycopg.Connection,
    qvecs: np.ndarray,
    space_id: int,
    workspace: int,
    *,
    tags: list[str] | None = None,
    k: int = 10,
    ef_sweep: tuple[int, ...] = (),
) -> dict[str, Any]:
    """Recall@k of brain.search's vector leg (HNSW) against an exact scan under the same filters.

    The vector leg alone runs when the query text is empty. brain.search ranks
    its fused results by weight, so the leg's own top k are the rows whose
    vector_rank is at most k (max_results 40 returns all of them; it leaves
    the candidate list at its default of 40 rows and ef_search at 100). The
    exact top k comes from a sequential scan (index scans off). Ties at the
    k-th distance count as hits. With ef_sweep, the workspace setting
    hnsw_ef_search is raised to each value in turn (then reset) and the
    recall measured again against the same exact answers.
    """
    exact = [
        _exact_top(conn, v, space_id, workspace, tags[i] if tags else None, k) for i, v in enumerate(qvecs)
    ]
    out = _recall_against(conn, qvecs, exact, tags, k)
    if ef_sweep:
        out["ef_search_sweep"] = {}
        try:
            for ef in ef_sweep:
                conn.execute("SELECT brain.set_setting('hnsw_ef_search', to_jsonb(%s::integer))", (ef,))
                r = _recall_against(conn, qvecs, exact, tags, k)
                out["ef_search_sweep"][str(ef)] = {
                    "mean_recall_at_10": r["mean_recall_at_10"],
                    "search_p50_ms": r["search_ms"]["p50"],
                    "search_p95_ms": r["search_ms"]["p95"],
                }
        finally:
            conn.execute("SELECT brain.reset_setting('hnsw_ef_search')")
    return out


def _recall_against(
    conn: psycopg.Connection,
    qvecs: np.ndarray,
    exact: list[list[tuple[int, float]]],
    tags: list[str] | None,
    k: int,
) -> dict[str, Any]:
    recalls, times = [], []
    for i, v in enumerate(qvecs):
        tag = tags[i] if tags else None
        r = timed_search(conn, "", v, tags=[tag] if tag else None, max_results=40)
        times.append(r["ms"])
        ann = [
            (rid, 1.0 - float(sim))
            for rid, rank, sim in zip(r["ids"], r["vector_ranks"], r["sims"], strict=True)
            if rank is not None and rank <= k
        ]
        if not exact[i]:
            continue
        kth = exact[i][-1][1]
        exact_ids = {rid for rid, _ in exact[i]}
        hits = sum(1 for rid, dist in ann if rid in exact_ids or dist <= kth + 1e-5)
        recalls.append(min(hits, len(exact[i])) / len(exact[i]))
    return {
        "queries": len(recalls),
        "mean_recall_at_10": round(float(np.mean(recalls)), 4) if recalls else None,
        "min_recall_at_10": round(float(np.min(recalls)), 4) if recalls else None,
        "queries_below_0.9": int(sum(1 for x in recalls if x < 0.9)),
        "search_ms": summary(times),
    }


_EXACT = """
    SELECT x.memory_id, x.dist FROM (
        SELECT m.memory_id,
               e.embedding::public.vector(384) OPERATOR(public.<=>) %(vec)s::public.vector(384) AS dist
        FROM {source} e
        JOIN brain.memory m ON m.workspace_id = e.workspace_id AND m.memory_id = e.memory_id
        WHERE m.workspace_id = %(ws)s AND m.state = 'active'
          AND (%(tag)s::text IS NULL OR m.tags @> ARRAY[%(tag)s::text])
          AND (m.dormant_after IS NULL OR m.dormant_after > now())
          AND (m.expires_at IS NULL OR m.expires_at > now())) AS x
    WHERE 1 - x.dist >= (brain.setting('vector_min_similarity'))::double precision
    ORDER BY x.dist, x.memory_id
    LIMIT %(k)s
"""
# The 200 nearest vectors of the space by sequential scan; the filters then apply to those.
_NEAREST_200 = """(
    SELECT e.workspace_id, e.memory_id, e.embedding FROM brain.embedding e
    WHERE e.space_id = %(space)s AND e.workspace_id = %(ws)s
    ORDER BY e.embedding::public.vector(384) OPERATOR(public.<=>) %(vec)s::public.vector(384)
    LIMIT 200)"""
_ALL = "(SELECT * FROM brain.embedding WHERE space_id = %(space)s AND workspace_id = %(ws)s)"


def _exact_top(
    conn: psycopg.Connection, v: np.ndarray, space_id: int, workspace: int, tag: str | None, k: int
) -> list[tuple[int, float]]:
    """The exact top k without the HNSW index (index scans off).

    Unfiltered: the 200 nearest vectors by a sequential scan, then the filters;
    if fewer than k of them pass, the whole space is filtered and sorted.
    """
    args = {"vec": _vec_text(v), "space": space_id, "ws": workspace, "tag": tag, "k": k}
    with conn.transaction():
        conn.execute("SET LOCAL enable_indexscan = off")
        rows = []
        if tag is None:
            rows = conn.execute(_EXACT.format(source=_NEAREST_200), args).fetchall()
        if len(rows) < k:
            rows = conn.execute(_EXACT.format(source=_ALL), args).fetchall()
    return [(int(a), float(b)) for a, b in rows]


# --- recall ------------------------------------------------------------------


def recall_latency(conn: psycopg.Connection, ids: list[int]) -> dict[str, Any]:
    times = [conn.execute("SELECT ms FROM bench_t.bench_t_recall(%s)", (i,)).fetchone()[0] for i in ids]
    return summary(times)


# --- remember ------------------------------------------------------------------


def remember_workload(gen: Generator, corpus: list[Memory], n: int, rnd: random.Random) -> list[Memory]:
    """60% new memories, 40% near-duplicates of stored ones (exact after normalization, or reworded)."""
    out = []
    for _ in range(n):
        out.append(gen.memory() if rnd.random() < 0.6 else gen.near_duplicate(rnd.choice(corpus)))
    return out


def timed_remember(conn: psycopg.Connection, m: Memory, v: np.ndarray) -> tuple[str, str | None, float]:
    """One brain.remember with a precomputed embedding, timed in the database: (action, SQLSTATE of a
    refusal or None, ms)."""
    a = m.remember_args()
    action, _mid, _sim, code, ms = conn.execute(
        "SELECT * FROM bench_t.bench_t_remember(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (
            a["kind"],
            a["headline"],
            a["body"],
            a["category"],
            a["project"],
            a["tags"],
            a.get("severity"),
            a.get("status"),
            a.get("priority"),
            a.get("error_message"),
            a.get("what_was_wrong"),
            a.get("what_is_correct"),
            _vec(v),
        ),
    ).fetchone()
    return action, code, ms


def remember_in_db(conn: psycopg.Connection, items: list[Memory]) -> dict[str, Any]:
    """brain.remember with a precomputed hash embedding, timed inside the database."""
    # The text to embed, as the client gets it: the gate's check_only answer.
    inputs = []
    for m in items:
        args = m.remember_args()
        row = conn.execute(
            "SELECT action, embedding_input FROM brain.remember(kind => %(kind)s, headline => %(headline)s,"
            " body => %(body)s, check_only => true)",
            args,
        ).fetchone()
        inputs.append(row[1])
    vecs = hashvec.vectors(inputs)
    times: list[float] = []
    by_action: dict[str, list[float]] = {}
    for m, v in zip(items, vecs, strict=True):
        action, code, ms = timed_remember(conn, m, v)
        key = f"{action} ({code})" if code else action
        times.append(ms)
        by_action.setdefault(key, []).append(ms)
    return summary(times) | {
        "outcomes": {k: len(v) for k, v in sorted(by_action.items())},
        "p50_by_outcome": {k: summary(v)["p50"] for k, v in sorted(by_action.items())},
    }


def remember_by_scope(conn: psycopg.Connection, gen: Generator, n: int) -> dict[str, Any]:
    """New facts written into the workspace's largest project, its smallest one and a new project
    each (n each, in turns): the duplicate check's cost should not depend on the scope's size."""
    sizes = conn.execute(
        "SELECT project, count(*) FROM brain.memory WHERE workspace_id = brain.current_workspace()"
        " AND kind = 'fact' AND state = 'active' GROUP BY project ORDER BY 2 DESC, 1"
    ).fetchall()
    largest, smallest = sizes[0], sizes[-1]
    groups = {
        f"largest project ({largest[1]:,} facts)": lambda i: largest[0],
        f"smallest project ({smallest[1]:,} facts)": lambda i: smallest[0],
        "a new project each": lambda i: f"bench-new-{i}",
    }
    items = []
    while len(items) < n:
        m = gen.memory()
        if m.kind == "fact":
            items.append(m)
    out: dict[str, Any] = {}
    for label, project in groups.items():
        group = [dataclasses.replace(m, project=project(i)) for i, m in enumerate(items)]
        out[label] = remember_in_db(conn, group)
    return out


def remember_end_to_end(conn: psycopg.Connection, workspace: int, items: list[Memory]) -> dict[str, Any]:
    """Brain.remember through the Python client with the hash embedder: wall time per call."""
    brain = Brain(conn, workspace=workspace, embedder=get_embedder("hash"))
    times, outcomes = [], {}
    for m in items:
        args = m.remember_args()
        kind, headline = args.pop("kind"), args.pop("headline")
        start = time.perf_counter()
        try:
            action = brain.remember(kind, headline, **args).action
        except BrainError as exc:
            action = f"refused ({exc.code})" if getattr(exc, "code", None) else "refused"
        times.append((time.perf_counter() - start) * 1000)
        outcomes[action] = outcomes.get(action, 0) + 1
    return summary(times) | {"outcomes": dict(sorted(outcomes.items()))}


def search_end_to_end(conn: psycopg.Connection, workspace: int, queries: list[str]) -> dict[str, Any]:
    """Brain.search through the Python client with the hash embedder: wall time per call."""
    brain = Brain(conn, workspace=workspace, embedder=get_embedder("hash"))
    times = []
    for q in queries:
        start = time.perf_counter()
        brain.search(q)
        times.append((time.perf_counter() - start) * 1000)
    return summary(times)


def profile_functions(conn: psycopg.Connection, role: str, work: Any) -> list[dict[str, Any]]:
    """Per-function self and total time (track_functions = all) while work(conn) runs as role
    (SET ROLE: only a superuser may set track_functions, and only it reads every statistic)."""
    conn.execute("SELECT pg_stat_reset()")
    conn.execute("SET track_functions = 'all'")
    conn.execute(f"SET ROLE {role}")
    try:
        work(conn)
    finally:
        conn.execute("RESET ROLE")
        conn.execute("SET track_functions = 'none'")
    conn.execute("SELECT pg_stat_force_next_flush()")
    conn.execute("SELECT 1")
    time.sleep(1.1)  # the flush happens when the backend goes idle
    rows = conn.execute(
        "SELECT funcname, calls, total_time, self_time FROM pg_stat_user_functions"
        " ORDER BY total_time DESC LIMIT 15"
    ).fetchall()
    return [
        {"function": f, "calls": c, "total_ms": round(t, 1), "self_ms": round(s, 1)} for f, c, t, s in rows
    ]


def log_summary(label: str, s: dict[str, Any]) -> None:
    log(f"  {label}: p50 {s.get('p50')} ms, p95 {s.get('p95')} ms (n={s.get('n')})")


# --- the raw PostgreSQL floor ---------------------------------------------------

RAW_TIMER = """
CREATE OR REPLACE FUNCTION pg_temp.bench_t_raw(p_sql text, p_vec public.vector, p_tsq tsquery,
                                               OUT n integer, OUT ms double precision)
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz;
BEGIN
    t0 := clock_timestamp();
    EXECUTE 'SELECT count(*) FROM (' || p_sql || ') AS x' INTO n USING p_vec, p_tsq;
    ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
END
$$;

CREATE OR REPLACE FUNCTION pg_temp.bench_t_raw_insert(p_kind text, p_headline text, p_body text,
                                                      p_project text, p_space bigint, p_vec public.vector,
                                                      OUT ms double precision)
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz;
    id bigint;
BEGIN
    t0 := clock_timestamp();
    INSERT INTO brain.memory (workspace_id, kind, project, headline, body, normalized)
    VALUES (1, p_kind, p_project, p_headline, p_body, lower(p_headline || ' ' || p_body))
    RETURNING memory_id INTO id;
    INSERT INTO brain.embedding (workspace_id, space_id, memory_id, embedding) VALUES (1, p_space, id, p_vec);
    ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
END
$$;

-- The raw work a write needs (issue 42): the nearest neighbour of its vector
-- through the space's HNSW index, then the row and its vector inserted.
CREATE OR REPLACE FUNCTION pg_temp.bench_t_raw_write(p_kind text, p_headline text, p_body text,
                                                     p_project text, p_space bigint, p_vec public.vector,
                                                     p_probe text, OUT ms double precision)
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz;
    id bigint;
    nearest bigint;
BEGIN
    t0 := clock_timestamp();
    -- the raw HNSW top-10's statement with LIMIT 1 (the space's index, its conditions as literals)
    EXECUTE p_probe INTO nearest USING p_vec;
    INSERT INTO brain.memory (workspace_id, kind, project, headline, body, normalized)
    VALUES (1, p_kind, p_project, p_headline, p_body, lower(p_headline || ' ' || p_body))
    RETURNING memory_id INTO id;
    INSERT INTO brain.embedding (workspace_id, space_id, memory_id, embedding) VALUES (1, p_space, id, p_vec);
    ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
END
$$;
"""

# The work under each pybrain figure, as plain SQL on the same tables and indexes:
# the space's HNSW index (top 10 at pybrain's hnsw_ef_search), the ranked
# full-text match of the words brain.lexical_query picks for the query (top 10),
# and an INSERT of a memory row and its vector (the HNSW insert included).
RAW_HNSW = """
    SELECT e.memory_id FROM brain.embedding e
    WHERE e.space_id = {space} AND e.ingest_seq <= {through}
    ORDER BY e.embedding::public.vector({dims}) OPERATOR(public.<=>) $1::public.vector({dims})
    LIMIT 10"""
RAW_FTS = """
    SELECT m.memory_id FROM brain.memory m
    WHERE m.tsv @@ $2 AND m.workspace_id = 1 AND m.state = 'active'
    ORDER BY ts_rank_cd(m.tsv, $2) DESC LIMIT 10"""
# The candidate work of a hybrid search and nothing more, one plain statement:
# both legs at search's depth (search_candidates each, the HNSW walk at
# that ef_search), fused by reciprocal rank, the ten rows fetched. No word
# weighing, relevance verdict, rank weights, previews or conflict marks: how
# far pybrain's search can get from the floor before it does any of its own work.
RAW_LEAST_HYBRID = """
    WITH vec AS (
        SELECT x.memory_id, row_number() OVER () AS r FROM (
            SELECT e.memory_id FROM brain.embedding e
            WHERE e.space_id = {space} AND e.ingest_seq <= {through}
            ORDER BY e.embedding::public.vector({dims}) OPERATOR(public.<=>) $1::public.vector({dims})
            LIMIT {candidates}) AS x),
    lex AS (
        SELECT y.memory_id, row_number() OVER () AS r FROM (
            SELECT m.memory_id FROM brain.memory m
            WHERE m.tsv @@ $2 AND m.workspace_id = 1 AND m.state = 'active'
            ORDER BY ts_rank_cd(m.tsv, $2) DESC LIMIT {candidates}) AS y),
    fused AS (
        SELECT coalesce(v.memory_id, l.memory_id) AS memory_id,
               coalesce(1.0 / (60 + v.r), 0) + coalesce(1.0 / (60 + l.r), 0) AS rrf
        FROM vec v FULL JOIN lex l ON l.memory_id = v.memory_id
        ORDER BY 2 DESC LIMIT 10)
    SELECT m.memory_id, m.headline, m.body FROM fused f
    JOIN brain.memory m ON m.workspace_id = 1 AND m.memory_id = f.memory_id"""
# Queries people type that are not questions: fragments and typos of common
# words, stop words alone, punctuation, one common word, an identifier. Timed
# as the client, hybrid; their p95 and worst are the tail a user meets.
ODD_QUERIES = (
    "ser",
    "pay",
    "paymnts servce",
    "ledgr sync",
    "the and of",
    "what is it",
    "how do I",
    "???",
    "-- / --",
    "timeout",
    "error",
    "deploy",
    "latency",
    "fix it",
    "payments-service",
    "w17",
    "ledger-sync timeout",
    "why",
    "x" * 40,
    "a",
)
RAW_FILTERED_HNSW = """
    SELECT e.memory_id FROM brain.embedding e
    JOIN brain.memory m ON m.workspace_id = e.workspace_id AND m.memory_id = e.memory_id
    WHERE e.space_id = {space} AND e.ingest_seq <= {through} AND m.tags @> ARRAY['{tag}']
    ORDER BY e.embedding::public.vector({dims}) OPERATOR(public.<=>) $1::public.vector({dims})
    LIMIT 10"""

# The same filter's rows ranked exactly: every vector the filter keeps, its
# distance on the stored column (which no HNSW index holds), the best 10.
RAW_FILTERED_EXACT = """
    SELECT e.memory_id FROM brain.memory m
    JOIN brain.embedding e ON e.workspace_id = m.workspace_id AND e.memory_id = m.memory_id
    WHERE e.space_id = {space} AND m.tags @> ARRAY['{tag}']
    ORDER BY e.embedding OPERATOR(public.<=>) $1::public.vector({dims})
    LIMIT 10"""


def raw_floor(
    conn: psycopg.Connection,
    queries: list[str],
    qvecs: np.ndarray,
    tags: list[str],
    space_id: int,
    inserts: list[Memory],
) -> dict[str, Any]:
    """The raw PostgreSQL work beside pybrain's, timed the same way (inside the database)."""
    conn.execute(RAW_TIMER)
    through, dims = conn.execute(
        "SELECT indexed_through, dims FROM brain.embedding_space WHERE space_id = %s", (space_id,)
    ).fetchone()
    hnsw = RAW_HNSW.format(space=space_id, through=through, dims=dims)
    ef = conn.execute("SELECT (brain.setting('hnsw_ef_search'))::integer").fetchone()[0]
    out: dict[str, Any] = {}

    def vector_ms(sql: str, v: np.ndarray) -> float:
        (ms,) = conn.execute(
            "SELECT ms FROM pg_temp.bench_t_raw(%s, %s, NULL)", (sql, _vec_text(v))
        ).fetchone()
        return ms

    with conn.transaction():
        conn.execute(f"SET LOCAL hnsw.ef_search = {max(int(ef), 40)}")
        conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        for v in qvecs[:10]:  # warm-up
            vector_ms(hnsw, v)
        out["hnsw_top10"] = summary([vector_ms(hnsw, v) for v in qvecs])
    candidates = conn.execute("SELECT (brain.setting('search_candidates'))::integer").fetchone()[0]
    with conn.transaction():
        # search's own depth: search_candidates rows, ef_search at least that many
        conn.execute(f"SET LOCAL hnsw.ef_search = {max(int(ef), int(candidates))}")
        conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        deep = hnsw.replace("LIMIT 10", f"LIMIT {int(candidates)}")
        out["hnsw_top_candidates"] = summary([vector_ms(deep, v) for v in qvecs]) | {"rows": candidates}
        least = RAW_LEAST_HYBRID.format(
            space=space_id, through=through, dims=dims, candidates=int(candidates)
        )
        times = []
        for q, v in zip(queries, qvecs, strict=True):
            (tsq,) = conn.execute("SELECT brain.lexical_query(%s)::text", (q,)).fetchone()
            times.append(
                conn.execute(
                    "SELECT ms FROM pg_temp.bench_t_raw(%s, %s, %s)", (least, _vec_text(v), tsq)
                ).fetchone()[0]
            )
        out["least_hybrid"] = summary(times) | {
            "what": "both legs at search's depth, fused by reciprocal rank, 10 rows fetched; one statement"
        }
    with conn.transaction():
        conn.execute(f"SET LOCAL hnsw.ef_search = {max(int(ef), 40)}")
        conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        for key, template, what in (
            ("filtered_hnsw_top10", RAW_FILTERED_HNSW, "one comp-NN tag (~1% of rows)"),
            ("filtered_exact_top10", RAW_FILTERED_EXACT, "the same tags, every kept row ranked"),
        ):
            times = [
                vector_ms(template.format(space=space_id, through=through, dims=dims, tag=tag), v)
                for v, tag in zip(qvecs, tags, strict=False)
            ]
            out[key] = summary(times) | {"filter": what}
    times, deep_times = [], []
    deep_fts = RAW_FTS.replace("LIMIT 10", f"LIMIT {int(candidates)}")
    for q in queries:
        (tsq,) = conn.execute("SELECT brain.lexical_query(%s)::text", (q,)).fetchone()
        if tsq is None:
            continue
        times.append(
            conn.execute("SELECT ms FROM pg_temp.bench_t_raw(%s, NULL, %s)", (RAW_FTS, tsq)).fetchone()[0]
        )
        deep_times.append(
            conn.execute("SELECT ms FROM pg_temp.bench_t_raw(%s, NULL, %s)", (deep_fts, tsq)).fetchone()[0]
        )
    out["fts_top10"] = summary(times) | {"words": "brain.lexical_query's words for each query"}
    out["fts_top_candidates"] = summary(deep_times) | {"rows": candidates}
    vecs = hashvec.vectors([m.embedding_input() for m in inserts])
    probe = hnsw.replace("LIMIT 10", "LIMIT 1")
    times = []
    for m, v in zip(inserts, vecs, strict=True):
        times.append(
            conn.execute(
                "SELECT ms FROM pg_temp.bench_t_raw_insert(%s, %s, %s, %s, %s, %s)",
                (m.kind, m.headline + " (raw)", m.body, m.project, space_id, _vec_text(v)),
            ).fetchone()[0]
        )
    out["insert"] = summary(times) | {"what": "INSERT of a memory row and its vector (HNSW insert included)"}
    times = []
    for m, v in zip(inserts, vecs, strict=True):
        times.append(
            conn.execute(
                "SELECT ms FROM pg_temp.bench_t_raw_write(%s, %s, %s, %s, %s, %s, %s)",
                (m.kind, m.headline + " (raw write)", m.body, m.project, space_id, _vec_text(v), probe),
            ).fetchone()[0]
        )
    out["write"] = summary(times) | {
        "what": "the nearest neighbour by the HNSW index, then INSERT of the row and its vector"
    }
    return out


def floor_ratios(ws: dict[str, Any]) -> dict[str, Any]:
    """pybrain's p50 over the raw floor's p50, per figure."""
    raw = ws.get("raw_floor") or {}

    def p50(d: Any) -> float | None:
        return d.get("p50") if isinstance(d, dict) else None

    pairs = {
        "vector search / raw HNSW top-10": (
            p50(ws.get("search", {}).get("vector")),
            p50(raw.get("hnsw_top10")),
        ),
        "lexical search / raw full-text top-10": (
            p50(ws.get("search", {}).get("lexical")),
            p50(raw.get("fts_top10")),
        ),
        "hybrid search / (raw HNSW + raw full-text)": (
            p50(ws.get("search", {}).get("hybrid")),
            (p50(raw.get("hnsw_top10")) or 0) + (p50(raw.get("fts_top10")) or 0) or None,
        ),
        "filtered search / raw filtered HNSW": (
            p50(ws.get("search_filtered")),
            p50(raw.get("filtered_hnsw_top10")),
        ),
        "remember, created / raw INSERT": (
            (ws.get("remember") or {}).get("p50_by_outcome", {}).get("created"),
            p50(raw.get("insert")),
        ),
        "remember, created / raw write (NN + INSERT)": (
            (ws.get("remember") or {}).get("p50_by_outcome", {}).get("created"),
            p50(raw.get("write")),
        ),
    }
    return {
        k: {"pybrain_p50": a, "raw_p50": b, "ratio": round(a / b, 2) if a and b else None}
        for k, (a, b) in pairs.items()
    }


def floor_context(ws: dict[str, Any]) -> dict[str, Any]:
    """Not targets: how far the least statement doing search's candidate work (raw_floor's
    least_hybrid) is from the floor, and pybrain's hybrid search from it."""
    raw = ws.get("raw_floor") or {}
    floor = ((raw.get("hnsw_top10") or {}).get("p50") or 0) + ((raw.get("fts_top10") or {}).get("p50") or 0)
    least = (raw.get("least_hybrid") or {}).get("p50")
    hybrid = ((ws.get("search") or {}).get("hybrid") or {}).get("p50")
    return {
        "least hybrid / (raw HNSW + raw full-text)": round(least / floor, 2) if least and floor else None,
        "hybrid search / least hybrid": round(hybrid / least, 2) if hybrid and least else None,
    }


# --- remember throughput with concurrent clients ----------------------------------


def remember_throughput(
    url: str, gen: Generator, clients: tuple[int, ...] = (1, 2, 4, 8), seconds: float = 8.0
) -> dict[str, Any]:
    """brain.remember with precomputed hash embeddings from 1, 2, 4 and 8 connections at once, each
    writing new memories of the generator's kinds and projects for `seconds`: writes per second."""
    out: dict[str, Any] = {"cores": os.cpu_count(), "seconds_per_run": seconds, "runs": {}}
    for n in clients:
        pool = gen.memories(int(600 * seconds * n) + 200)
        vecs = hashvec.vectors([m.embedding_input() for m in pool])
        out["runs"][str(n)] = _throughput_run(url, pool, vecs, n, seconds)
    one = out["runs"][str(clients[0])]["writes_per_s"]
    for run in out["runs"].values():
        run["speedup"] = round(run["writes_per_s"] / one, 2) if one else None
    cores = os.cpu_count() or 1
    at_cores = out["runs"].get(str(cores))
    out["speedup_at_cores"] = at_cores["speedup"] if at_cores else None
    out["target_speedup_at_cores"] = round(0.8 * cores, 2)
    return out


def _throughput_run(url: str, pool: list[Memory], vecs: np.ndarray, n: int, seconds: float) -> dict[str, Any]:
    import threading

    lock = threading.Lock()
    cursor = [0]
    counts: list[int] = [0] * n
    outcomes: dict[str, int] = {}
    barrier = threading.Barrier(n + 1)
    stop = [0.0]

    def client(k: int) -> None:
        with psycopg.connect(url, autocommit=True) as c:
            c.execute("SELECT set_config('brain.workspace', '1', false)")
            barrier.wait()
            while time.perf_counter() < stop[0]:
                with lock:
                    i = cursor[0]
                    cursor[0] += 1
                if i >= len(pool):
                    return
                a = {"severity": None, "status": None, "priority": None, **pool[i].remember_args()}
                a["embedding"] = _vec(vecs[i])
                try:
                    (action,) = c.execute(
                        "SELECT action FROM brain.remember(kind => %(kind)s, headline => %(headline)s,"
                        " body => %(body)s, category => %(category)s, project => %(project)s,"
                        " tags => %(tags)s, severity => %(severity)s, status => %(status)s,"
                        " priority => %(priority)s, embedding => %(embedding)s)",
                        a,
                    ).fetchone()
                except psycopg.Error as exc:
                    action = f"refused ({exc.sqlstate})"
                counts[k] += 1
                with lock:
                    outcomes[action] = outcomes.get(action, 0) + 1

    threads = [threading.Thread(target=client, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    stop[0] = time.perf_counter() + seconds  # the clocks start once every client is connected
    start = time.perf_counter()
    barrier.wait()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    return {
        "clients": n,
        "writes": sum(counts),
        "writes_per_s": round(sum(counts) / elapsed, 1),
        "outcomes": dict(sorted(outcomes.items())),
    }
