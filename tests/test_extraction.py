"""Metadata extraction in SQL: tags, people, topics, action items."""

from __future__ import annotations

from helpers import one, remember, scalar

TEXT = (
    "We moved the queue to Redis after the outage. #infra #Queue @alice and @bob.smith agreed. "
    "We need to follow up with Grafana alerts. Mail ops@example.com, see page#anchor and C#.\n"
    "Remember to rotate the dashboards. This is fine."
)


def test_extractors(conn) -> None:
    assert scalar(conn, "SELECT brain.extract_tags(%s)", (TEXT,)) == ["infra", "queue"]
    assert scalar(conn, "SELECT brain.extract_people(%s)", (TEXT,)) == ["alice", "bob.smith"]
    assert scalar(conn, "SELECT brain.extract_topics(%s)", (TEXT,)) == ["Redis", "Grafana"]
    assert scalar(conn, "SELECT brain.extract_action_items(%s)", (TEXT,)) == [
        "We need to follow up with Grafana alerts.",
        "Remember to rotate the dashboards.",
    ]


def test_remember_stores_what_it_extracts_and_merges_given_tags(conn) -> None:
    r = remember(conn, kind="fact", headline="Queue moved to Redis", body=TEXT, tags=["Ops", " "])
    m = one(
        conn,
        "SELECT tags, people, topics, action_items FROM brain.memory WHERE memory_id = %s",
        (r["memory_id"],),
    )
    assert sorted(m["tags"]) == ["infra", "ops", "queue"]
    assert m["people"] == ["alice", "bob.smith"]
    assert "Redis" in m["topics"]
    assert len(m["action_items"]) == 2


def test_guardrail_stamps_count_per_line(conn) -> None:
    assert (
        scalar(conn, "SELECT brain.guardrail_stamps(%s)", ("GUARDRAIL 2025-01-01 a GUARDRAIL 2025-02-02 b",))
        == 2
    )
    assert scalar(conn, "SELECT brain.guardrail_stamps(%s)", ("GUARDRAIL: never\nreleased 2025-01-01",)) == 0
