"""python -m bench.experiments.lmerank: a second stage over search's first 50, replayed offline.

On the stores `python -m bench.experiments.lmegrid` keeps, with the features
`bench.experiments.lmefuse` reads (each memory's similarity to the question,
its BM25 and share, its speaker, thread and position), this replays search's
first stage (the vector leg's best 100 and the lexical leg's best 100, scored
by the stored maps, ordered by search's rules), then ranks its first `--pool`
(50) again by a rule of a few features:

- z: the first stage's log-odds (what the relevance maps give);
- lexical and vector place: 1 / (1 + the candidate's place in each leg), so a
  leg's first keeps a say that the calibrated sum can lose;
- thread support: the best first-stage relevance of another candidate within
  two turns of it in the same thread;
- neighbour similarity: the best similarity to the question of the turns just
  before and after it (which need not be candidates).

`--expand N` also brings the turns just before and after the first stage's
first N into the pool before it is ranked (multi-hop: the other half of an
exchange). The rule's weights are fitted by logistic regression on the pool's
candidates (label: the candidate holds an evidence turn), on half the
questions and checked on the other half, and the other way round; turn@1, @5
and @10 are printed for each question type and for the questions whose
evidence spans two sessions or more:

    python -m bench.experiments.lmerank
    python -m bench.experiments.lmerank --expand 10 --pool 50
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from bench.experiments import parser
from bench.experiments.lmefuse import Replay, logistic, sig
from bench.experiments.lmegrid import _default_dir

KS = (1, 5, 10)
FEATURES = ("z", "lex_place", "vec_place", "thread_support", "neighbour_sim")


class Stage2(Replay):
    def prepared(self, q: int) -> dict[str, Any]:
        rows = self.rows[q]
        m = self.maps
        sims = np.array([r[1] for r in rows])
        shares = np.array([r[3] for r in rows])
        bm25 = np.array([r[2] for r in rows])
        vec_order = np.argsort(-sims)[:100].tolist()
        lex_order = [i for i in np.argsort(-bm25).tolist() if rows[i][4]][:100]
        vec_place = {i: n for n, i in enumerate(vec_order)}
        lex_place = {i: n for n, i in enumerate(lex_order)}
        z = m["bias"] + m["wv"] * m["s"] * (sims - m["c"]) + m["wl"] * m["ls"] * (shares - m["lc"])
        at = {(r[7], r[8]): i for i, r in enumerate(rows) if r[7] is not None}
        return {
            "rows": rows,
            "sims": sims,
            "z": z,
            "vec_place": vec_place,
            "lex_place": lex_place,
            "pool": sorted(set(vec_order) | set(lex_order)),
            "at": at,
        }

    def first_stage(self, p: dict[str, Any]) -> list[int]:
        """Row indexes in search's order (the stored maps, search's ordering rules)."""
        rows = p["rows"]
        sub = p["pool"]
        ids = self.order([rows[i] for i in sub], sig(p["z"][sub]))
        index = {rows[i][0]: i for i in sub}
        return [index[x] for x in ids]

    def features(self, p: dict[str, Any], cand: list[int]) -> np.ndarray:
        rows, z, sims, at = p["rows"], p["z"], p["sims"], p["at"]
        rel = sig(z)
        by_thread: dict[Any, list[int]] = defaultdict(list)
        for i in cand:
            by_thread[rows[i][7]].append(i)
        out = []
        for i in cand:
            thread, pos = rows[i][7], rows[i][8]
            support = 0.0
            near = 0.0
            if thread is not None and pos is not None:
                support = max(
                    (rel[j] for j in by_thread[thread] if j != i and abs((rows[j][8] or 0) - pos) <= 2),
                    default=0.0,
                )
                near = max(
                    (sims[at[(thread, pos + d)]] for d in (-1, 1) if (thread, pos + d) in at), default=0.0
                )
            out.append(
                (
                    z[i],
                    1 / (1 + p["lex_place"].get(i, 200)),
                    1 / (1 + p["vec_place"].get(i, 200)),
                    support,
                    near,
                )
            )
        return np.array(out)

    def candidates(self, p: dict[str, Any], first: list[int], pool: int, expand: int) -> list[int]:
        cand = list(first[:pool])
        seen = set(cand)
        rows, at = p["rows"], p["at"]
        for i in first[:expand]:
            thread, pos = rows[i][7], rows[i][8]
            if thread is None or pos is None:
                continue
            for d in (-1, 1):
                j = at.get((thread, pos + d))
                if j is not None and j not in seen:
                    seen.add(j)
                    cand.append(j)
        return cand

    def labels(self, q: int, cand: list[int]) -> np.ndarray:
        m, rows = self.meta[q], self.rows[q]
        return np.array(
            [bool(m["turns_of"].get(rows[i][0], set()) & m["evidence_turns"]) for i in cand], float
        )

    def recall(self, q: int, ids: list[int]) -> dict[int, float]:
        m = self.meta[q]
        out = {}
        for k in KS:
            turns = set().union(*(m["turns_of"].get(i, set()) for i in ids[:k]))
            out[k] = len(turns & m["evidence_turns"]) / len(m["evidence_turns"])
        return out


def groups(meta: dict[str, Any]) -> list[str]:
    g = [meta["type"], "overall"]
    if len(meta["evidence_sessions"]) >= 2:
        g.append("evidence in 2+ sessions")
    return g


def main(argv: list[str] | None = None) -> None:
    p = parser(__spec__.name, __doc__)
    p.add_argument(
        "--data-dir", type=Path, default=_default_dir(), help="the stores of bench.experiments.lmegrid"
    )
    p.add_argument("--pool", type=int, default=50, help="how many of the first stage are ranked again")
    p.add_argument("--expand", type=int, default=0, help="the neighbours of the first N join the pool")
    p.add_argument("--features", default=",".join(FEATURES), help="which features the rule uses")
    args = p.parse_args(argv)
    use = [FEATURES.index(f) for f in args.features.split(",")]
    r = Stage2(args.data_dir)
    qs = [q for q, m in enumerate(r.meta) if m["evidence_turns"]]
    prep = {q: r.prepared(q) for q in qs}
    first = {q: r.first_stage(prep[q]) for q in qs}
    legs: dict[str, dict[int, list[int]]] = {"first stage": first, "lexical leg": {}, "vector leg": {}}
    for q in qs:
        pp = prep[q]
        legs["lexical leg"][q] = sorted(pp["lex_place"], key=pp["lex_place"].get)
        legs["vector leg"][q] = sorted(pp["vec_place"], key=pp["vec_place"].get)
    cand = {q: r.candidates(prep[q], first[q], args.pool, args.expand) for q in qs}
    feats = {q: r.features(prep[q], cand[q])[:, use] for q in qs}
    halves = (qs[0::2], qs[1::2])
    second: dict[int, list[int]] = {}
    for fit_on, check_on in (halves, halves[::-1]):
        x = np.vstack([feats[q] for q in fit_on])
        y = np.concatenate([r.labels(q, cand[q]) for q in fit_on])
        w = logistic(np.column_stack([np.ones(len(y)), x]), y)
        print(
            "weights ("
            + ", ".join(f"{n} {v:.3f}" for n, v in zip(["bias", *[FEATURES[i] for i in use]], w, strict=True))
            + ")"
        )
        for q in check_on:
            rows = prep[q]["rows"]
            score = sig(np.column_stack([np.ones(len(cand[q])), feats[q]]) @ w)
            ids = r.order([rows[i] for i in cand[q]], score)
            index = {rows[i][0]: i for i in cand[q]}
            ranked = [index[x] for x in ids]
            second[q] = ranked + [i for i in first[q] if i not in set(ranked)]
    legs["second stage (held-out half)"] = second
    table: dict[str, dict[str, list[dict[int, float]]]] = defaultdict(lambda: defaultdict(list))
    for name, ranking in legs.items():
        for q in qs:
            ids = [prep[q]["rows"][i][0] for i in ranking[q]]
            for g in groups(r.meta[q]):
                table[g][name].append(r.recall(q, ids))
    for g in sorted(table, key=lambda g: (g == "overall", g)):
        n = len(next(iter(table[g].values())))
        print(f"\n{g} ({n} questions)")
        for name, vals in table[g].items():
            print(f"  {name:32s} " + "  ".join(f"@{k} {np.mean([v[k] for v in vals]):.3f}" for k in KS))


if __name__ == "__main__":
    main()
