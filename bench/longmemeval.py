"""Retrieval quality on LongMemEval-S (61-question dev subset), with pybrain's local embedder.

Protocol (see ../shared/bench-data/README.md): for each question that is not
an abstention, a fresh workspace holds that question's haystack, one memory
per chat turn, stored with brain.observe_batch (origin observed; the turn's
text is "role: content"; session id, role, turn number and date go in
metadata; each session is a thread, the turn number its position, so
observe_batch indexes each turn with its context: speaker, date and the
start of the turns before and after it). Turns longer than 300 words are split by observe_batch into chunks
that share a source_ref; each chunk is its own memory, and a chunk found
counts as its turn found. brain.search then runs with the question text in
three modes: vector only (empty text + question embedding), lexical only
(text, no embedding) and hybrid (both), max_results 10 and min_relevance 0
(the ranking's first ten, whatever their relevance). Two more hybrid searches
show what the options change: with the default relevance floor
(`hybrid_floor`: the share of evidence that survives it, and how many results
are left), and with neighbours => 1 (`hybrid_neighbours`: each hit brings
the turns beside it, within the same ten results). Hits map to turns
and sessions through what observe_batch returned (a turn folded into an
existing memory by exact or near-identical dedup maps to that memory, and so
does one that brain.index_vectors folds after the batches).

Then the clock moves (clock_shift): with the store as built, brain.maintain
runs at +0, +30, +90 and +365 days, in that order, and after each run the
same three searches run with brain.search's `now` at that time; once more at
+365 days with the workspace setting episodic_decay on (records decay and go
dormant like beliefs). Recall@10 (session any@10 and turn@10) at +30, +90 and
+365 days must stay within one point of +0, the fresh store.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from psycopg.types.json import Jsonb

from bench import embcache, latency, loader, offtopic
from bench.corpus import Memory
from bench.embcache import EmbeddingCache
from bench.server import BenchServer
from bench.util import log, summary, timed
from pybrain.db import Float8Matrix

DATA_DIR = Path(__file__).resolve().parent.parent.parent / "shared" / "bench-data"
# The question sets: dev60 to choose on (the figures the bench reports), train150 to fit on.
DATA_SETS = {
    "dev60": DATA_DIR / "longmemeval_s_dev60.json.gz",
    "train150": DATA_DIR / "longmemeval_s_train150.json.gz",
}
DATA = DATA_SETS["dev60"]
DB = "bench_lme"
BATCH = 100  # turns per observe_batch call
MODES = ("vector", "lexical", "hybrid")
# Hybrid searches with an option, scored like the modes (fresh store only):
# name -> (min_relevance (None: the default), neighbours)
OPTION_MODES = {"hybrid_floor": (None, 0), "hybrid_neighbours": (0.0, 1)}
# The figures main gave before issue 15 (same protocol, per question count):
# `make bench` prints them beside the new ones.
BASELINE = Path(__file__).resolve().parent / "baselines" / "longmemeval.json"
# Days the clock moves on after a question's store is built; the first is the fresh store.
SHIFTS = (0, 30, 90, 365)
# The figures the clock-shift check compares with the fresh store, and by how much they may move.
CLOCK_METRICS = ("session_any@10", "turn@10")
CLOCK_TOLERANCE = 0.01  # one point of recall
TYPES = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "multi-session",
    "temporal-reasoning",
    "knowledge-update",
)


def load_questions(n: int | None, data: Path = DATA) -> list[dict[str, Any]]:
    with gzip.open(data, "rt", encoding="utf-8") as f:
        data = [q for q in json.load(f) if not q["question_id"].endswith("_abs")]
    if n is None or n >= len(data):
        return data
    # A stratified subset: round-robin over question types, in file order.
    by_type: dict[str, list] = defaultdict(list)
    for q in data:
        by_type[q["question_type"]].append(q)
    out: list[dict[str, Any]] = []
    while len(out) < n:
        for t in sorted(by_type):
            if by_type[t] and len(out) < n:
                out.append(by_type[t].pop(0))
    return out


def _turns(q: dict[str, Any]) -> list[dict[str, Any]]:
    turns = []
    for sid, date, session in zip(
        q["haystack_session_ids"], q["haystack_dates"], q["haystack_sessions"], strict=True
    ):
        for i, t in enumerate(session):
            turns.append(
                {
                    "text": f"{t['role']}: {t['content']}",
                    "meta": {"session": sid, "role": t["role"], "turn": i, "date": date},
                    "thread": sid,
                    "position": i,
                    "key": (sid, i),
                    "has_answer": bool(t.get("has_answer")),
                }
            )
    return turns


def _check(conn: psycopg.Connection, batch: list[dict[str, Any]]) -> list[tuple]:
    return conn.execute(
        "SELECT item, chunk, action, embedding_input, error_code FROM brain.observe_batch("
        "texts => %s, metadata => %s, check_only => true)",
        ([t["text"] for t in batch], [Jsonb(t["meta"]) for t in batch]),
    ).fetchall()


def run(
    server: BenchServer,
    cache: EmbeddingCache,
    n_questions: int | None,
    settings: dict[str, Any] | None = None,
    data: str = "dev60",
) -> dict[str, Any]:
    """settings: workspace settings (brain.set_setting) each question's workspace gets;
    data: the question set (DATA_SETS: dev60 to choose on, train150 to fit on)."""
    questions = load_questions(n_questions, DATA_SETS[data])
    log(
        f"== LongMemEval-S {data}: {len(questions)} questions (abstention questions left out), local embedder"
    )
    server.create_database(DB)
    result: dict[str, Any] = {
        "data": data,
        "questions": len(questions),
        "embedder": f"{embcache.SPACE} (384 dims)",
        "granularity": "one memory per turn (turns over 300 words: one per chunk)",
        "settings": settings or {},
    }
    with server.connect(DB) as conn:
        # 1. What observe_batch will store and embed, per batch (check_only: the gate and chunking only).
        plan = []
        with timed() as t_check:
            for q in questions:
                turns = _turns(q)
                batches = []
                for start in range(0, len(turns), BATCH):
                    batch = turns[start : start + BATCH]
                    batches.append((batch, _check(conn, batch)))
                plan.append((q, turns, batches))
        inputs = [r[3] for _, _, batches in plan for _, rows in batches for r in rows if r[2] == "valid"]
        n_turns = sum(len(t) for _, t, _ in plan)
        log(f"  {n_turns:,} turns -> {len(inputs):,} chunks to embed (gate + chunking in {t_check[0]:.1f}s)")
        result["turns"] = n_turns
        result["chunks"] = len(inputs)
        result["rejected_by_gate"] = sum(
            1 for _, _, b in plan for _, rows in b for r in rows if r[2] == "rejected"
        )

        # 2. Embeddings (cached across runs).
        with timed() as t_embed:
            cache.ensure(
                inputs + [q["question"] for q in questions] + offtopic.QUERIES,
                "LongMemEval chunks, questions and off-topic queries",
            )
        result["embedding"] = {
            "embedded_this_run": cache.embedded_now,
            "seconds": round(t_embed[0], 1),
            "texts_per_s": round(cache.embedded_now / cache.embed_seconds, 1)
            if cache.embed_seconds
            else None,
        }

        # 3. One workspace per question: store, then search.
        per_question = []
        ingest_rows = 0
        ingest_seconds = 0.0
        per_question_ingest: list[float] = []
        analyze_seconds = 0.0
        search_ms: dict[str, list[float]] = {m: [] for m in MODES}
        search_ms_first: dict[str, list[float]] = {m: [] for m in MODES}
        clock_seconds = 0.0
        # The off-topic queries (bench/offtopic.py), spread over the stores: each
        # runs at least once, each store runs at least 4.
        off_vecs = cache.get(offtopic.QUERIES)
        off_per = max(4, -(-len(offtopic.QUERIES) // len(plan)))
        off: dict[str, Any] = {
            "queries": 0,
            "empty": 0,
            "best_relevance": [],
            "never_stored": 0,
            "never_stored_empty": 0,
        }
        for n, (q, turns, batches) in enumerate(plan, 1):
            with timed() as t_ingest:
                _, turns_of, analyzed = store_question(conn, cache, q, batches, settings)
            ingest_rows += sum(1 for _, rows in batches for r in rows if r[2] == "valid")
            analyze_seconds += analyzed
            ingest_seconds += t_ingest[0]
            per_question_ingest.append(round(t_ingest[0], 2))

            qvec = cache.get([q["question"]])[0]
            evidence_sessions = set(q["answer_session_ids"])
            evidence_turns = {t["key"] for t in turns if t["has_answer"]}
            scores: dict[str, dict[str, float]] = {}
            for mode in MODES:
                # The first search of a mode in a new workspace plans its statement
                # (brain.search prepares each shape once per session): timed apart.
                first, r = (
                    latency.timed_search(
                        conn,
                        "" if mode == "vector" else q["question"],
                        None if mode == "lexical" else qvec,
                        max_results=10,
                    )
                    for _ in range(2)
                )
                search_ms_first[mode].append(first["ms"])
                search_ms[mode].append(r["ms"])
                scores[mode] = _score(r["ids"], turns_of, evidence_sessions, evidence_turns)
                if mode == "hybrid":
                    # what a floor on the best hit would have to stay under (docs/ranking.md)
                    best_relevance = max((x or 0 for x in r["relevances"] or []), default=0.0)
            for mode, (floor, neighbours) in OPTION_MODES.items():
                r = (
                    latency.timed_search(
                        conn, q["question"], qvec, max_results=10, min_relevance=floor, neighbours=neighbours
                    )
                    if floor is not None
                    else _default_floor_search(conn, q["question"], qvec)
                )
                scores[mode] = _score(r["ids"], turns_of, evidence_sessions, evidence_turns)
                scores[mode]["results"] = float(len(r["ids"]))
            picked = [((n - 1) * off_per + i) % len(offtopic.QUERIES) for i in range(off_per)]
            offtopic.tally(off, conn, [offtopic.QUERIES[i] for i in picked], off_vecs[picked])
            with timed() as t_clock:
                clock = clock_shift(
                    conn,
                    q["question"],
                    qvec,
                    lambda ids, t=turns_of, ev=evidence_sessions, et=evidence_turns: _score(ids, t, ev, et),
                )
            clock_seconds += t_clock[0]
            per_question.append(
                {
                    "question_id": q["question_id"],
                    "type": q["question_type"],
                    "memories": len(turns_of),
                    "scores": scores,
                    "best_relevance": round(float(best_relevance), 4),
                    "clock": clock,
                }
            )
            if n % 10 == 0 or n == len(plan):
                log(f"  {n}/{len(plan)} questions stored and searched")

    server.drop_database(DB)
    result["vector_recall_minilm"] = _minilm_recall(server, cache, inputs, questions)
    result["ingest"] = {
        "rows": ingest_rows,
        "seconds": round(ingest_seconds, 1),
        "rows_per_s": round(ingest_rows / ingest_seconds) if ingest_seconds else None,
        "note": "brain.observe_batch, batches of 100 turns, into a fresh workspace per question,"
        " then brain.index_vectors",
        "analyze_seconds": round(analyze_seconds, 1),
        "seconds_per_question": per_question_ingest,
    }
    result["search_ms"] = {m: summary(v) for m, v in search_ms.items()}
    result["search_ms_first"] = {m: summary(v) for m, v in search_ms_first.items()}
    result["metrics"] = _aggregate(per_question)
    off["empty_share"] = round(off["empty"] / max(off["queries"], 1), 3)
    off["best_relevance"] = sorted(off["best_relevance"])
    result["offtopic"] = off
    log(f"  off-topic queries over the {data} stores: {off['empty']} of {off['queries']} return nothing")
    result["clock_shift"] = _aggregate_clock(per_question)
    result["clock_shift"]["seconds"] = round(clock_seconds, 1)
    check = result["clock_shift"]["check"]
    log(
        f"  clock moved +{'/+'.join(str(d) for d in SHIFTS[1:])} days: largest change of recall@10 "
        f"{check['max_change_points']} points: {'pass' if check['passed'] else 'FAIL'}"
    )
    result["per_question"] = per_question
    return result


def question_workspace(conn: psycopg.Connection, name: str, settings: dict[str, Any] | None) -> int:
    """A new workspace for one question's haystack, the connection's workspace from now on, with
    the local MiniLM space and these workspace settings."""
    (ws,) = conn.execute(
        "INSERT INTO brain.workspace (organization_id, name) VALUES (1, %s) RETURNING workspace_id", (name,)
    ).fetchone()
    latency.prepare(conn, ws)
    # Chunked as the plan was (chunk_max_tokens, 256 estimated tokens: the estimate runs
    # high, so such a chunk fits MiniLM's window); with the space's own 254 the stored
    # chunks would not be the ones embedded.
    conn.execute("SELECT brain.use_embedding_space('local', 'all-MiniLM-L6-v2', 384, max_tokens => 256)")
    for key, value in (settings or {}).items():
        conn.execute("SELECT brain.set_setting(%s, %s)", (key, Jsonb(value)))
    return ws


def store_question(
    conn: psycopg.Connection,
    cache: EmbeddingCache,
    q: dict[str, Any],
    batches: list[tuple[list[dict[str, Any]], list[tuple]]],
    settings: dict[str, Any] | None = None,
) -> tuple[int, dict[int, set], float]:
    """One question's haystack in a new workspace of its own (with these workspace settings):
    observe_batch per batch of turns with their cached vectors, then brain.index_vectors.
    Returns the workspace, the turns each memory holds (a turn folded into another memory
    counts as that memory's) and the seconds ANALYZE took."""
    ws = question_workspace(conn, f"lme-{q['question_id']}", settings)
    turns_of: dict[int, set] = defaultdict(set)
    analyzed = 0.0
    for b, (batch, checked) in enumerate(batches):
        vecs = cache.get([r[3] for r in checked if r[2] == "valid"])
        for item, action, memory_id in store_batch(conn, batch, vecs):
            if memory_id is not None and action in ("created", "updated", "skipped"):
                turns_of[memory_id].add(batch[item - 1]["key"])
        if b == 0:
            # The planner knows nothing of a new workspace: until statistics cover it,
            # the dedup lookup (brain._nearest_k) takes a plan that is quadratic in the
            # workspace's size (docs/benchmarks.md). Autovacuum would not analyze soon:
            # a workspace is a small share of the table.
            with timed() as t_analyze:
                conn.execute("ANALYZE brain.memory")
                conn.execute("ANALYZE brain.embedding")
            analyzed += t_analyze[0]
    # Batches of 100 turns leave their vectors out of the HNSW index; `brain worker`
    # would index them (and fold near-identical turns) now.
    while conn.execute("SELECT brain.index_vectors()").fetchone()[0]["action"] != "none":
        pass
    for folded, kept in conn.execute(
        "SELECT memory_id, replaced_by FROM brain.memory WHERE workspace_id = %s"
        " AND state = 'tombstoned' AND replaced_by IS NOT NULL ORDER BY memory_id",
        (ws,),
    ).fetchall():
        turns_of[kept] |= turns_of.pop(folded, set())
    return ws, dict(turns_of), analyzed


def store_batch(conn: psycopg.Connection, batch: list[dict[str, Any]], vecs: np.ndarray) -> list[tuple]:
    """One observe_batch call: the turns, their metadata, threads (sessions) and positions, and vectors."""
    return conn.execute(
        "SELECT item, action, memory_id FROM brain.observe_batch(texts => %s, metadata => %s,"
        " embeddings => %s, embedding_space => 'local:all-MiniLM-L6-v2', threads => %s, positions => %s)",
        (
            [t["text"] for t in batch],
            [Jsonb(t["meta"]) for t in batch],
            Float8Matrix(vecs.astype(np.float64)) if len(vecs) else None,
            [t["thread"] for t in batch],
            [t["position"] for t in batch],
        ),
    ).fetchall()


def _default_floor_search(conn: psycopg.Connection, query: str, vec: np.ndarray) -> dict[str, Any]:
    """A hybrid search with search's default min_relevance."""
    rows = conn.execute(
        "SELECT id FROM brain.search(query => %s, query_embedding => %s, max_results => 10)",
        (query, latency._vec(vec)),
    ).fetchall()
    return {"ids": [r[0] for r in rows]}


def _score(
    ids: list[int], turns_of: dict[int, set], evidence_sessions: set, evidence_turns: set
) -> dict[str, float]:
    out: dict[str, float] = {}
    for k in (1, 5, 10):
        turns = set().union(*(turns_of.get(i, set()) for i in ids[:k])) if ids else set()
        sessions = {sid for sid, _ in turns}
        out[f"session_any@{k}"] = float(bool(sessions & evidence_sessions))
        out[f"session_all@{k}"] = float(evidence_sessions <= sessions)
        if evidence_turns:
            out[f"turn@{k}"] = len(turns & evidence_turns) / len(evidence_turns)
    return out


def clock_legs() -> list[tuple[str, int, bool]]:
    """(name, days after the store was built, episodic_decay on) of each clock-shift leg, in order."""
    return [(f"+{d}", d, False) for d in SHIFTS] + [(f"+{SHIFTS[-1]} episodic_decay", SHIFTS[-1], True)]


def search_ids(
    conn: psycopg.Connection, query: str, vec: np.ndarray | None, now: dt.datetime, max_results: int = 10
) -> list[int]:
    """brain.search with its clock at `now` (ranking, dormancy and expiry are judged at that time)."""
    return [
        r[0]
        for r in conn.execute(
            "SELECT id FROM brain.search(query => %s, query_embedding => %s, max_results => %s, now => %s,"
            " min_relevance => 0)",
            (query, latency._vec(vec), max_results, now),
        )
    ]


def clock_shift(
    conn: psycopg.Connection, query: str, qvec: np.ndarray, score: Any
) -> dict[str, dict[str, Any]]:
    """The question searched again as the clock moves on from the store just built.

    For each leg of clock_legs(), in order: brain.maintain at the moved clock
    (so the maintenance state is the one a workspace left alone that long would
    have), then the three searches (vector, lexical, hybrid) with brain.search's
    `now` at that time, scored by `score(ids)`. The episodic_decay leg sets the
    workspace setting first and leaves it off again afterwards. Also recorded:
    the share of the workspace's active memories that are dormant at that time,
    whether each search returned the first leg's (the fresh store's) top 10,
    and the tsquery of the lexical leg.
    """
    (base,) = conn.execute("SELECT clock_timestamp()").fetchone()
    out: dict[str, dict[str, Any]] = {}
    fresh: dict[str, list[int]] = {}  # the first leg's top 10 per mode
    try:
        for name, days, episodic in clock_legs():
            at = base + dt.timedelta(days=days)
            if episodic:
                conn.execute("SELECT brain.set_setting('episodic_decay', 'true'::jsonb)")
            conn.execute("SELECT brain.maintain(now => %s)", (at,))
            dormant, active = conn.execute(
                "SELECT count(*) FILTER (WHERE dormant_after <= %s), count(*) FROM brain.memory"
                " WHERE workspace_id = brain.current_workspace() AND state = 'active'",
                (at,),
            ).fetchone()
            ids = {
                mode: search_ids(
                    conn, "" if mode == "vector" else query, None if mode == "lexical" else qvec, at
                )
                for mode in MODES
            }
            fresh = fresh or ids
            out[name] = {
                "days": days,
                "episodic_decay": episodic,
                "dormant_share": dormant / active if active else 0.0,
                "scores": {mode: score(ids[mode]) for mode in MODES},
                # the same ten memories in the same order as the fresh store's
                "same_top10": {mode: ids[mode] == fresh[mode] for mode in MODES},
                # the words the lexical leg looks for: chosen by the planner's statistics,
                # which autovacuum's ANALYZE may change between legs (not by the clock)
                "lexical_query": conn.execute("SELECT brain.lexical_query(%s)::text", (query,)).fetchone()[0],
            }
    finally:
        conn.execute("SELECT brain.set_setting('episodic_decay', 'false'::jsonb)")
    return out


def _aggregate_clock(per_question: list[dict[str, Any]]) -> dict[str, Any]:
    """Clock-shift scores averaged over the questions, and the check against the fresh store."""
    legs: dict[str, Any] = {}
    for name, days, episodic in clock_legs():
        items = [pq["clock"][name] for pq in per_question]
        leg: dict[str, Any] = {
            "days": days,
            "episodic_decay": episodic,
            "dormant_share": round(float(np.mean([i["dormant_share"] for i in items])), 3) if items else None,
            # share of the searches (questions x modes) whose top 10 is the fresh store's
            "same_top10": round(float(np.mean([i["same_top10"][m] for i in items for m in MODES])), 3)
            if items
            else None,
        }
        for mode in MODES:
            leg[mode] = {}
            for metric in ("session_any@5", "session_any@10", "session_all@10", "turn@5", "turn@10"):
                values = [i["scores"][mode][metric] for i in items if metric in i["scores"][mode]]
                leg[mode][metric] = round(float(np.mean(values)), 4) if values else None
        legs[name] = leg
    fresh = legs[f"+{SHIFTS[0]}"]

    def change(leg: dict[str, Any]) -> float:
        diffs = [
            abs(leg[mode][m] - fresh[mode][m])
            for mode in MODES
            for m in CLOCK_METRICS
            if leg[mode][m] is not None and fresh[mode][m] is not None
        ]
        return round(max(diffs, default=0.0) * 100, 2)  # in points of recall

    for leg in legs.values():
        leg["max_change_points"] = change(leg)
    checked = [f"+{d}" for d in SHIFTS[1:]]
    worst = max((legs[name]["max_change_points"] for name in checked), default=0.0)
    return {
        "questions": len(per_question),
        "legs": legs,
        "check": {
            "legs": checked,
            "metrics": list(CLOCK_METRICS),
            "modes": list(MODES),
            "tolerance_points": CLOCK_TOLERANCE * 100,
            "max_change_points": worst,
            "passed": bool(per_question) and worst <= CLOCK_TOLERANCE * 100,
        },
    }


def by_type(per_question: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The questions of each type that has any, in the order of TYPES, then all of them ("overall")."""
    groups: dict[str, list] = defaultdict(list)
    for pq in per_question:
        groups[pq["type"]].append(pq)
        groups["overall"].append(pq)
    return {group: groups[group] for group in [*TYPES, "overall"] if groups.get(group)}


def _aggregate(per_question: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for group, items in by_type(per_question).items():
        out[group] = {"questions": len(items)}
        for mode in [*MODES, *(m for m in OPTION_MODES if all(m in pq["scores"] for pq in items))]:
            metrics: dict[str, float] = {}
            for name in (
                "session_any@5",
                "session_any@10",
                "session_all@5",
                "session_all@10",
                "turn@1",
                "turn@5",
                "turn@10",
                "results",
            ):
                values = [pq["scores"][mode][name] for pq in items if name in pq["scores"][mode]]
                metrics[name] = round(float(np.mean(values)), 3) if values else None
            out[group][mode] = metrics
    return out


def _minilm_recall(
    server: BenchServer, cache: EmbeddingCache, inputs: list[str], questions: list[dict[str, Any]]
) -> dict[str, Any]:
    """HNSW recall@10 with real MiniLM vectors: every haystack chunk of the run in one workspace,
    queried with the question embeddings (the synthetic workspaces use hash vectors, which are
    sparse and near-random, a hard case for HNSW)."""
    texts = list(dict.fromkeys(inputs))
    log(
        f"  vector recall@10 with MiniLM vectors: {len(texts):,} chunks in one workspace, "
        f"{len(questions)} question vectors"
    )
    name = "bench_minilm"
    url = server.create_database(name)
    with server.connect(name) as conn:
        space_id = loader.register_space(conn, "local", "all-MiniLM-L6-v2", 384)
    # The rows only carry the vectors: the recall check reads nothing else.
    memories = [
        Memory(
            kind="fact", headline=f"LongMemEval chunk {i}", body="", project="", tags=[], category="episodic"
        )
        for i in range(len(texts))
    ]
    loaded = loader.load(url, memories, space_id=space_id, vectors=cache.get(texts))
    with server.connect(name) as conn:
        latency.prepare(conn, 1)
        out = latency.vector_recall(conn, cache.get([q["question"] for q in questions]), space_id, 1)
    server.drop_database(name)
    out["rows"] = loaded["created"]
    log(f"  vector recall@10 (MiniLM, {loaded['created']:,} rows) = {out['mean_recall_at_10']}")
    return out
