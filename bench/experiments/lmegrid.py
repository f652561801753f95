"""python -m bench.experiments.lmegrid: LongMemEval-S recall for many settings, the stores built once.

`python -m bench --only-longmemeval` stores the dev questions' haystacks
again on every run (about six minutes here) and measures one setting. This
builds the same stores once, with the same protocol (bench/longmemeval.py:
one workspace per question, observe_batch in batches of 100 turns, the
cached MiniLM vectors, brain.index_vectors, folded turns mapped to the
memory that kept them), keeps them under --data-dir, and then runs the
three searches of each question (vector only, lexical only, hybrid; top 10,
min_relevance 0) once per setting given, in seconds:

    python -m bench.experiments.lmegrid                                  # the defaults
    python -m bench.experiments.lmegrid --setting search_thread_decay=1 \\
        --setting search_thread_decay=0.8,assistant_turn_weight=0.5

Each --setting is one variant: NAME=JSON pairs, comma-separated, set as
workspace settings of every question's workspace (the defaults otherwise).
The first run after the SQL changed migrates the kept database to the
tree's SQL (brain.migrate), so the variants are measured with it. The
embedding cache must already hold the chunks (`python -m bench
--only-longmemeval` fills it). --rebuild builds the stores again.
"""

from __future__ import annotations

import itertools
import json
import os
import pickle
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from psycopg.types.json import Jsonb

from bench import embcache, latency, offtopic
from bench import longmemeval as lme
from bench.embcache import EmbeddingCache
from bench.experiments import parser
from bench.server import BenchServer
from bench.util import log
from pybrain import db

DB = "lme_grid"


def _default_dir(data: str = "dev60") -> Path:
    """Where the stores of a question set are kept (dev60's where they always were)."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "pybrain-bench" / ("lmegrid" if data == "dev60" else f"lmegrid-{data}")


class _NoVectors:
    """The stores of --text-only: turns stored without vectors (search has its lexical leg only)."""

    def ensure(self, texts: list[str], what: str = "texts") -> None:
        log("  nothing embedded: the turns are stored without vectors (--text-only)")

    def get(self, texts: list[str]) -> np.ndarray:
        return np.zeros((0, embcache.DIMS), np.float32)


def build(
    server: BenchServer,
    meta_path: Path,
    data: str = "dev60",
    n_questions: int | None = None,
    text_only: bool = False,
    skip: int = 0,
) -> list[dict[str, Any]]:
    """Every question's store (or a stratified n_questions of them), as bench/longmemeval.py
    builds it; what scoring needs, per question. text_only: no vectors (no question vector either)."""
    cache = _NoVectors() if text_only else EmbeddingCache()
    questions = lme.load_questions(None if n_questions is None else n_questions + skip, lme.DATA_SETS[data])
    questions = questions[skip:]
    server.create_database(DB)
    meta: list[dict[str, Any]] = []
    with server.connect(DB) as conn:
        plan = []
        for q in questions:
            turns = lme._turns(q)
            # the write gate's check only tells which chunks to embed: none without vectors
            batches = [
                (turns[i : i + lme.BATCH], [] if text_only else lme._check(conn, turns[i : i + lme.BATCH]))
                for i in range(0, len(turns), lme.BATCH)
            ]
            plan.append((q, turns, batches))
        cache.ensure(
            [r[3] for _, _, batches in plan for _, rows in batches for r in rows if r[2] == "valid"]
            + [q["question"] for q in questions]
            + offtopic.QUERIES,
            "LongMemEval chunks and questions",
        )
        for n, (q, turns, batches) in enumerate(plan, 1):
            ws, turns_of, _ = lme.store_question(conn, cache, q, batches)
            meta.append(
                {
                    "workspace": ws,
                    "question_id": q["question_id"],
                    "type": q["question_type"],
                    "question": q["question"],
                    "vector": None if text_only else cache.get([q["question"]])[0],
                    "evidence_sessions": set(q["answer_session_ids"]),
                    "evidence_turns": {t["key"] for t in turns if t["has_answer"]},
                    "turns_of": turns_of,
                }
            )
            if n % 10 == 0 or n == len(questions):
                log(f"  {n}/{len(questions)} questions stored")
        conn.execute("ANALYZE")
    with meta_path.open("wb") as f:
        pickle.dump({"questions": meta}, f)
    return meta


# The questions whose evidence spans two sessions or more (multi-session, and some
# temporal-reasoning and knowledge-update ones): the dev set's multi-hop questions.
MULTI_HOP = "evidence in 2+ sessions"


def _groups(m: dict[str, Any]) -> list[str]:
    """The groups a question's figures count in: its type, the multi-hop set, overall."""
    return [m["type"], *([MULTI_HOP] if len(m["evidence_sessions"]) >= 2 else []), "overall"]


def evaluate(
    conn: psycopg.Connection, meta: list[dict[str, Any]], settings: dict[str, Any], offtopic_runs: int = 0
) -> dict[str, Any]:
    """The three modes' recall (overall and per type) and warm search latency with these settings."""
    workspaces = [m["workspace"] for m in meta]
    conn.execute("DELETE FROM brain.setting WHERE workspace_id = ANY(%s)", (workspaces,))
    scores: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    ms: dict[str, list[float]] = defaultdict(list)
    off_vecs = EmbeddingCache().get(offtopic.QUERIES) if offtopic_runs else None
    off = {"queries": 0, "empty": 0, "best_relevance": [], "never_stored": 0, "never_stored_empty": 0}
    best: list[float] = []
    for n, m in enumerate(meta):
        latency.prepare(conn, m["workspace"])
        for name, value in settings.items():
            conn.execute("SELECT brain.set_setting(%s, %s)", (name, Jsonb(value)))
        for mode in lme.MODES:
            for _ in range(2):  # the second search is the warm one, timed
                r = latency.timed_search(
                    conn,
                    "" if mode == "vector" else m["question"],
                    None if mode == "lexical" else m["vector"],
                    max_results=10,
                )
            ms[mode].append(r["ms"])
            got = lme._score(r["ids"], m["turns_of"], m["evidence_sessions"], m["evidence_turns"])
            for group in _groups(m):
                for metric, value in got.items():
                    scores[(mode, group)][metric].append(value)
            if mode == "hybrid":
                best.append(max((x or 0 for x in r["relevances"] or []), default=0.0))
        # the default path: hybrid with search's default floor
        r = lme._default_floor_search(conn, m["question"], m["vector"])
        got = lme._score(r["ids"], m["turns_of"], m["evidence_sessions"], m["evidence_turns"])
        got["results"] = float(len(r["ids"]))
        for group in _groups(m):
            for metric, value in got.items():
                scores[("hybrid_floor", group)][metric].append(value)
        if off_vecs is not None:
            per = max(offtopic_runs, -(-len(offtopic.QUERIES) // len(meta)))
            picked = [(n * per + i) % len(offtopic.QUERIES) for i in range(per)]
            offtopic.tally(off, conn, [offtopic.QUERIES[i] for i in picked], off_vecs[picked])
    conn.execute("DELETE FROM brain.setting WHERE workspace_id = ANY(%s)", (workspaces,))
    out: dict[str, Any] = {"settings": settings, "modes": {}, "best_relevance": sorted(best)}
    if off_vecs is not None:
        off["best_relevance"] = sorted(off["best_relevance"])
        out["offtopic"] = off
    for mode in (*lme.MODES, "hybrid_floor"):
        out["modes"][mode] = {
            group: {k: round(float(np.mean(v)), 3) for k, v in scores[(mode, group)].items()}
            for group in [*lme.TYPES, MULTI_HOP, "overall"]
            if scores[(mode, group)]
        }
        if ms[mode]:
            out["modes"][mode]["search_ms_p50"] = round(statistics.median(ms[mode]), 2)
    return out


BINS = (0.0, 0.01, 0.05, 0.1, 0.3, 0.5, 1.0)


def calibration(conn: psycopg.Connection, meta: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """How often a hybrid result of each relevance is evidence: every question's first 100 results
    (min_relevance 0), binned by the relevance search gave them; a result is evidence when it holds
    an evidence turn (has_answer) of its question."""
    counts = [[0, 0] for _ in BINS[:-1]]
    for m in meta:
        latency.prepare(conn, m["workspace"])
        r = latency.timed_search(conn, m["question"], m["vector"], max_results=100)
        for memory_id, relevance in zip(r["ids"], r["relevances"], strict=True):
            b = next(i for i in range(len(BINS) - 1) if relevance < BINS[i + 1] or i == len(BINS) - 2)
            counts[b][0] += 1
            counts[b][1] += bool(m["turns_of"].get(memory_id, set()) & m["evidence_turns"])
    return [
        {"relevance": f"{lo:g}-{hi:g}", "results": n, "evidence": e, "share": round(e / n, 3) if n else None}
        for (lo, hi), (n, e) in zip(itertools.pairwise(BINS), counts, strict=True)
    ]


def _variant(text: str) -> dict[str, Any]:
    settings: dict[str, Any] = {}
    for pair in filter(None, text.split(",")):
        name, _, value = pair.partition("=")
        if not value:
            raise SystemExit(f"--setting takes NAME=JSON pairs, not {pair!r}")
        settings[name.strip()] = json.loads(value)
    return settings


def main(argv: list[str] | None = None) -> None:
    p = parser(__spec__.name, __doc__)
    p.add_argument(
        "--setting",
        action="append",
        default=[],
        metavar="NAME=JSON[,NAME=JSON...]",
        help="one variant (repeatable); without any, the defaults",
    )
    p.add_argument("--data", choices=sorted(lme.DATA_SETS), default="dev60", help="the question set")
    p.add_argument("--data-dir", type=Path, help="where the stores are kept (default: per question set)")
    p.add_argument(
        "--questions", type=int, help="store only this many of the set's questions (stratified by type)"
    )
    p.add_argument(
        "--skip",
        type=int,
        default=0,
        help="leave out the first N of that stratified order (a store of the questions another left out)",
    )
    p.add_argument(
        "--text-only",
        action="store_true",
        help="store the turns without vectors, and only store them (bench.experiments.lmescore measures)",
    )
    p.add_argument("--rebuild", action="store_true", help="build the stores again")
    p.add_argument("--output", type=Path, help="the results as JSON")
    p.add_argument(
        "--calibration",
        action="store_true",
        help="also bin the first 100 hybrid results by relevance: how many are evidence (defaults)",
    )
    p.add_argument(
        "--offtopic",
        type=int,
        default=0,
        metavar="N",
        help="also run N off-topic queries (bench/offtopic.py) per store, at least one of each",
    )
    args = p.parse_args(argv)
    variants = [_variant(v) for v in args.setting] or [{}]
    args.data_dir = args.data_dir or _default_dir(args.data)

    meta_path = args.data_dir / "questions.pkl"
    server = BenchServer(args.data_dir)
    try:
        if args.rebuild or not meta_path.exists() or not server.has_database(DB):
            log(f"== storing the LongMemEval-S {args.data} questions (once)")
            meta = build(server, meta_path, args.data, args.questions, args.text_only, args.skip)
        else:
            with meta_path.open("rb") as f:
                kept = pickle.load(f)
            meta = kept["questions"]
            with psycopg.connect(server.url(DB), autocommit=True) as conn:
                db.migrate(conn)  # the tree's SQL, whatever it was built with
        if args.text_only:
            return
        results = []
        with server.connect(DB) as conn:
            for settings in variants:
                r = evaluate(conn, meta, settings, args.offtopic)
                results.append(r)
                h, v, x = (r["modes"][mode]["overall"] for mode in ("hybrid", "vector", "lexical"))
                log(
                    f"  {json.dumps(settings)}: hybrid turn@5 {h['turn@5']:.3f} turn@10 {h['turn@10']:.3f}"
                    f" session all@10 {h['session_all@10']:.3f}; vector turn@10 {v['turn@10']:.3f},"
                    f" lexical turn@10 {x['turn@10']:.3f}; hybrid p50 {r['modes']['hybrid']['search_ms_p50']}"
                )
                f = r["modes"]["hybrid_floor"]["overall"]
                log(
                    f"    default path (floor on): turn@5 {f['turn@5']:.3f} turn@10 {f['turn@10']:.3f}"
                    f" session all@10 {f['session_all@10']:.3f}, {f['results']:.1f} results"
                )
                if "offtopic" in r:
                    o = r["offtopic"]
                    log(
                        f"    off-topic: {o['empty']} of {o['queries']} return nothing; of the"
                        f" {o['never_stored']} about something the store never holds,"
                        f" {o['never_stored_empty']}"
                    )
            bins = calibration(conn, meta) if args.calibration else None
        for b in bins or []:
            log(
                f"  relevance {b['relevance']:>9}: {b['results']:5} results,"
                f" {b['evidence']:3} evidence ({b['share']})"
            )
        if args.output:
            args.output.write_text(
                json.dumps({"questions": len(meta), "results": results, "calibration": bins}, indent=1)
            )
    finally:
        server.close()


if __name__ == "__main__":
    main()
