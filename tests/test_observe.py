"""Observed memories: batches, derived headlines, chunks, and their dedup rules."""

from __future__ import annotations

import pytest
from helpers import raises_br, rows, scalar, unit


def observe(conn, texts: list[str], **kwargs) -> list[dict]:
    args = {"texts": texts, **kwargs}
    named = ", ".join(f"{k} => %({k})s" for k in args)
    return rows(conn, f"SELECT * FROM brain.observe_batch({named})", args)


def test_batch_with_derived_headlines(conn) -> None:
    out = observe(
        conn,
        [
            "User: the deploy failed with exit code 137 after the image pull step finished",
            "Assistant: that is the OOM killer",
        ],
        source_system="chat",
    )
    assert [r["action"] for r in out] == ["created", "created"]
    heads = [r[0] for r in conn.execute("SELECT headline FROM brain.memory ORDER BY memory_id")]
    assert heads == [
        "User: the deploy failed with exit code 137 after the image pull …",
        "Assistant: that is the OOM killer",
    ]
    m = rows(conn, "SELECT origin, category, source_system, body FROM brain.memory ORDER BY memory_id")
    assert {r["origin"] for r in m} == {"observed"} and {r["category"] for r in m} == {"episodic"}
    assert m[1]["body"] == "", "a text that fits the headline is not repeated as a body"


def test_long_text_is_chunked_with_a_shared_source_ref(conn) -> None:
    text = " ".join(f"Sentence number {i} talks about the ingestion pipeline." for i in range(80))
    out = observe(conn, [text], check_only=True)
    assert [r["chunk"] for r in out] == [1, 2, 3] and {r["action"] for r in out} == {"valid"}
    assert scalar(conn, "SELECT count(*) FROM brain.memory") == 0
    out = observe(conn, [text], source_refs=["doc-7"])
    stored = rows(conn, "SELECT headline, source_ref, metadata FROM brain.memory ORDER BY memory_id")
    assert [s["source_ref"] for s in stored] == ["doc-7"] * 3
    assert [s["metadata"] for s in stored] == [{"chunk": i, "chunks": 3} for i in (1, 2, 3)]
    assert stored[0]["headline"].endswith("(part 1/3)")
    assert all(
        scalar(
            conn,
            "SELECT brain.word_count(body) <= 300 FROM brain.memory WHERE memory_id = %s",
            (r["memory_id"],),
        )
        for r in out
    )


def test_a_refused_item_is_reported_and_the_rest_stored(conn) -> None:
    texts = ["first event", "the key is AKIAIOSFODNN7EXAMPLE", "third event"]
    vectors = [unit(1.0, axis=1), unit(0.1, axis=2)]  # one per valid chunk, as check_only lists them
    checked = observe(conn, texts, check_only=True)
    assert [r["action"] for r in checked] == ["valid", "rejected", "valid"]
    out = observe(conn, texts, embeddings=vectors)
    assert [(r["item"], r["action"], r["error_code"]) for r in out] == [
        (1, "created", None),
        (2, "rejected", "BR007"),
        (3, "created", None),
    ]
    sims = rows(
        conn,
        "SELECT m.headline, (e.embedding <=> %s::vector) AS d FROM brain.embedding e "
        "JOIN brain.memory m USING (workspace_id, memory_id) ORDER BY m.memory_id",
        (str(unit(0.1, axis=2)),),
    )
    assert [s["headline"] for s in sims] == ["first event", "third event"]
    assert sims[1]["d"] == pytest.approx(0, abs=1e-6), "the third text got the second vector"


def test_observed_rows_dedup_only_exact_or_near_identical(conn) -> None:
    observe(conn, ["build finished"], embeddings=[unit(1.0)])
    exact = observe(conn, ["Build   finished"], embeddings=[unit(0.5)])
    related = observe(conn, ["build finished again"], embeddings=[unit(0.8)])
    near = observe(conn, ["build finished!"], embeddings=[unit(0.95)])
    assert exact[0]["action"] == "skipped" and exact[0]["similarity"] == 1
    assert related[0]["action"] == "created", "related observations are not refused"
    assert (near[0]["action"], near[0]["duplicate_of"]) == ("updated", 1)


def test_embedding_rows_must_match_the_chunks(conn) -> None:
    with raises_br("BR012"):
        observe(conn, ["a", "b"], embeddings=[unit(1.0)])
    with raises_br("BR012"):
        observe(conn, ["a"], embeddings=[unit(1.0), unit(0.5)])
    assert scalar(conn, "SELECT count(*) FROM brain.memory") == 0


def test_observe_refuses_authored_origins(conn) -> None:
    with raises_br("BR009"):
        observe(conn, ["x"], origin="explicit")


def test_a_long_observed_text_is_embedded_once(conn) -> None:
    text = "User: " + " ".join(f"word{i}" for i in range(30))
    (checked,) = observe(conn, [text], check_only=True)
    assert checked["embedding_input"] == text


def test_a_refused_last_item_needs_no_embedding_row(conn) -> None:
    texts = ["first event", "third event", "the key is AKIAIOSFODNN7EXAMPLE"]
    out = observe(conn, texts, embeddings=[unit(1.0, axis=1), unit(0.1, axis=2)])
    assert [(r["item"], r["action"]) for r in out] == [(1, "created"), (2, "created"), (3, "rejected")]
    with raises_br("BR012"):
        observe(conn, ["fourth event", "fifth event"], embeddings=[unit(0.3, axis=3)])
