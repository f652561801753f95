"""python -m bench.experiments.lmefuse: fusion rules for the LongMemEval dev questions, replayed offline.

For every question of the stores `python -m bench.experiments.lmegrid` keeps, this reads
each active memory's cosine similarity to the question, its BM25 share (as
brain.search scores it: brain.lexical_terms' words and idf, k1 1.2, b 0.75,
context words at 0.5), whether the lexical leg can find it (it holds a
searched word), its speaker, thread, position and parts. The candidate pool
is search's: the vector leg's best 100 by similarity and the lexical leg's
best 100 by BM25. Then it ranks each pool by a fusion rule with search's
ordering rules replayed (assistant turns x assistant_turn_weight, the parts
of one text as one hit, a thread's n-th hit x search_thread_decay^(n-1))
and reports hybrid turn@10. With the stored maps it gives what the bench
gives (the first line printed), so a rule can be judged before it is
written in SQL:

    python -m bench.experiments.lmefuse                 # the stored maps: hybrid, vector, lexical
    python -m bench.experiments.lmefuse --grid          # other fusion rules
    python -m bench.experiments.lmefuse --fit           # refit the maps by logistic regression

The maps and weights are read from the tree's defaults (brain.setting_defaults
and the space's relevance_center / relevance_slope).
"""

from __future__ import annotations

import pickle
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bench import latency
from bench.experiments import parser
from bench.experiments.lmegrid import DB, _default_dir
from bench.server import BenchServer
from pybrain import db

FEATURES = """
WITH t AS (SELECT * FROM brain.lexical_terms(%(q)s)),
w AS (SELECT array_agg((quote_literal(lexeme) || ':AB')::tsquery) AS ab,
             array_agg((quote_literal(lexeme) || ':C')::tsquery) AS c, array_agg(idf) AS idf,
             sum(idf) AS idf_sum,
             nullif(string_agg(quote_literal(lexeme), ' | ') FILTER (WHERE searched), '')::tsquery AS tsq
      FROM t),
corp AS (SELECT greatest(sum(lexemes)::float8 / nullif(sum(docs), 0), 1) AS avglen
         FROM brain.lexical_corpus WHERE workspace_id = %(ws)s),
lex AS (
    SELECT m.memory_id, bool_or(m.tsv @@ w.tsq) AS found, max(w.idf_sum) AS idf_sum,
           sum(u.idf * u.tf * 2.2
               / (u.tf + 1.2 * (0.25 + 0.75 * coalesce(m.lexical_len, 0) / corp.avglen))) AS bm25
    FROM brain.memory m CROSS JOIN w CROSS JOIN corp
    CROSS JOIN LATERAL (
        SELECT x.idf, CASE WHEN m.tsv @@ x.ab THEN 1 WHEN m.tsv @@ x.c THEN 0.5 ELSE 0 END AS tf
        FROM unnest(w.ab, w.c, w.idf) AS x(ab, c, idf)) AS u
    WHERE m.workspace_id = %(ws)s AND m.state = 'active' AND u.tf > 0
    GROUP BY m.memory_id)
SELECT m.memory_id, 1 - (e.embedding <=> %(v)s::vector) AS sim, coalesce(l.bm25, 0),
       coalesce(l.bm25 / nullif(l.idf_sum, 0), 0), coalesce(l.found, false),
       coalesce(m.metadata->>'speaker', m.metadata->>'role'), m.origin, m.thread, m.position,
       CASE WHEN m.metadata ? 'chunks' THEN m.source_ref END
FROM brain.memory m
JOIN brain.embedding e ON e.workspace_id = m.workspace_id AND e.memory_id = m.memory_id
LEFT JOIN lex l ON l.memory_id = m.memory_id
WHERE m.workspace_id = %(ws)s AND m.state = 'active'
"""

MAPS = """
SELECT s.relevance_center, s.relevance_slope, (d->>'relevance_lexical_center')::float8,
       (d->>'relevance_lexical_slope')::float8, (d->>'relevance_hybrid_bias')::float8,
       (d->>'relevance_hybrid_vector')::float8, (d->>'relevance_hybrid_lexical')::float8,
       (d->>'search_thread_decay')::float8, (d->>'assistant_turn_weight')::float8
FROM brain.embedding_space s, brain.setting_defaults() AS d
WHERE s.workspace_id = %s AND s.state = 'active'
"""


def sig(z: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-np.clip(z, -50, 50)))


class Replay:
    def __init__(self, data_dir: Path) -> None:
        with (data_dir / "questions.pkl").open("rb") as f:
            self.meta = pickle.load(f)["questions"]
        server = BenchServer(data_dir)
        try:
            with server.connect(DB) as conn:
                db.migrate(conn)  # the tree's SQL and defaults
                self.rows = []
                for m in self.meta:
                    latency.prepare(conn, m["workspace"])
                    v = "[" + ",".join(str(float(x)) for x in m["vector"]) + "]"
                    self.rows.append(
                        conn.execute(FEATURES, {"q": m["question"], "ws": m["workspace"], "v": v}).fetchall()
                    )
                maps = conn.execute(MAPS, (self.meta[0]["workspace"],)).fetchone()
        finally:
            server.close()
        self.maps = dict(zip(("c", "s", "lc", "ls", "bias", "wv", "wl"), maps[:7], strict=True))
        self.decay, self.assistant = maps[7], maps[8]

    def pool(self, rows: list[tuple], mode: str) -> list[int]:
        vector, lexical = self.pools(rows)
        return sorted(vector | lexical if mode == "hybrid" else vector if mode == "vector" else lexical)

    def pools(self, rows: list[tuple]) -> tuple[set[int], set[int]]:
        sims = np.array([r[1] for r in rows])
        bm25 = np.array([r[2] for r in rows])
        vector = set(np.argsort(-sims)[:100].tolist())
        lexical = [i for i in np.argsort(-bm25).tolist() if rows[i][4]][:100]
        return vector, set(lexical)

    def order(self, rows: list[tuple], score: np.ndarray) -> list[int]:
        """search's ordering rules over the scored pool: memory ids, best first."""
        items = []
        for r, s in zip(rows, score, strict=True):
            w = self.assistant if r[6] in ("observed", "artifact") and r[5] == "assistant" else 1.0
            items.append((r[0], float(s) * w, r[7], r[8], r[9]))
        part_place: dict[int, int] = {}
        parts: dict[tuple, list] = defaultdict(list)
        for it in items:
            if it[4] is not None:
                parts[(it[4], it[3])].append(it)
        for group in parts.values():
            for i, it in enumerate(sorted(group, key=lambda x: -x[1]), 1):
                part_place[it[0]] = i
        thread_place: dict[int, int] = {}
        threads: dict[Any, list] = defaultdict(list)
        for it in items:
            threads[it[2]].append(it)
        for thread, group in threads.items():
            group.sort(key=lambda x: (part_place.get(x[0], 1) > 1, -x[1]))
            for i, it in enumerate(group, 1):
                thread_place[it[0]] = i if thread is not None else 1
        items.sort(
            key=lambda x: (part_place.get(x[0], 1) > 1, -(x[1] * self.decay ** (thread_place[x[0]] - 1)))
        )
        return [it[0] for it in items]

    def turn_at_10(self, rule: Callable[[np.ndarray, np.ndarray], np.ndarray], mode: str = "hybrid") -> float:
        out = []
        for rows, m in zip(self.rows, self.meta, strict=True):
            if not m["evidence_turns"]:
                continue
            sub = [rows[i] for i in self.pool(rows, mode)]
            ids = self.order(sub, rule(np.array([r[1] for r in sub]), np.array([r[3] for r in sub])))
            turns = set().union(*(m["turns_of"].get(i, set()) for i in ids[:10]))
            out.append(len(turns & m["evidence_turns"]) / len(m["evidence_turns"]))
        return round(float(np.mean(out)), 3)

    def hybrid(self, maps: dict[str, float]) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
        def rule(sim: np.ndarray, share: np.ndarray) -> np.ndarray:
            ev, el = maps["s"] * (sim - maps["c"]), maps["ls"] * (share - maps["lc"])
            return sig(maps["bias"] + maps["wv"] * ev + maps["wl"] * el)

        return rule

    def labelled(self, mode: str) -> tuple[np.ndarray, np.ndarray]:
        """(similarity, share) of every pooled candidate, and whether it holds an evidence turn."""
        x, y = [], []
        for rows, m in zip(self.rows, self.meta, strict=True):
            vector, lexical = self.pools(rows)
            for i in sorted(
                vector | lexical if mode == "hybrid" else vector if mode == "vector" else lexical
            ):
                x.append((rows[i][1], rows[i][3]))
                y.append(bool(m["turns_of"].get(rows[i][0], set()) & m["evidence_turns"]))
        return np.array(x), np.array(y, dtype=float)


def logistic(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Weights of a logistic regression (Newton's method), x with its constant column."""
    w = np.zeros(x.shape[1])
    for _ in range(100):
        p = sig(x @ w)
        hessian = -(x * (p * (1 - p))[:, None]).T @ x - 1e-6 * np.eye(x.shape[1])
        w = w - np.linalg.solve(hessian, x.T @ (y - p))
    return w


def main(argv: list[str] | None = None) -> None:
    p = parser(__spec__.name, __doc__)
    p.add_argument(
        "--data-dir", type=Path, default=_default_dir(), help="the stores of bench.experiments.lmegrid"
    )
    p.add_argument("--grid", action="store_true", help="hybrid turn@10 under other fusion rules")
    p.add_argument("--fit", action="store_true", help="refit the hybrid weights (and show the leg maps' fit)")
    args = p.parse_args(argv)
    r = Replay(args.data_dir)
    m = r.maps
    print(
        f"stored maps: hybrid turn@10 {r.turn_at_10(r.hybrid(m))},"
        f" vector {r.turn_at_10(lambda s, h: sig(m['s'] * (s - m['c'])), 'vector')},"
        f" lexical {r.turn_at_10(lambda s, h: sig(m['ls'] * (h - m['lc'])), 'lexical')}"
    )
    if args.grid:
        pv = lambda s: sig(m["s"] * (s - m["c"]))  # noqa: E731
        pl = lambda h: sig(m["ls"] * (h - m["lc"]))  # noqa: E731
        rules: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {}
        for wl in (0, 0.2, 0.42, 0.7, 1.0, 1.5, 2.5):
            rules[f"log-odds map, w_lex {wl}"] = r.hybrid(m | {"wl": wl})
        rules["noisy-or of the legs"] = lambda s, h: 1 - (1 - pv(s)) * (1 - pl(h))
        rules["max of the legs"] = lambda s, h: np.maximum(pv(s), pl(h))
        for k in (10, 30, 60):
            rules[f"reciprocal rank fusion, k {k}"] = lambda s, h, k=k: (
                1 / (k + np.argsort(np.argsort(-s)) + 1) + 1 / (k + np.argsort(np.argsort(-h)) + 1)
            )
        for name, rule in rules.items():
            print(f"  {r.turn_at_10(rule):.3f}  {name}")
    if args.fit:
        x, y = r.labelled("hybrid")
        ev, el = m["s"] * (x[:, 0] - m["c"]), m["ls"] * (x[:, 1] - m["lc"])
        w = logistic(np.column_stack([np.ones(len(y)), ev, el]), y)
        fitted = m | {"bias": w[0], "wv": w[1], "wl": w[2]}
        print(
            f"hybrid weights fitted on {len(y)} candidates ({int(y.sum())} evidence): bias {w[0]:.3f},"
            f" w_vec {w[1]:.3f}, w_lex {w[2]:.3f}; hybrid turn@10 {r.turn_at_10(r.hybrid(fitted))}"
        )
        for mode, col in (("vector", 0), ("lexical", 1)):
            x, y = r.labelled(mode)
            a, b = logistic(np.column_stack([np.ones(len(y)), x[:, col]]), y)
            print(f"  {mode} map fitted: center {-a / b:.3f}, slope {b:.2f} ({len(y)} candidates)")


if __name__ == "__main__":
    main()
