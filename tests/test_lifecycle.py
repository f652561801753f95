"""Lifecycles by kind: immutable rules, task transitions, archive and restore, tiers, history."""

from __future__ import annotations

import datetime as dt

import psycopg
import pytest
from helpers import call_rows, call_scalar, one, owner_execute, raises_br, remember, rows, scalar

NOW = dt.datetime(2026, 6, 1, 12, 0, tzinfo=dt.UTC)


def supersede(conn, old_id: int, headline: str, **kwargs) -> dict:
    (row,) = call_rows(conn, "supersede", old_id=old_id, headline=headline, reason="r", **kwargs)
    return row


@pytest.mark.parametrize(
    "change",
    [
        "headline = 'Sometimes push to main'",
        "body = 'Actually it is fine.'",
        "kind = 'fact'",
    ],
)
def test_a_rule_text_cannot_be_updated(conn, database, change) -> None:
    rule = remember(conn, kind="rule", headline="Never push to main", severity="BLOCKER")["memory_id"]
    with raises_br("BR015") as caught:
        owner_execute(conn, f"UPDATE brain.memory SET {change} WHERE memory_id = %s", (rule,))
    assert "Supersede it" in caught.error.diag.message_hint
    with psycopg.connect(database, autocommit=True) as owner, raises_br("BR015"):
        owner.execute(f"UPDATE brain.memory SET {change} WHERE memory_id = %s", (rule,))


def test_rule_severity_changes_only_through_supersede(conn) -> None:
    rule = remember(conn, kind="rule", headline="Never push to main", severity="BLOCKER")["memory_id"]
    for severity in ("DEPRECATED", "PATTERN"):
        with raises_br("BR015"):
            owner_execute(conn, "UPDATE brain.rule SET severity = %s WHERE memory_id = %s", (severity, rule))
    new = supersede(conn, rule, "Never push to main without review", severity="PATTERN")["memory_id"]
    assert scalar(conn, "SELECT severity FROM brain.rule WHERE memory_id = %s", (rule,)) == "DEPRECATED"
    assert scalar(conn, "SELECT severity FROM brain.rule WHERE memory_id = %s", (new,)) == "PATTERN"
    with raises_br("BR015"):
        owner_execute(conn, "UPDATE brain.rule SET severity = 'BLOCKER' WHERE memory_id = %s", (rule,))


def test_rules_never_decay(conn) -> None:
    rule = remember(conn, kind="rule", headline="Always write a test")["memory_id"]
    assert scalar(conn, "SELECT dormant_after FROM brain.memory WHERE memory_id = %s", (rule,)) is None
    far = dt.datetime.now(dt.UTC) + dt.timedelta(days=3650)
    assert [
        r["id"] for r in rows(conn, "SELECT id FROM brain.search('write a test', now => %s)", (far,))
    ] == [rule]


def task(conn, **kwargs) -> int:
    return remember(conn, kind="task", headline=kwargs.pop("headline", "Ship the release"), **kwargs)[
        "memory_id"
    ]


def update(conn, memory_id: int, status: str | None = None, **kwargs) -> dict:
    return call_scalar(conn, "update_task", id=memory_id, status=status, **kwargs)


@pytest.mark.parametrize(
    ("path", "allowed"),
    [
        (["blocked", "open", "done"], True),
        (["done"], True),
        (["blocked", "done"], True),
        (["done", "open"], False),
        (["done", "blocked"], False),
    ],
)
def test_task_transitions(conn, path, allowed) -> None:
    t = task(conn)
    *ok, last = path
    for status in ok:
        update(conn, t, status)
    if allowed:
        assert update(conn, t, last)["status"] == last
    else:
        with raises_br("BR011") as caught:
            update(conn, t, last)
        assert "stays done" in caught.error.diag.message_hint


def test_invalid_task_updates(conn) -> None:
    t = task(conn)
    with raises_br("BR009"):
        update(conn, t, "stale")
    with raises_br("BR009"):
        update(conn, t, "open", priority=9)
    fact = remember(conn, kind="fact", headline="Not a task")["memory_id"]
    with raises_br("BR009"):
        update(conn, fact, "done")


def test_task_update_sets_note_priority_due_and_is_audited(conn) -> None:
    t = task(conn, priority=3)
    update(conn, t, "blocked", note="waiting on the vendor", priority=1, due_at=NOW)
    row = one(conn, "SELECT status, status_note, priority, due_at FROM brain.task WHERE memory_id = %s", (t,))
    assert row == {"status": "blocked", "status_note": "waiting on the vendor", "priority": 1, "due_at": NOW}
    audit = one(conn, "SELECT detail FROM brain.audit WHERE action = 'update'")["detail"]
    assert (audit["from"], audit["to"], audit["note"]) == ("open", "blocked", "waiting on the vendor")


def test_archive_and_restore(conn) -> None:
    a = remember(conn, kind="fact", headline="Old office address")["memory_id"]
    with raises_br("BR014"):
        scalar(conn, "SELECT brain.archive(%s, '')", (a,))
    scalar(conn, "SELECT brain.archive(%s, 'we moved')", (a,))
    assert scalar(conn, "SELECT state FROM brain.memory WHERE memory_id = %s", (a,)) == "archived"
    assert rows(conn, "SELECT id FROM brain.search('office address')") == []
    assert [
        r["id"] for r in rows(conn, "SELECT id FROM brain.search('office address', include_archived => true)")
    ] == [a]
    with raises_br("BR011"):
        scalar(conn, "SELECT brain.archive(%s, 'again')", (a,))
    scalar(conn, "SELECT brain.restore(%s)", (a,))
    assert [r["id"] for r in rows(conn, "SELECT id FROM brain.search('office address')")] == [a]
    with raises_br("BR011"):
        scalar(conn, "SELECT brain.restore(%s)", (a,))
    actions = [r["action"] for r in rows(conn, "SELECT action FROM brain.audit ORDER BY audit_id")]
    assert actions == ["insert", "archive", "restore"]


def test_restoring_a_tombstoned_memory_is_allowed_and_a_superseded_one_is_refused(conn) -> None:
    a = remember(conn, kind="fact", headline="Build cache lives in S3")["memory_id"]
    scalar(conn, "SELECT brain.forget(%s, 'mistake')", (a,))
    assert scalar(conn, "SELECT brain.restore(%s)", (a,)) == a
    m = scalar(conn, "SELECT brain.recall(%s)", (a,))
    assert (m["state"], m["forget_reason"], m["banner"]) == ("active", None, None)
    supersede(conn, a, "Build cache lives in GCS")
    with raises_br("BR011") as caught:
        scalar(conn, "SELECT brain.restore(%s)", (a,))
    assert "unsupersede" in caught.error.diag.message_hint


def test_restore_refuses_to_duplicate_an_active_memory(conn) -> None:
    a = remember(conn, kind="fact", headline="Deploys happen on Tuesday")["memory_id"]
    scalar(conn, "SELECT brain.forget(%s, 'wrong')", (a,))
    remember(conn, kind="fact", headline="Deploys happen on Tuesday")
    with raises_br("BR011"):
        scalar(conn, "SELECT brain.restore(%s)", (a,))


def test_tiers(conn) -> None:
    hot = remember(conn, kind="fact", headline="Fresh fact")["memory_id"]
    warm = remember(conn, kind="rule", headline="Old rule")["memory_id"]
    cold = remember(conn, kind="fact", headline="Forgotten-about fact")["memory_id"]
    gone = remember(conn, kind="fact", headline="Archived fact")["memory_id"]
    owner_execute(
        conn, "UPDATE brain.memory SET created_at = now() - interval '10 days' WHERE memory_id = %s", (warm,)
    )
    owner_execute(
        conn,
        "UPDATE brain.memory SET created_at = now() - interval '40 days', "
        "dormant_after = now() - interval '10 days' WHERE memory_id = %s",
        (cold,),
    )
    scalar(conn, "SELECT brain.archive(%s, 'done')", (gone,))
    tiers = dict(conn.execute("SELECT id, tier FROM brain.memory_tiers").fetchall())
    assert tiers == {hot: "hot", warm: "warm", cold: "cold", gone: "archive"}
    decay = dict(conn.execute("SELECT id, decay FROM brain.memory_tiers").fetchall())
    assert decay[warm] is None and decay[hot] == pytest.approx(1, abs=1e-3)
    assert decay[cold] == pytest.approx(2 ** (-40 / 7), rel=1e-3)


def test_history_shows_the_chain_and_every_event(conn) -> None:
    a = remember(conn, kind="fact", headline="API on port 8080", source_agent="claude")["memory_id"]
    b = supersede(conn, a, "API on port 9090")["memory_id"]
    c = supersede(conn, b, "API on port 443 behind TLS")["memory_id"]
    scalar(conn, "SELECT brain.rate(%s, 'up')", (c,))
    for start in (a, b, c):
        h = scalar(conn, "SELECT brain.history(%s)", (start,))
        assert [v["id"] for v in h["chain"]] == [a, b, c]
        assert h["current_id"] == c
    events = [(e["id"], e["action"]) for e in scalar(conn, "SELECT brain.history(%s)", (a,))["events"]]
    assert events == [
        (a, "insert"),
        (b, "insert"),
        (a, "supersede"),
        (c, "insert"),
        (b, "supersede"),
        (c, "rate"),
    ]
    assert scalar(conn, "SELECT brain.history(%s)", (a,))["events"][0]["actor"] == "claude"
    assert scalar(conn, "SELECT brain.history(424242)") is None


def test_history_keeps_a_reverted_successor(conn) -> None:
    a = remember(conn, kind="fact", headline="Queue is RabbitMQ")["memory_id"]
    b = supersede(conn, a, "Queue is Kafka")["memory_id"]
    scalar(conn, "SELECT brain.unsupersede(%s)", (a,))
    chain = scalar(conn, "SELECT brain.history(%s)", (a,))["chain"]
    assert [(v["id"], v["state"]) for v in chain] == [(a, "active"), (b, "tombstoned")]


def test_task_notes_are_checked(conn) -> None:
    t = remember(conn, kind="task", headline="Rotate keys")["memory_id"]
    with raises_br("BR007"):
        update(conn, t, note="new key AKIAIOSFODNN7EXAMPLE")
    with raises_br("BR005"):
        update(conn, t, note="x" * 2001)


@pytest.mark.parametrize(
    ("start", "change"),
    [
        ("tombstoned", "state = 'archived'"),
        ("tombstoned", "state = 'superseded'"),
        ("superseded", "state = 'archived'"),
        ("superseded", "state = 'tombstoned'"),
    ],
)
def test_a_state_change_the_lifecycle_does_not_hold_is_refused(conn, database, start, change) -> None:
    """Whatever statement changes a memory's state, the owner's direct UPDATE included, the
    change is one brain.lifecycle() lists (before, the owner could move a memory anywhere)."""
    first = remember(conn, kind="fact", headline="The API gateway runs on port 8443")["memory_id"]
    if start == "tombstoned":
        conn.execute("SELECT brain.forget(%s, reason => 'wrong')", (first,))
    if start == "superseded":
        supersede(conn, first, "The API gateway runs on port 9443")
    with psycopg.connect(database, autocommit=True) as owner, raises_br("BR011") as caught:
        owner.execute(f"UPDATE brain.memory SET {change} WHERE memory_id = %s", (first,))
    assert "brain.lifecycle()" in caught.error.diag.message_hint


def test_a_status_change_the_lifecycle_does_not_hold_is_refused(conn, database) -> None:
    done = task(conn)
    update(conn, done, "done")
    with psycopg.connect(database, autocommit=True) as owner, raises_br("BR011"):
        owner.execute("UPDATE brain.task SET status = 'open' WHERE memory_id = %s", (done,))
    assert scalar(conn, "SELECT status FROM brain.task WHERE memory_id = %s", (done,)) == "done"


def test_the_lifecycle_names_every_state_and_status(conn) -> None:
    """Each state of a memory and each status of a task is reached or left by some action."""
    from pybrain import words

    table = rows(conn, "SELECT * FROM brain.lifecycle()")
    listed = {(r["subject"], r["from_state"], r["to_state"]) for r in table}
    memory_states = {f for s, f, _ in listed if s == "memory"} | {t for s, _, t in listed if s == "memory"}
    assert memory_states == set(words.STATES)
    statuses = {f for s, f, _ in listed if s == "task"} | {t for s, _, t in listed if s == "task"}
    assert statuses == {"open", "blocked", "done", "stale"}
