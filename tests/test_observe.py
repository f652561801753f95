"""Observed memories: batches, derived headlines, chunks, and their dedup rules."""

from __future__ import annotations

import threading

import psycopg
import pytest
from helpers import call_rows, raises_br, rows, scalar, unit
from psycopg.types.json import Jsonb as psycopg_json


def observe(conn, texts: list[str], **kwargs) -> list[dict]:
    return call_rows(conn, "observe_batch", texts=texts, **kwargs)


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
    n = scalar(conn, "SELECT count(*) FROM brain.chunk_text(%s, 256)", (text,))
    assert n > 2
    out = observe(conn, [text], check_only=True)
    assert [r["chunk"] for r in out] == list(range(1, n + 1)) and {r["action"] for r in out} == {"valid"}
    assert scalar(conn, "SELECT count(*) FROM brain.memory") == 0
    out = observe(conn, [text], source_refs=["doc-7"])
    stored = rows(conn, "SELECT headline, body, source_ref, metadata FROM brain.memory ORDER BY memory_id")
    assert [s["source_ref"] for s in stored] == ["doc-7"] * n
    assert [s["metadata"] for s in stored] == [{"chunk": i, "chunks": n} for i in range(1, n + 1)]
    # each chunk is headed by its own start, not by part 1 of the text
    assert stored[0]["headline"].startswith("Sentence number 0 talks")
    assert [s["headline"].split()[2] for s in stored] == [s["body"].split()[2] for s in stored]
    assert len({s["headline"] for s in stored}) == n
    assert all(s["body"].startswith(s["headline"].removesuffix(" …")) for s in stored)
    assert all(
        scalar(
            conn,
            "SELECT brain.wordpiece_tokens(brain.embedding_input(headline, body)) <= 256"
            " FROM brain.memory WHERE memory_id = %s",
            (r["memory_id"],),
        )
        for r in out
    )


def test_a_refused_item_is_reported_and_the_rest_stored(conn) -> None:
    texts = ["first event", "second event", "third event"]
    refs = [None, "key AKIAIOSFODNN7EXAMPLE", None]  # a secret in a source_ref refuses its item
    vectors = [unit(1.0, axis=1), unit(0.1, axis=2)]  # one per valid chunk, as check_only lists them
    checked = observe(conn, texts, source_refs=refs, check_only=True)
    assert [r["action"] for r in checked] == ["valid", "rejected", "valid"]
    out = observe(conn, texts, source_refs=refs, embeddings=vectors)
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
    # an observation is a record: the earlier text stays, the near-identical one folds into it
    assert (near[0]["action"], near[0]["duplicate_of"]) == ("skipped", 1)
    assert scalar(conn, "SELECT headline FROM brain.memory WHERE memory_id = 1") == "build finished"


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
    texts = ["first event", "third event", "fourth event"]
    refs = [None, None, "key AKIAIOSFODNN7EXAMPLE"]
    out = observe(conn, texts, source_refs=refs, embeddings=[unit(1.0, axis=1), unit(0.1, axis=2)])
    assert [(r["item"], r["action"]) for r in out] == [(1, "created"), (2, "created"), (3, "rejected")]
    with raises_br("BR012"):
        observe(conn, ["fourth event", "fifth event"], embeddings=[unit(0.3, axis=3)])


def test_a_batch_dedups_against_itself(conn) -> None:
    texts = ["build finished", "Build   finished", "build finished, all green", "deploy started"]
    vectors = [unit(1.0), unit(1.0), unit(0.95), unit(0.0, axis=3)]
    out = observe(conn, texts, embeddings=vectors)
    first = out[0]["memory_id"]
    assert [(r["action"], r["duplicate_of"]) for r in out] == [
        ("created", None),
        ("skipped", first),
        ("skipped", first),
        ("created", None),
    ]
    assert out[1]["similarity"] == 1 and out[2]["similarity"] == pytest.approx(0.95, abs=1e-4)
    active = rows(conn, "SELECT memory_id, headline FROM brain.memory WHERE state = 'active' ORDER BY 1")
    assert active == [
        {"memory_id": first, "headline": "build finished"},
        {"memory_id": out[3]["memory_id"], "headline": "deploy started"},
    ], "an observation's text is a record: the earlier one is never rewritten by a longer one"
    (folded,) = rows(conn, "SELECT memory_id, replaced_by FROM brain.memory WHERE state = 'tombstoned'")
    assert folded["replaced_by"] == first, "the folded row stays, pointing at the memory that holds it"
    (fold,) = rows(conn, "SELECT * FROM brain.memory_fold")
    assert (fold["memory_id"], fold["folded_memory_id"], fold["displaced"], fold["headline"]) == (
        first,
        folded["memory_id"],
        False,
        "build finished, all green",
    ), "the later text is kept as a fold record"
    audit = rows(conn, "SELECT memory_id, action FROM brain.audit ORDER BY audit_id")
    assert audit == [
        {"memory_id": first, "action": "insert"},
        {"memory_id": folded["memory_id"], "action": "insert"},
        {"memory_id": out[3]["memory_id"], "action": "insert"},
        {"memory_id": folded["memory_id"], "action": "dedup"},
        {"memory_id": first, "action": "update"},
    ], "every row is audited as inserted, then the fold"
    stored = scalar(
        conn,
        "SELECT embedding <=> %s::vector FROM brain.embedding WHERE memory_id = %s",
        (str(unit(1.0)), first),
    )
    assert stored == pytest.approx(0, abs=1e-6), "the kept text keeps its embedding"


def test_near_identical_rows_of_a_batch_fold_along_a_chain(conn) -> None:
    (kept,) = observe(conn, ["disk almost full on db-1"], embeddings=[unit(1.0)])
    out = observe(
        conn,
        ["disk almost full on db-1 again", "disk almost full on db-1 again, still"],
        embeddings=[unit(0.96), unit(0.97)],
    )
    assert [(r["action"], r["memory_id"], r["duplicate_of"]) for r in out] == [
        ("skipped", kept["memory_id"], kept["memory_id"]),
        ("skipped", kept["memory_id"], kept["memory_id"]),
    ]
    assert rows(conn, "SELECT headline FROM brain.memory WHERE state = 'active'") == [
        {"headline": "disk almost full on db-1"}
    ], "the first observation's text stays as it was written"
    actions = [r[0] for r in conn.execute("SELECT action FROM brain.audit ORDER BY audit_id")]
    assert actions == ["insert", "insert", "insert", "dedup", "update", "dedup", "update"]
    folds = rows(conn, "SELECT headline, displaced FROM brain.memory_fold ORDER BY fold_id")
    assert folds == [
        {"headline": "disk almost full on db-1 again", "displaced": False},
        {"headline": "disk almost full on db-1 again, still", "displaced": False},
    ], "each later text is kept"


def test_observed_incidents_skip_only_exact_duplicates(conn) -> None:
    out = observe(
        conn,
        ["pod evicted", "pod evicted!", "Pod evicted"],
        kind="incident",
        embeddings=[unit(1.0), unit(0.99), unit(1.0)],
    )
    assert [r["action"] for r in out] == ["created", "created", "skipped"]
    assert scalar(conn, "SELECT count(*) FROM brain.incident") == 2


def test_a_batch_without_embeddings_is_queued(conn) -> None:
    out = observe(conn, ["first queued event", "second queued event", "first queued event"])
    assert [r["action"] for r in out] == ["created", "created", "skipped"]
    assert scalar(conn, "SELECT count(*) FROM brain.pending_embeddings()") == 2
    assert scalar(conn, "SELECT bool_and(dedup_pending) FROM brain.memory")


def test_bad_embedding_values_refuse_the_batch(conn) -> None:
    with raises_br("BR012"):
        observe(conn, ["a", "b"], embeddings=[unit(1.0), [0.0] * len(unit(1.0))])
    with raises_br("BR012"):
        observe(conn, ["a"], embeddings=[[float("nan"), *unit(1.0)[1:]]])
    with raises_br("BR012"):
        observe(conn, ["a"], embeddings=[unit(1.0)[:-1]])
    assert scalar(conn, "SELECT count(*) FROM brain.memory") == 0


def test_an_item_with_metadata_that_is_not_an_object_is_rejected(conn) -> None:
    out = observe(conn, ["a", "b"], metadata=[psycopg_json([1, 2]), psycopg_json({"k": 1})])
    assert [(r["action"], r["error_code"]) for r in out] == [("rejected", "BR009"), ("created", None)]


def test_concurrent_batches_of_the_same_texts_store_each_once(conn, db_url) -> None:
    texts = [f"worker {i} finished its shard" for i in range(20)]
    vectors = [unit(0.0, axis=i + 1) for i in range(20)]  # orthogonal
    barrier = threading.Barrier(4)
    results: list[list[dict] | Exception] = [[] for _ in range(4)]

    def write(i: int) -> None:
        with psycopg.connect(db_url, autocommit=True) as c:
            barrier.wait()
            try:
                results[i] = observe(c, texts, embeddings=vectors)
            except psycopg.Error as exc:
                results[i] = exc

    threads = [threading.Thread(target=write, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    actions = sorted(r["action"] for batch in results for r in batch)  # type: ignore[union-attr]
    assert actions == ["created"] * 20 + ["skipped"] * 60
    assert scalar(conn, "SELECT count(*) FROM brain.memory WHERE state = 'active'") == 20


def test_an_observation_with_its_source_is_a_record_of_it(conn) -> None:
    """The same words from two sources (a question asked again in another session) are two
    records; the same source read again is one; a near-identical record never folds."""
    question = "User: The payouts webhook drops events under load. How did we fix this last time?"
    first = observe(conn, [question], source_refs=["s1/u1"], embeddings=[unit(1.0)])
    again = observe(conn, [question], source_refs=["s2/u7"], embeddings=[unit(1.0)])
    reread = observe(conn, [question], source_refs=["s1/u1"], embeddings=[unit(1.0)])
    longer = observe(
        conn, [question + " The logs say upstream closed."], source_refs=["s3/u2"], embeddings=[unit(0.97)]
    )
    assert [r["action"] for r in (first[0], again[0], reread[0], longer[0])] == [
        "created",
        "created",
        "skipped",
        "created",
    ]
    assert reread[0]["memory_id"] == first[0]["memory_id"]
    stored = rows(conn, "SELECT source_ref, body FROM brain.memory WHERE state = 'active' ORDER BY memory_id")
    assert [r["source_ref"] for r in stored] == ["s1/u1", "s2/u7", "s3/u2"]
    assert all(question in (r["body"] or question) for r in stored)
