"""capture_context: which sentences are kept, how they are stored, duplicates skipped."""

from __future__ import annotations

from helpers import call_rows, rows, scalar

TEXT = """Standup notes.
We decided to move the queue to Redis streams.
The weather was nice today and nothing else happened.
- We need to follow up with @bob about the CI cache
Turns out the cache key ignores the lockfile.
Watch out: pnpm install fails when the store is on NFS.
Short one.
"""


def capture(conn, text: str, **kwargs) -> list[dict]:
    return call_rows(conn, "capture_context", text=text, **kwargs)


def test_keeps_decisions_actions_gotchas_and_insights(conn) -> None:
    out = capture(conn, TEXT, source="claude", project="infra")
    assert [(r["category"], r["action"]) for r in out] == [
        ("decision", "created"),
        ("action", "created"),
        ("insight", "created"),
        ("gotcha", "created"),
    ]
    stored = rows(
        conn,
        "SELECT kind, category, headline, project, metadata, source_agent FROM brain.memory "
        "ORDER BY memory_id",
    )
    assert [s["kind"] for s in stored] == ["fact", "task", "fact", "fact"]
    assert stored[1]["headline"] == "We need to follow up with @bob about the CI cache"
    assert {s["project"] for s in stored} == {"infra"}
    assert all(s["metadata"] == {"auto_captured": True} and s["source_agent"] == "claude" for s in stored)
    assert scalar(conn, "SELECT people FROM brain.memory WHERE kind = 'task'") == ["bob"]


def test_duplicates_are_skipped_with_a_reason(conn) -> None:
    capture(conn, TEXT)
    again = capture(conn, TEXT)
    assert {r["action"] for r in again} == {"skipped"}
    assert again[0]["reason"] == "already stored as #1"
    assert scalar(conn, "SELECT count(*) FROM brain.memory") == 4


def test_secrets_in_captured_text_are_redacted(conn) -> None:
    out = capture(conn, "We decided the deploy key is AKIAIOSFODNN7EXAMPLE for now. We decided to use pnpm.")
    assert [(r["action"], r["category"]) for r in out] == [("created", "decision"), ("created", "decision")]
    assert out[0]["sentence"] == "We decided the deploy key is [redacted:aws-access-key-id] for now."
    assert scalar(conn, "SELECT count(*) FROM brain.memory WHERE headline || body LIKE '%AKIA%'") == 0


def test_long_sentences_get_a_derived_headline(conn) -> None:
    sentence = (
        "We decided that every service in the platform must expose a health endpoint "
        "that reports its version, its dependencies and its queue depth."
    )
    (r,) = capture(conn, sentence)
    m = rows(conn, "SELECT headline, body FROM brain.memory WHERE memory_id = %s", (r["memory_id"],))[0]
    assert m["headline"].endswith("…") and m["body"] == sentence


def test_nothing_worth_keeping(conn) -> None:
    assert capture(conn, "Hello there. The weather is nice.") == []


def test_a_redacted_last_sentence_is_embedded_too(conn) -> None:
    from helpers import unit

    out = capture(
        conn,
        "We decided to use pnpm. We decided the key is AKIAIOSFODNN7EXAMPLE.",
        embeddings=[unit(1.0), unit(0.2, axis=2)],
    )
    assert [r["action"] for r in out] == ["created", "created"], "the redacted sentence has its row"
