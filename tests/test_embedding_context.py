"""The vector leg sees a chunk's document location: what the embedder is given for document
chunks, conversation turns and queued writes, and what it changes for search and dedup
(docs/ranking.md, "What the embedder sees")."""

from __future__ import annotations

import re
from pathlib import Path

import psycopg
import pytest
from helpers import owner_execute, rows, scalar
from psycopg.types.json import Jsonb

from pybrain.embed.hash import hash_vector
from pybrain.ingest import ingest

# An operations runbook. Its file name says what it is about; its own text never does.
RUNBOOK = """\
# Runbook

## Sizing

Each API worker keeps at most twenty sessions open to the primary database. Idle sessions
are closed after five minutes, so a quiet worker holds only the two it needs for health checks.

## Saturation

When every session of a worker is busy, a request waits up to two seconds for one to come free
and then fails with HTTP 503. The dashboard shows this as a rising wait time on the primary.

## Raising the limit

Raise the per-worker limit only together with max_connections on the primary: twenty sessions
times forty workers must stay below the server's limit, with ten left over for maintenance.

## After a failover

The standby starts with no warm sessions. Expect a minute of slow requests while workers open
new ones, and do not restart the workers: that only empties them again.

## Alerts

The on-call engineer is paged when the wait time stays above one second for five minutes, or
when more than one percent of requests fail with 503 within ten minutes.
"""

# Another document of the same tree, on another subject.
PAYMENTS = """\
# Payments

## Refunds

A refund goes back to the card it was paid with, up to the captured amount. Refunds older than
180 days go through the bank transfer path, because the card networks no longer accept them.

## Chargebacks

A chargeback freezes the payment and opens a case in the back office within a day. The case
holds the receipt, the delivery record and every message exchanged with the buyer.

## Payouts

Sellers are paid every Monday for the orders delivered the week before, less fees and any open
chargebacks. A payout that bounces is retried twice and then held for the finance team.
"""

# The same rollback steps under two headings.
DEPLOY = """\
# Deploying the shop

## Staging

Staging deploys on every merge to main. Smoke tests run against the catalogue and the
checkout, and a failure stops the pipeline before anything reaches production traffic.

### Rollback

Run the deploy job again with the previous release tag, then watch the error rate for ten
minutes. Do not delete the failed release: its logs are needed for the postmortem.

## Production

Production deploys on Tuesdays and Thursdays between ten and noon, one region at a time,
each region waiting for the one before it to stay healthy for fifteen minutes.

### Rollback

Run the deploy job again with the previous release tag, then watch the error rate for ten
minutes. Do not delete the failed release: its logs are needed for the postmortem.
"""


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "tree"
    (root / "runbooks").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "runbooks" / "connection-pool.md").write_text(RUNBOOK)
    (root / "docs" / "payments.md").write_text(PAYMENTS)
    (root / "docs" / "deploy.md").write_text(DEPLOY)
    monkeypatch.chdir(root)
    return root


def words(text: str) -> set[str]:
    """The tokens the hash embedder hashes."""
    return set(re.findall(r"\w+", text.lower()))


def vector_search(conn: psycopg.Connection, query: str, k: int = 10) -> list[dict]:
    """The vector leg alone: no query words, the query's embedding."""
    return rows(
        conn,
        "SELECT id, headline, source_ref FROM brain.search(query => '', query_embedding => %s,"
        " max_results => %s, min_relevance => 0)",
        (hash_vector(query), k),
    )


def chunks(conn: psycopg.Connection, ref: str) -> list[dict]:
    return rows(
        conn,
        "SELECT memory_id, headline, body, metadata,"
        " brain.embedding_input(headline, body) AS text_alone,"
        " brain.embedding_input(headline, body, metadata ->> 'title') AS with_title"
        " FROM brain.memory WHERE source_ref = %s AND state = 'active' ORDER BY source_chunk",
        (ref,),
    )


def test_a_chunk_is_found_by_its_document_location_alone(counting, conn, tree: Path) -> None:
    """A query whose words only the document's location holds finds the document's chunks by
    vector; the chunks' own text (what the embedder saw before) shares no word with it."""
    brain, embedder = counting
    report = ingest(brain, ["."], root=tree)
    assert dict(report.documents) == {"new": 3}
    runbook = chunks(conn, "runbooks/connection-pool.md")
    assert len(runbook) >= 3, "the runbook is long enough for several chunks"
    query = "connection pool"
    for c in runbook:
        assert not words(c["text_alone"]) & words(query), "only the location names the subject"
        assert c["metadata"]["title"] == "runbooks/connection-pool.md"
        assert c["with_title"] in embedder.texts, "the embedder saw the chunk with its location"
    # e.g. "runbooks/connection-pool.md > Runbook > Saturation" then the section's text
    saturation = next(c for c in runbook if "Saturation" in c["headline"])
    assert saturation["with_title"].startswith("runbooks/connection-pool.md > Runbook > Saturation\n\n")

    hits = vector_search(conn, query, k=len(runbook))
    assert {h["source_ref"] for h in hits} == {"runbooks/connection-pool.md"}
    assert {h["id"] for h in hits} == {c["memory_id"] for c in runbook}

    # The location does not drown the text: a query about a section's content finds that section.
    (top,) = vector_search(conn, "standby failover warm sessions restart workers", k=1)
    assert "After a failover" in top["headline"]


def test_the_embedding_input_holds_the_location_and_not_the_conversation_context(conn) -> None:
    """Check phases return the text the embedder is to see: a document chunk's title and heading
    path with its text; a conversation turn's text alone (its speaker, date and neighbours are
    indexed for the lexical leg, not embedded); a queued write the same text as its check."""
    docs = [{"ref": "runbooks/connection-pool.md", "hash": "r1", "text": RUNBOOK}]
    checked = rows(
        conn,
        "SELECT chunk, headline, body, embedding_input FROM brain.ingest_documents(%s, check_only => true)"
        " WHERE chunk IS NOT NULL ORDER BY chunk",
        (Jsonb(docs),),
    )
    assert len(checked) >= 3
    budget = scalar(conn, "SELECT brain._chunk_tokens(NULL)")
    for c in checked:
        assert c["embedding_input"] == f"runbooks/connection-pool.md > {c['headline']}\n\n{c['body']}"
        assert scalar(conn, "SELECT brain.wordpiece_tokens(%s)", (c["embedding_input"],)) <= budget, (
            "the chunk leaves room for its title in the embedder's window"
        )

    # Stored without an embedding (a SQL client with no embedder): the worker embeds the same text.
    conn.execute("SELECT * FROM brain.ingest_documents(%s)", (Jsonb(docs),))
    pending = rows(conn, "SELECT embedding_input FROM brain.pending_embeddings() ORDER BY memory_id")
    assert [p["embedding_input"] for p in pending] == [c["embedding_input"] for c in checked]

    # observe_batch: a long text with a title is a document; turns of a conversation are not.
    (text_input,) = {
        r["embedding_input"]
        for r in rows(
            conn,
            "SELECT embedding_input FROM brain.observe_batch(texts => %s, metadata => %s, check_only => true)"
            " WHERE chunk = 2",
            ([PAYMENTS * 2], [Jsonb({"title": "Payments handbook"})]),
        )
    }
    assert text_input.startswith("Payments handbook > Payments > ")
    turns = [
        "user: Which worker limit did we settle on for the primary?",
        "assistant: Twenty sessions per worker, and the server allows a thousand.",
    ]
    meta = [Jsonb({"speaker": who, "date": "2026-11-02"}) for who in ("user", "assistant")]
    args = {"texts": turns, "metadata": meta, "threads": ["chat-7", "chat-7"], "positions": [1, 2]}
    named = ", ".join(f"{k} => %({k})s" for k in args)
    checked_turns = rows(
        conn, f"SELECT embedding_input FROM brain.observe_batch({named}, check_only => true)", args
    )
    assert [r["embedding_input"] for r in checked_turns] == turns
    conn.execute(f"SELECT * FROM brain.observe_batch({named})", args)
    stored = rows(conn, "SELECT context FROM brain.memory WHERE thread = 'chat-7' ORDER BY position")
    assert stored[1]["context"].startswith("assistant 2026-11-02")
    assert "before: user: Which" in stored[1]["context"]
    queued = rows(conn, "SELECT embedding_input FROM brain.pending_embeddings() ORDER BY memory_id")
    assert [p["embedding_input"] for p in queued][-2:] == turns


def test_the_same_text_under_two_headings_stays_two_chunks(counting, conn, tree: Path) -> None:
    """Rollback steps repeated under Staging and under Production are two chunks, each embedded
    with its own path and found by it; a copy of a document is still an exact duplicate, and an
    unchanged tree is embedded nothing again."""
    brain, embedder = counting
    ingest(brain, ["."], root=tree)
    deploy = chunks(conn, "docs/deploy.md")
    rollbacks = [c for c in deploy if c["headline"].endswith("Rollback")]
    assert [c["headline"] for c in rollbacks] == [
        "Deploying the shop > Staging > Rollback",
        "Deploying the shop > Production > Rollback",
    ]
    staging, production = rollbacks
    assert staging["body"] == production["body"], "the same text"
    assert staging["with_title"] != production["with_title"]
    for which, chunk, other in (("production", production, staging), ("staging", staging, production)):
        found = [h["id"] for h in vector_search(conn, f"{which} rollback", k=len(deploy))]
        assert found.index(chunk["memory_id"]) < found.index(other["memory_id"]), which

    # Unchanged: nothing embedded.
    embedder.texts.clear()
    report = ingest(brain, ["."], root=tree)
    assert dict(report.documents) == {"unchanged": 3} and embedder.texts == []
    # A copy under another name: its chunks repeat active memories exactly, nothing is stored twice.
    (tree / "docs" / "deploy-copy.md").write_text(DEPLOY)
    report = ingest(brain, ["."], root=tree)
    assert dict(report.documents) == {"new": 1, "unchanged": 3}
    assert dict(report.chunks) == {"duplicate": len(deploy)} and embedder.texts == []


def test_a_renamed_document_is_embedded_under_its_new_name(counting, conn, tree: Path) -> None:
    """The ref is part of what a chunk's vector says, so a rename makes the vectors again: the
    vector leg finds the document by its new name, not its old one."""
    brain, embedder = counting
    ingest(brain, ["."], root=tree)
    before = [c["memory_id"] for c in chunks(conn, "runbooks/connection-pool.md")]
    (tree / "runbooks" / "connection-pool.md").rename(tree / "runbooks" / "session-limits.md")
    embedder.texts.clear()
    report = ingest(brain, ["."], root=tree)
    assert dict(report.documents) == {"renamed": 1, "unchanged": 2}
    after = chunks(conn, "runbooks/session-limits.md")
    assert [c["memory_id"] for c in after] == before, "the same memories"
    assert sorted(embedder.texts) == sorted(c["with_title"] for c in after) and report.embedded == len(after)
    assert brain.pending() == []
    found = vector_search(conn, "session limits", k=len(after))
    assert {h["id"] for h in found} == set(before)
    assert not {h["id"] for h in vector_search(conn, "connection pool", k=3)} & set(before)


def test_chunks_stored_before_titles_keep_their_vectors(counting, conn, tree: Path) -> None:
    """A chunk ingested before chunks were embedded with their ref has no metadata.title: it keeps
    its vector and is embedded (by a re-embed too) with its text alone, through a rename and
    a change of its document."""
    brain, embedder = counting
    ingest(brain, ["."], root=tree)
    # as the ingest of an older release left them
    owner_execute(
        conn, "UPDATE brain.memory SET metadata = metadata - 'title' WHERE source_ref = 'docs/payments.md'"
    )
    old = {c["memory_id"]: c for c in chunks(conn, "docs/payments.md")}
    vectors = dict(
        conn.execute(
            "SELECT memory_id, embedding::text FROM brain.embedding WHERE memory_id = ANY(%s)", (list(old),)
        ).fetchall()
    )
    assert len(vectors) == len(old)

    (tree / "docs" / "payments.md").rename(tree / "docs" / "billing.md")
    embedder.texts.clear()
    report = ingest(brain, ["."], root=tree)
    assert dict(report.documents) == {"renamed": 1, "unchanged": 2}
    assert embedder.texts == [] and brain.pending() == []
    moved = chunks(conn, "docs/billing.md")
    assert [c["memory_id"] for c in moved] == list(old)
    assert all("title" not in c["metadata"] and c["with_title"] == c["text_alone"] for c in moved)

    # A change of the document: its new chunk is titled, the unchanged ones keep what they had.
    billing = tree / "docs" / "billing.md"
    billing.write_text(billing.read_text().replace("every Monday", "every Friday"))
    report = ingest(brain, ["."], root=tree)
    assert report.documents["changed"] == 1
    after = {c["memory_id"]: c for c in chunks(conn, "docs/billing.md")}
    kept = set(after) & set(old)
    assert kept and all("title" not in after[i]["metadata"] for i in kept)
    assert dict(
        conn.execute(
            "SELECT memory_id, embedding::text FROM brain.embedding WHERE memory_id = ANY(%s)", (list(kept),)
        ).fetchall()
    ) == {i: vectors[i] for i in kept}
    new = [after[i] for i in set(after) - set(old)]
    assert new and all(c["metadata"]["title"] == "docs/billing.md" for c in new)
    assert sorted(embedder.texts) == sorted(c["with_title"] for c in new)
