"""Stored conversations are found as well a year later: LongMemEval dev
conversations (tests/data) observed, then searched with the clock moved +30,
+90 and +365 days after brain.maintain at each time. The bench runs the same
check on the dev set with MiniLM vectors (docs/benchmarks.md)."""

from __future__ import annotations

import datetime as dt
import gzip
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from helpers import scalar
from test_index import index_all

from pybrain.embed import get_embedder

DATA = Path(__file__).parent / "data" / "longmemeval_dev_excerpt.json.gz"
MODES = ("vector", "lexical", "hybrid")


@pytest.fixture(scope="module")
def questions() -> list[dict[str, Any]]:
    with gzip.open(DATA, "rt", encoding="utf-8") as f:
        return json.load(f)


def store(brain, conn, questions: list[dict[str, Any]]) -> dict[int, set]:
    """Every session once, one memory per turn ("role: content"), in batches of 100 as the
    bench sends them; then brain.index_vectors as `brain worker` runs it. The turns
    (session id, turn number) each memory holds."""
    turns: dict[tuple, str] = {}
    for q in questions:
        for sid, session in zip(q["haystack_session_ids"], q["haystack_sessions"], strict=True):
            for i, t in enumerate(session):
                turns[(sid, i)] = f"{t['role']}: {t['content']}"
    keys = list(turns)
    turns_of: dict[int, set] = defaultdict(set)
    for start in range(0, len(keys), 100):
        batch = keys[start : start + 100]
        out = brain.observe(
            [turns[k] for k in batch],
            metadata=[{"session": sid, "turn": i} for sid, i in batch],
            source_system="chat",
        )
        for r in out:
            if r["memory_id"] is not None and r["action"] in ("created", "updated", "skipped"):
                turns_of[r["memory_id"]].add(batch[r["item"] - 1])
    index_all(conn)
    for folded, kept in conn.execute(
        "SELECT memory_id, replaced_by FROM brain.memory"
        " WHERE state = 'tombstoned' AND replaced_by IS NOT NULL"
    ).fetchall():
        turns_of[kept] |= turns_of.pop(folded, set())
    return turns_of


def recall(conn, questions: list[dict[str, Any]], turns_of: dict[int, set], at: dt.datetime) -> dict:
    """Per mode: session any@10 and turn@10 averaged over the questions, and the top-10 ids."""
    embed = get_embedder("hash").embed
    out: dict[str, Any] = {}
    for mode in MODES:
        any10, turn10, ids = [], [], []
        for q in questions:
            found = [
                r[0]
                for r in conn.execute(
                    "SELECT id FROM brain.search(query => %s, query_embedding => %s, max_results => 10,"
                    " now => %s, min_relevance => 0)",
                    (
                        "" if mode == "vector" else q["question"],
                        None if mode == "lexical" else embed([q["question"]])[0],
                        at,
                    ),
                )
            ]
            hits = set().union(*(turns_of.get(i, set()) for i in found)) if found else set()
            evidence = {
                (sid, i)
                for sid, session in zip(q["haystack_session_ids"], q["haystack_sessions"], strict=True)
                for i, t in enumerate(session)
                if t.get("has_answer")
            }
            any10.append(bool({sid for sid, _ in hits} & set(q["answer_session_ids"])))
            turn10.append(len(hits & evidence) / len(evidence))
            ids.append(found)
        out[mode] = {
            "session_any@10": sum(any10) / len(any10),
            "turn@10": sum(turn10) / len(turn10),
            "ids": ids,
        }
    return out


def test_dev_conversations_are_found_as_well_a_year_later(brain, conn, questions) -> None:
    turns_of = store(brain, conn, questions)
    assert len(set().union(*turns_of.values())) == 189, "every turn is held by a memory"
    base = dt.datetime.now(dt.UTC)
    conn.execute("SELECT brain.maintain(now => %s)", (base,))
    fresh = recall(conn, questions, turns_of, base)
    assert fresh["hybrid"]["session_any@10"] >= 0.75, "the fresh store finds the evidence"
    assert fresh["hybrid"]["turn@10"] > 0
    for days in (30, 90, 365):
        later = base + dt.timedelta(days=days)
        conn.execute("SELECT brain.maintain(now => %s)", (later,))
        assert scalar(conn, "SELECT count(*) FROM brain.memory WHERE dormant_after <= %s", (later,)) == 0
        assert recall(conn, questions, turns_of, later) == fresh, f"the same top 10 {days} days later"

    # Records that decay like beliefs are all dormant a year on, and still found.
    conn.execute("SELECT brain.set_setting('episodic_decay', 'true')")
    later = base + dt.timedelta(days=365)
    conn.execute("SELECT brain.maintain(now => %s)", (later,))
    active = scalar(conn, "SELECT count(*) FROM brain.memory WHERE state = 'active'")
    dormant = "SELECT count(*) FROM brain.memory WHERE state = 'active' AND dormant_after <= %s"
    assert scalar(conn, dormant, (later,)) == active
    decayed = recall(conn, questions, turns_of, later)
    for mode in MODES:
        assert decayed[mode]["session_any@10"] == fresh[mode]["session_any@10"], mode
        assert decayed[mode]["turn@10"] == fresh[mode]["turn@10"], mode
