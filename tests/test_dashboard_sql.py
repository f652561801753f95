"""The dashboard's SQL reads (sql/functions/023-ui.sql) and its session wake-ups."""

from __future__ import annotations

import datetime as dt
import re

import psycopg
import pytest
from helpers import each_refused, owner_execute, raises_br, rows, scalar
from psycopg import sql

from pybrain.client import Brain

T0 = dt.datetime(2026, 6, 1, 12, 0, tzinfo=dt.UTC)


def test_list_memories_by_kind_project_state_and_tier(brain: Brain, conn) -> None:
    rule = brain.remember("rule", "Never force-push to main", severity="BLOCKER", project="api").memory_id
    fact = brain.remember("fact", "The staging database runs PostgreSQL 17", project="api").memory_id
    other = brain.remember("fact", "The office printer is on floor three").memory_id
    brain.archive(other, "moved offices")
    api = rows(conn, "SELECT id, kind, tier FROM brain.list_memories(projects => '{api}')")
    assert [(r["id"], r["kind"], r["tier"]) for r in api] == [(fact, "fact", "hot"), (rule, "rule", "hot")]
    facts = rows(conn, "SELECT id, decay FROM brain.list_memories(kinds => '{fact}')")
    assert [r["id"] for r in facts] == [other, fact]
    assert facts[1]["decay"] == pytest.approx(1.0, abs=0.01)
    archived = rows(conn, "SELECT id, state FROM brain.list_memories(tiers => '{archive}')")
    assert archived == [{"id": other, "state": "archived"}]
    assert rows(
        conn, "SELECT id FROM brain.list_memories(states => '{active}', before_id => %s)", (fact,)
    ) == [{"id": rule}]
    each_refused(
        conn,
        ("BR009", "SELECT count(*) FROM brain.list_memories(tiers => '{lukewarm}')"),
        ("BR009", "SELECT count(*) FROM brain.list_memories(states => '{deleted}')"),
        ("BR001", "SELECT count(*) FROM brain.list_memories(kinds => '{note}')"),
    )


def test_memory_page_has_the_chain_annotations_and_does_not_count_as_a_use(brain: Brain, conn) -> None:
    old = brain.remember("fact", "The API listens on port 8080").memory_id
    brain.annotate(old, "Checked against the load balancer config")
    brain.rate(old, "up")
    new = brain.supersede(old, "The API listens on port 9090", "the port moved in the May release").memory_id
    page = scalar(conn, "SELECT brain.memory_page(%s)", (old,))
    assert page["state"] == "superseded" and page["current_id"] == new
    assert [a["note"] for a in page["annotations"]] == ["Checked against the load balancer config"]
    assert page["upvotes"] == 1 and page["access"] == "admin"
    chain = page["history"]["chain"]
    assert [c["id"] for c in chain] == [old, new]
    assert chain[0]["reason"] == "the port moved in the May release"
    assert scalar(conn, "SELECT access_count FROM brain.memory WHERE memory_id = %s", (old,)) == 0
    with raises_br("BR010"):
        scalar(conn, "SELECT brain.memory_page(99999)")


def test_audit_trail_filters_by_memory_actor_and_action(conn) -> None:
    a = Brain(conn, actor="alice")
    b = Brain(conn, actor="bob")
    first = a.remember("fact", "Backups run nightly at 02:00 UTC").memory_id
    second = b.remember("fact", "The CI cache lives in the artifacts bucket").memory_id
    b.pin(first)
    trail = rows(conn, "SELECT memory_id, action, actor, headline FROM brain.audit_trail()")
    assert trail[0] == {
        "memory_id": first,
        "action": "pin",
        "actor": "bob",
        "headline": "Backups run nightly at 02:00 UTC",
    }
    assert {(r["memory_id"], r["actor"]) for r in trail} >= {(first, "alice"), (second, "bob")}
    bobs = rows(conn, "SELECT memory_id, action FROM brain.audit_trail(actors => '{bob}')")
    assert bobs == [{"memory_id": first, "action": "pin"}, {"memory_id": second, "action": "insert"}]
    of_first = rows(conn, "SELECT action FROM brain.audit_trail(id => %s)", (first,))
    assert [r["action"] for r in of_first] == ["pin", "insert"]
    pins = rows(conn, "SELECT memory_id FROM brain.audit_trail(actions => '{pin}')")
    assert pins == [{"memory_id": first}]
    facets = scalar(conn, "SELECT brain.dashboard_facets()")
    assert facets["actors"] == ["alice", "bob"] and "pin" in facets["actions"]
    with raises_br("BR009"):
        scalar(conn, "SELECT count(*) FROM brain.audit_trail(max_results => 0)")


def test_sessions_handoffs_and_action_items(conn) -> None:
    s1 = int(
        scalar(
            conn, "SELECT (brain.boot_session('claude', project => 'api', now => %s))->>'session_id'", (T0,)
        )
    )
    s2 = int(
        scalar(
            conn, "SELECT (brain.boot_session('cursor', project => 'api', now => %s))->>'session_id'", (T0,)
        )
    )
    s3 = int(
        scalar(
            conn, "SELECT (brain.boot_session('codex', project => 'web', now => %s))->>'session_id'", (T0,)
        )
    )
    scalar(conn, "SELECT brain.end_session(%s, 'Migrations are written; run them next.')", (s3,))
    item = scalar(conn, "SELECT brain.create_action_item('Rotate the staging keys', project => 'api')")
    sessions = {r["session_id"]: r for r in rows(conn, "SELECT * FROM brain.list_sessions()")}
    assert sessions[s1]["siblings"] == [s2] and sessions[s2]["siblings"] == [s1]
    assert sessions[s3]["status"] == "ended" and sessions[s3]["handoff"].startswith("Migrations are written")
    assert [
        r["session_id"] for r in rows(conn, "SELECT * FROM brain.list_sessions(include_ended => false)")
    ] == [
        s2,
        s1,
    ]
    handoffs = rows(conn, "SELECT source, text FROM brain.recent_handoffs()")
    assert handoffs[0]["source"] == "codex"
    items = rows(conn, "SELECT id, text, status FROM brain.list_action_items()")
    assert items == [{"id": item, "text": "Rotate the staging keys", "status": "pending"}]
    with raises_br("BR009"):
        scalar(conn, "SELECT count(*) FROM brain.list_action_items('{done}')")


def test_session_changes_wake_listeners_and_heartbeats_do_not(conn, db_url: str) -> None:
    channel = scalar(conn, "SELECT brain.sessions_channel()")
    assert re.fullmatch(r"brain_sessions_[0-9a-f]{32}", channel)
    with psycopg.connect(db_url, autocommit=True) as listener:
        listener.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
        s = int(scalar(conn, "SELECT (brain.boot_session('claude', project => 'api'))->>'session_id'"))
        got = list(listener.notifies(timeout=2, stop_after=1))
        assert [n.channel for n in got] == [channel] and got[0].payload == ""
        scalar(conn, "SELECT brain.record_tool_event('search', now(), 1.0, true, session => %s)", (s,))
        assert list(listener.notifies(timeout=0.5)) == []
        scalar(conn, "SELECT brain.update_active_task(%s, 'Write the release notes')", (s,))
        assert len(list(listener.notifies(timeout=2, stop_after=1))) == 1


def test_metrics_series_buckets_calls_errors_and_percentiles(conn) -> None:
    def event(minutes: float, ms: float, ok: bool = True) -> None:
        scalar(
            conn,
            "SELECT brain.record_tool_event('search', %s, %s, %s, error_code => %s, error => %s)",
            (T0 - dt.timedelta(minutes=minutes), ms, ok, None if ok else "BR009", None if ok else "bad"),
        )

    for ms in range(1, 101):
        event(30, float(ms))
    event(90, 5.0, ok=False)
    event(90, 7.0)
    series = rows(conn, "SELECT * FROM brain.metrics_series('3 hours', 3, now => %s)", (T0,))
    assert [r["calls"] for r in series] == [0, 2, 100]
    assert series[0]["error_rate"] is None and series[1]["error_rate"] == 0.5
    assert series[2]["p50_ms"] == pytest.approx(50.5) and series[2]["p99_ms"] == pytest.approx(99.01)
    assert series[2]["bucket_start"] == T0 - dt.timedelta(hours=1)
    with raises_br("BR009"):
        scalar(conn, "SELECT count(*) FROM brain.metrics_series('1 hour', 0)")


def test_decay_outlook_names_the_facts_that_go_dormant_soon(brain: Brain, conn) -> None:
    fresh = brain.remember("fact", "The release train leaves every Tuesday").memory_id
    stale = brain.remember("fact", "The old wiki is read-only since March").memory_id
    owner_execute(
        conn, "UPDATE brain.memory SET created_at = now() - interval '20 days' WHERE memory_id = %s", (stale,)
    )
    conn.execute("SELECT brain.maintain()")
    out = rows(conn, "SELECT id, decay, dormant, dormant_soon FROM brain.decay_outlook('30 days')")
    assert [r["id"] for r in out] == [stale, fresh]
    assert out[0]["decay"] < out[1]["decay"]
    threshold = float(scalar(conn, "SELECT brain.setting('fact_dormant_threshold')"))
    assert out[0]["dormant"] == (out[0]["decay"] < threshold)
    assert out[1]["dormant"] is False and out[1]["dormant_soon"] is True


def test_storage_state_reports_sizes_and_vector_indexes(brain: Brain, conn) -> None:
    brain.remember("fact", "Disk use is reported per table")
    state = scalar(conn, "SELECT brain.storage_state()")
    assert state["database_bytes"] > 0
    assert "memory" in {t["name"] for t in state["tables"]}
    assert all(i["valid"] for i in state["vector_indexes"])
    assert state["unindexed_vectors"] >= 0
