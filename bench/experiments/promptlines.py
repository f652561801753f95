"""python -m bench.experiments.promptlines: what each line the prompt hook could show is made of.

The continuity replay (bench/continuity.py) lives through each dev question's
haystack as Claude Code sessions; then, on that store, the question and the
off-topic prompts it asks are searched as the prompt hook searches
(`brain.search`, the prompt's text and its MiniLM vector, twice the hook's
lines, `min_relevance` 0 so that the verdict's tail is seen too). Each result
is described by what search returns (its verdict, relevance, similarity, the
legs' places) and by the query's words (brain._lexical_terms: each lexeme, how
many memories hold it, its idf) that the result's text vector holds; a result
is evidence when it, or the reply the hook would show in its place
(brain._turn_answer), holds an evidence turn. The hook's own context is kept
beside it. The rows go to a pickle (`--output`), so that a rule for which lines
to show can be judged offline on every question before it is written in SQL:

    python -m bench.experiments.promptlines --output /tmp/promptlines.pkl
"""

from __future__ import annotations

import pickle
import tempfile
from pathlib import Path
from typing import Any

import psycopg

from bench import continuity, latency, offtopic
from bench.embcache import EmbeddingCache
from bench.experiments import parser
from bench.longmemeval import load_questions
from bench.server import BenchServer
from bench.util import log

POOL = 10

TERMS = """
SELECT t.lexeme, t.docs, t.idf, t.searched, coalesce(t.grp, ARRAY[t.lexeme])
FROM brain._lexical_terms(%(q)s, %(ws)s, brain._settings(),
                          (SELECT coalesce(sum(c.docs), 0) FROM brain.lexical_corpus c
                           WHERE c.workspace_id = %(ws)s)) AS t
"""

HITS = """
SELECT s.id, s.kind, s.verdict, s.relevance, s.similarity, s.vector_rank, s.lexical_rank,
       s.score, s.newer_related, s.neighbour_of, m.source_ref, m.metadata->>'role',
       (brain._turn_answer(%(ws)s, s.id)).answer_id,
       ARRAY(SELECT g.n FROM unnest(%(tsq)s::text[]) WITH ORDINALITY AS g(q, n)
             WHERE m.tsv @@ g.q::tsquery) AS held,
       left(coalesce(nullif(m.body, ''), m.headline), 160)
FROM brain.search(query => %(q)s, query_embedding => %(v)s, max_results => %(n)s, min_relevance => 0) AS s
JOIN brain.memory m ON m.workspace_id = %(ws)s AND m.memory_id = s.id
"""


def features(conn: psycopg.Connection, ws: int, query: str, vector: Any, n: int) -> dict[str, Any]:
    terms = conn.execute(TERMS, {"q": query, "ws": ws}).fetchall()
    tsq = [conn.execute("SELECT brain.word_tsquery(%s)::text", (grp,)).fetchone()[0] for *_, grp in terms]
    hits = conn.execute(
        HITS, {"q": query, "v": latency._vec(vector), "n": n, "ws": ws, "tsq": tsq}
    ).fetchall()
    return {
        "terms": [(t[0], t[1], t[2], t[3]) for t in terms],
        "hits": [
            {
                "id": h[0],
                "kind": h[1],
                "verdict": h[2],
                "relevance": h[3],
                "similarity": h[4],
                "vector_rank": h[5],
                "lexical_rank": h[6],
                "score": h[7],
                "newer_related": h[8],
                "neighbour_of": h[9],
                "source_ref": h[10],
                "role": h[11],
                "answer_id": h[12],
                "held": [i - 1 for i in h[13]],
                "text": h[14],
            }
            for h in hits
        ],
    }


def main(argv: list[str] | None = None) -> int:
    p = parser("bench.experiments.promptlines", __doc__)
    p.add_argument("--questions", type=int, default=None)
    p.add_argument(
        "--only", default=None, help="these questions only (question ids, comma-separated), to look at a few"
    )
    p.add_argument("--output", type=Path, default=Path("/tmp/promptlines.pkl"))
    args = p.parse_args(argv)
    cache = EmbeddingCache()
    questions = load_questions(args.questions)
    if args.only:
        questions = [q for q in questions if q["question_id"] in args.only.split(",")]
    cache.ensure([q["question"] for q in questions], "questions")
    cache.ensure(offtopic.QUERIES, "off-topic prompts")
    server = BenchServer()
    rows: list[dict[str, Any]] = []
    try:
        server.create_database(continuity.DB)
        with (
            server.connect(continuity.DB) as conn,
            tempfile.TemporaryDirectory(prefix="pybrain-lines-") as tmp,
        ):
            for n, q in enumerate(questions, 1):
                folder = Path(tmp) / q["question_id"]
                folder.mkdir()
                off = [
                    offtopic.QUERIES[((n - 1) * continuity.OFFTOPIC_PER_QUESTION + i) % len(offtopic.QUERIES)]
                    for i in range(continuity.OFFTOPIC_PER_QUESTION)
                ]
                result = continuity.replay_question(conn, cache, q, folder, offtopic_prompts=off)
                (ws,) = conn.execute("SELECT brain.current_workspace()").fetchone()
                turns_of = continuity._turns_of(conn, ws)
                keys = {
                    (sid, i)
                    for sid, session in zip(q["haystack_session_ids"], q["haystack_sessions"], strict=True)
                    for i, t in enumerate(session)
                    if t.get("has_answer")
                }
                asked = features(conn, ws, q["question"], cache.get([q["question"]])[0], POOL * 2)
                for h in asked["hits"]:
                    own = turns_of.get(h["id"], set()) & keys
                    answer = turns_of.get(h["answer_id"], set()) & keys if h["answer_id"] else set()
                    h["evidence"] = sorted(own | answer)
                rows.append(
                    {
                        "question_id": q["question_id"],
                        "type": q["question_type"],
                        "question": q["question"],
                        "evidence_turns": len(keys),
                        "result": result,
                        "asked": asked,
                        "offtopic": [features(conn, ws, o, cache.get([o])[0], POOL * 2) for o in off],
                    }
                )
                log(f"  {n}/{len(questions)} {q['question_type']}: injected {result['injected']}")
                args.output.write_bytes(pickle.dumps(rows))
    finally:
        server.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
