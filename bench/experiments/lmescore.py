"""python -m bench.experiments.lmescore: session and thread evidence, and a scorer fitted on train150.

On the stores `python -m bench.experiments.lmegrid --data dev60` and `--data
train150` keep, each question is searched as a user would (`brain.search`,
hybrid, the question's text and MiniLM vector, `min_relevance` 0; on stores
built with `--text-only`, the text alone: the lexical path) for its first
`--pool` (50) results. Each result is described by what search returns
and by SQL over the stored turns:

- what search has: its relevance (as log-odds), its place in search's order,
  its place in the vector and lexical legs (1 / (1 + rank), 0 when the leg
  did not find it), its similarity, whether an assistant said it;
- session evidence: the best relevance of another result of its session
  (thread), how many results its session has, the best similarity to the
  question and the best share of the query's word weight (its words some
  memory holds, weighed by idf as the lexical leg weighs them) of any other
  turn of its session, among the results or not ("max over turns");
- neighbours: the same two of the turns just before and after it in its
  session, and the best relevance of a result among them;
- recency: its session date's place among the dates of the results (0 the
  oldest, 1 the newest).

Then a logistic regression (label: the result holds an evidence turn) is
fitted on train150's results only, for several sets of features (with
`--stumps`, boosted stumps too), and each fit ranks the first 50 of every
dev60 question again. turn@1, @5 and @10 are printed per question type, for the questions
whose evidence spans two sessions or more, and overall, on train150 (where it
was fitted) and dev60 (where it is chosen) side by side, against search's own
order. The features are read once and kept beside the stores
(`scorer-features-<pool>.pkl`; `--refresh` reads them again):

    python -m bench.experiments.lmescore
    python -m bench.experiments.lmescore --train150 DIR --dev60 DIR --stumps --output /tmp/lmescore.json
"""

from __future__ import annotations

import datetime as dt
import json
import pickle
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from bench import latency
from bench.experiments import parser
from bench.experiments.lmefuse import logistic, sig
from bench.experiments.lmegrid import DB, MULTI_HOP, _default_dir, _groups
from bench.longmemeval import TYPES
from bench.server import BenchServer
from pybrain import db

KS = (1, 5, 10)
DATA_SETS = ("train150", "dev60")

# Search's first results with what the stored turns add. $1 query, $2 vector, $3 pool.
CANDIDATES = """
WITH r AS (
    SELECT s.id, s.score, s.relevance, s.similarity, s.vector_rank, s.lexical_rank, s.thread,
           s."position", coalesce(s.metadata->>'speaker', s.metadata->>'role') AS speaker,
           s.metadata->>'date' AS date, s.ordinality AS place
    FROM brain.search(query => %(q)s, query_embedding => %(vec)s, max_results => %(pool)s,
                      min_relevance => 0) WITH ORDINALITY AS s
    WHERE s.neighbour_of IS NULL
),
-- the query's words and their weights, as the lexical leg weighs them
t AS (SELECT array_agg(quote_literal(w.lexeme)::tsquery) AS tq, array_agg(w.idf) AS idf,
             nullif(sum(w.idf), 0) AS total
      FROM brain.lexical_terms(%(q)s) AS w)
SELECT r.place, r.id, r.score, r.relevance, r.similarity, r.vector_rank, r.lexical_rank, r.thread,
       r."position", r.speaker, r.date,
       coalesce(nb.sim, 0), coalesce(ses.sim, 0), coalesce(nb.share, 0), coalesce(ses.share, 0)
FROM r CROSS JOIN t
LEFT JOIN LATERAL (
    SELECT max(1 - (e.embedding <=> %(v)s::vector)) AS sim,
           max((SELECT sum(x.idf) FROM unnest(t.tq, t.idf) AS x(tq, idf) WHERE n.tsv @@ x.tq)
               / t.total) AS share
    FROM brain.memory n
    LEFT JOIN brain.embedding e ON e.workspace_id = n.workspace_id AND e.memory_id = n.memory_id
    WHERE n.workspace_id = brain.current_workspace() AND n.thread = r.thread AND n.state = 'active'
      AND n."position" IN (r."position" - 1, r."position" + 1)
) AS nb ON r.thread IS NOT NULL
LEFT JOIN LATERAL (
    SELECT max(1 - (e.embedding <=> %(v)s::vector)) AS sim,
           max((SELECT sum(x.idf) FROM unnest(t.tq, t.idf) AS x(tq, idf) WHERE n.tsv @@ x.tq)
               / t.total) AS share
    FROM brain.memory n
    LEFT JOIN brain.embedding e ON e.workspace_id = n.workspace_id AND e.memory_id = n.memory_id
    WHERE n.workspace_id = brain.current_workspace() AND n.thread = r.thread AND n.state = 'active'
      AND n.memory_id <> r.id
) AS ses ON r.thread IS NOT NULL
ORDER BY r.place
"""

FEATURES = (
    "z",  # log-odds of search's relevance
    "log_score",  # log of search's score (relevance x weights)
    "place",  # 1 / place in search's order
    "vec_place",  # 1 / (1 + vector rank), 0 unfound
    "lex_place",  # 1 / (1 + lexical rank), 0 unfound
    "sim",  # cosine similarity
    "assistant",  # an assistant's turn
    "session_best",  # best relevance of another result of the session
    "session_hits",  # log(1 + other results of the session)
    "session_max_sim",  # best similarity of any turn of the session
    "neighbour_sim",  # best similarity of the turns just before and after
    "neighbour_rel",  # best relevance of a result among them
    "neighbour_share",  # best share of the query's word weight the turns just before and after hold
    "session_share",  # best share of the query's word weight another turn of the session holds
    "recency",  # the session date's place among the results' dates
)

BASE = ("z", "log_score", "place", "vec_place", "lex_place", "sim", "assistant")
SESSION = ("session_best", "session_hits", "session_max_sim", "session_share")
NEIGHBOURS = ("neighbour_sim", "neighbour_rel", "neighbour_share")
SETS = {
    "search's own order": None,
    "what search has": BASE,
    "+ session": (*BASE, *SESSION),
    "+ neighbours": (*BASE, *NEIGHBOURS),
    "+ session + neighbours": (*BASE, *SESSION, *NEIGHBOURS),
    "all (+ recency)": FEATURES,
    "search's score + session + neighbours": ("log_score", "place", *SESSION, *NEIGHBOURS),
}


def _date(text: str | None) -> float | None:
    if not text:
        return None
    try:
        return dt.datetime.strptime(text[:10], "%Y/%m/%d").timestamp()
    except ValueError:
        return None


def read(data_dir: Path, pool: int) -> list[dict[str, Any]]:
    """Every question of a set's stores: its candidates' raw rows and what scoring needs."""
    with (data_dir / "questions.pkl").open("rb") as f:
        meta = pickle.load(f)["questions"]
    server = BenchServer(data_dir)
    out = []
    try:
        with server.connect(DB) as conn:
            db.migrate(conn)
            for m in meta:
                if not m["evidence_turns"]:
                    continue
                latency.prepare(conn, m["workspace"])
                vec = None if m["vector"] is None else [float(x) for x in m["vector"]]
                v = None if vec is None else "[" + ",".join(map(str, vec)) + "]"
                rows = conn.execute(
                    CANDIDATES, {"q": m["question"], "vec": vec, "v": v, "pool": pool}
                ).fetchall()
                out.append({**{k: m[k] for k in ("question_id", "type", "evidence_sessions",
                                                 "evidence_turns", "turns_of")}, "rows": rows})  # fmt: skip
    finally:
        server.close()
    return out


def features(q: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """(features, labels, ids) of a question's candidates, in search's order."""
    rows = q["rows"]
    by_thread: dict[Any, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        if r[7] is not None:
            by_thread[r[7]].append(i)
    at = {(r[7], r[8]): i for i, r in enumerate(rows) if r[7] is not None}
    dates = [_date(r[10]) for r in rows]
    known = [d for d in dates if d is not None]
    lo, hi = (min(known), max(known)) if known else (0.0, 0.0)
    x, y = [], []
    for i, r in enumerate(rows):
        place, _, score, rel, sim, vrank, lrank, thread, pos, speaker, _, nsim, ssim, nshare, sshare = r
        rel = min(max(float(rel or 0), 1e-6), 1 - 1e-6)
        others = [j for j in by_thread.get(thread, []) if j != i]
        near = [at[(thread, pos + d)] for d in (-1, 1) if pos is not None and (thread, pos + d) in at]
        d = dates[i]
        x.append(
            (
                np.log(rel / (1 - rel)),
                np.log(max(float(score or 0), 1e-6)),
                1 / place,
                1 / (1 + vrank) if vrank else 0.0,
                1 / (1 + lrank) if lrank else 0.0,
                float(sim or 0),
                float(speaker == "assistant"),
                max((float(rows[j][3] or 0) for j in others), default=0.0),
                np.log1p(len(others)),
                float(ssim),
                float(nsim),
                max((float(rows[j][3] or 0) for j in near), default=0.0),
                float(nshare),
                float(sshare),
                (d - lo) / (hi - lo) if d is not None and hi > lo else 0.5,
            )
        )
        y.append(bool(q["turns_of"].get(r[1], set()) & q["evidence_turns"]))
    return np.array(x, float), np.array(y, float), [r[1] for r in rows]


def stumps(x: np.ndarray, y: np.ndarray, rounds: int = 150, rate: float = 0.1) -> list[tuple]:
    """Boosted stumps for the logistic loss: [(feature, threshold, value below, value at or above)],
    the log-odds a sum of one step per round (a table SQL can sum). The first entry is the bias."""
    prior = float(np.log(y.mean() / (1 - y.mean())))
    out: list[tuple] = [(-1, 0.0, prior, prior)]
    f = np.full(len(y), prior)
    cuts = [np.unique(np.quantile(x[:, j], np.linspace(0.05, 0.95, 19))) for j in range(x.shape[1])]
    for _ in range(rounds):
        p = sig(f)
        g, h = p - y, np.maximum(p * (1 - p), 1e-9)
        best = None
        for j, cs in enumerate(cuts):
            for c in cs:
                lo = x[:, j] < c
                gl, hl = g[lo].sum(), h[lo].sum()
                gr, hr = g.sum() - gl, h.sum() - hl
                gain = gl * gl / (hl + 1) + gr * gr / (hr + 1)
                if best is None or gain > best[0]:
                    best = (gain, j, float(c), -rate * gl / (hl + 1), -rate * gr / (hr + 1))
        _, j, c, vl, vr = best
        out.append((j, c, vl, vr))
        f += np.where(x[:, j] < c, vl, vr)
    return out


def stumps_score(model: list[tuple], x: np.ndarray) -> np.ndarray:
    f = np.full(len(x), model[0][2])
    for j, c, vl, vr in model[1:]:
        f += np.where(x[:, j] < c, vl, vr)
    return f


def recall(q: dict[str, Any], ids: list[int]) -> dict[int, float]:
    out = {}
    for k in KS:
        turns = set().union(*(q["turns_of"].get(i, set()) for i in ids[:k]))
        out[k] = len(turns & q["evidence_turns"]) / len(q["evidence_turns"])
    return out


def groups(q: dict[str, Any]) -> list[str]:
    return _groups({"type": q["type"], "evidence_sessions": q["evidence_sessions"]})


def main(argv: list[str] | None = None) -> None:
    p = parser(__spec__.name, __doc__)
    p.add_argument("--pool", type=int, default=50, help="how many of search's first results are ranked again")
    p.add_argument("--refresh", action="store_true", help="read the candidates from the stores again")
    for data in DATA_SETS:
        p.add_argument(
            f"--{data}",
            type=Path,
            nargs="+",
            default=[_default_dir(data)],
            metavar="DIR",
            help=f"{data}'s stores (lmegrid; several: their questions together)",
        )
    p.add_argument("--output", type=Path, help="the figures and the fitted weights as JSON")
    p.add_argument(
        "--stumps", action="store_true", help="also fit boosted stumps (150 rounds) on the largest sets"
    )
    args = p.parse_args(argv)
    args.stumps = (
        {SETS["what search has"], SETS["+ session + neighbours"], FEATURES} if args.stumps else set()
    )
    sets: dict[str, list[dict[str, Any]]] = {}
    for data in DATA_SETS:
        sets[data] = []
        for data_dir in getattr(args, data):
            path = data_dir / f"scorer-features-{args.pool}.pkl"
            if args.refresh or not path.exists():
                got = read(data_dir, args.pool)
                with path.open("wb") as f:
                    pickle.dump(got, f)
            with path.open("rb") as f:
                sets[data] += pickle.load(f)
        ids = [q["question_id"] for q in sets[data]]
        if len(set(ids)) != len(ids):
            raise SystemExit(f"{data}: the stores given hold some questions twice")
    feats = {data: [features(q) for q in qs] for data, qs in sets.items()}
    train = feats["train150"]
    positives = int(sum(y.sum() for _, y, _ in train))
    print(f"fitted on train150: {sum(len(y) for _, y, _ in train)} candidates, {positives} evidence")
    report: dict[str, Any] = {"pool": args.pool, "fits": {}, "figures": {}}
    runs = [(name, use, "logistic") for name, use in SETS.items()]
    runs += [(f"{name}, boosted stumps", use, "stumps") for name, use in SETS.items() if use in args.stumps]
    for name, use, how in runs:
        w = mean = std = None
        if use is not None:
            cols = [FEATURES.index(f) for f in use]
            x = np.vstack([f[:, cols] for f, _, _ in train])
            mean, std = x.mean(0), x.std(0) + 1e-9
            y = np.concatenate([y for _, y, _ in train])
            if how == "stumps":
                model = stumps(x, y)
                report["fits"][name] = [(use[j] if j >= 0 else "bias", c, vl, vr) for j, c, vl, vr in model]
            else:
                w = logistic(np.column_stack([np.ones(len(y)), (x - mean) / std]), y)
                # the weights on the features' own scale
                raw = np.concatenate([[w[0] - (w[1:] * mean / std).sum()], w[1:] / std])
                report["fits"][name] = dict(zip(["bias", *use], map(float, raw), strict=True))
        table: dict[str, dict[str, list[dict[int, float]]]] = defaultdict(lambda: defaultdict(list))
        for data, qs in sets.items():
            for q, (f, _, ids) in zip(qs, feats[data], strict=True):
                if use is None:
                    ranked = ids
                else:
                    if how == "stumps":
                        s = stumps_score(model, f[:, cols])
                    else:
                        s = np.column_stack([np.ones(len(ids)), (f[:, cols] - mean) / std]) @ w
                    ranked = [ids[i] for i in sorted(range(len(ids)), key=lambda i: (-s[i], i))]
                for g in groups(q):
                    table[g][data].append(recall(q, ranked))
        report["figures"][name] = {
            g: {
                data: {"n": len(v), **{f"turn@{k}": round(float(np.mean([r[k] for r in v])), 3) for k in KS}}
                for data, v in by_data.items()
            }
            for g, by_data in table.items()
        }
        if how == "logistic" and use is not None:
            print(f"\n{name}: " + ", ".join(f"{k} {v:.3f}" for k, v in report["fits"][name].items()))
        else:
            print(f"\n{name}")
        for g in [*TYPES, MULTI_HOP, "overall"]:
            if g not in table:
                continue
            cells = []
            for data in DATA_SETS:
                v = table[g][data]
                cells.append(
                    f"{data} ({len(v):3}) " + " / ".join(f"{np.mean([r[k] for r in v]):.3f}" for k in KS)
                )
            print(f"  {g:26s} " + "   ".join(cells))
    if args.output:
        args.output.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
