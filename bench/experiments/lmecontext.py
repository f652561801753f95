"""python -m bench.experiments.lmecontext: are conversation turns embedded with their context found better?

On the stores `python -m bench.experiments.lmegrid` keeps, for every --every-th dev
question: turn@10 of the vector, lexical and hybrid searches as stored (each
turn embedded as its own text), then again with every memory of those
questions embedded as its text followed by its context (brain.memory.context:
speaker and date, and the start of the turns before and after it, as
brain.observe_batch indexes it for the lexical leg), in one transaction
that is rolled back, so the stores stay as they were. The new vectors are
cached like the others (bench/embcache.py): the first run embeds them.

    python -m bench.experiments.lmecontext --every 3
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

from bench import latency
from bench import longmemeval as lme
from bench.embcache import EmbeddingCache
from bench.experiments import parser
from bench.experiments.lmegrid import DB, _default_dir
from bench.server import BenchServer
from bench.util import log


def _recall(conn: psycopg.Connection, questions: list[dict[str, Any]]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {mode: [] for mode in lme.MODES}
    for m in questions:
        latency.prepare(conn, m["workspace"])
        for mode in lme.MODES:
            r = latency.timed_search(
                conn,
                "" if mode == "vector" else m["question"],
                None if mode == "lexical" else m["vector"],
                max_results=10,
            )
            got = lme._score(r["ids"], m["turns_of"], m["evidence_sessions"], m["evidence_turns"])
            out[mode].append(got.get("turn@10", 0.0))
    return out


def main(argv: list[str] | None = None) -> None:
    p = parser(__spec__.name, __doc__)
    p.add_argument(
        "--data-dir", type=Path, default=_default_dir(), help="the stores of bench.experiments.lmegrid"
    )
    p.add_argument("--every", type=int, default=3, help="every n-th dev question (default 3: 20 of 58)")
    args = p.parse_args(argv)
    with (args.data_dir / "questions.pkl").open("rb") as f:
        questions = pickle.load(f)["questions"][:: args.every]
    cache = EmbeddingCache()
    server = BenchServer(args.data_dir)
    try:
        with server.connect(DB) as conn:
            conn.autocommit = False
            before = _recall(conn, questions)
            todo = []
            for m in questions:
                latency.prepare(conn, m["workspace"])
                todo += [
                    (m["workspace"], memory_id, text + "\n\n" + context if context else text)
                    for memory_id, text, context in conn.execute(
                        "SELECT m.memory_id, brain.embedding_input(m.headline, m.body), m.context"
                        " FROM brain.memory m JOIN brain.embedding e USING (workspace_id, memory_id)"
                        " WHERE m.workspace_id = %s",
                        (m["workspace"],),
                    ).fetchall()
                ]
            cache.ensure([t for _, _, t in todo], "turns with their context")
            vectors = cache.get([t for _, _, t in todo])
            with conn.cursor() as cur:
                cur.executemany(
                    "UPDATE brain.embedding SET embedding = %s::vector"
                    " WHERE workspace_id = %s AND memory_id = %s",
                    [
                        (str([float(x) for x in v]), ws, mid)
                        for (ws, mid, _), v in zip(todo, vectors, strict=True)
                    ],
                )
            after = _recall(conn, questions)
            conn.rollback()
        evidence = sum(len(m["evidence_turns"]) for m in questions)
        log(f"  {len(questions)} questions, {evidence} evidence turns, {len(todo):,} memories; turn@10:")
        for mode in lme.MODES:
            d = np.array(after[mode]) - np.array(before[mode])
            log(
                f"  {mode:8} as stored {np.mean(before[mode]):.3f}, with context {np.mean(after[mode]):.3f}"
                f" ({int((d > 0).sum())} questions better, {int((d < 0).sum())} worse)"
            )
    finally:
        server.close()


if __name__ == "__main__":
    main()
