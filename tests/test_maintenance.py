"""maintain, maintain_if_due and prune, at explicit clocks."""

from __future__ import annotations

import datetime as dt

import psycopg
import pytest
from helpers import call_rows, owner_execute, raises_br, remember, rows, scalar

T0 = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)


def at(days: float) -> dt.datetime:
    return T0 + dt.timedelta(days=days)


def set_created(conn, memory_id: int, when: dt.datetime) -> None:
    owner_execute(
        conn,
        "UPDATE brain.memory SET created_at = %s, updated_at = %s WHERE memory_id = %s",
        (when, when, memory_id),
    )
    owner_execute(
        conn, "UPDATE brain.task SET status_changed_at = %s WHERE memory_id = %s", (when, memory_id)
    )
    owner_execute(conn, "SELECT brain._refresh_dormancy(%s)", (memory_id,))


def maintain(conn, when: dt.datetime) -> dict:
    return scalar(conn, "SELECT brain.maintain(%s)", (when,))


@pytest.fixture
def workspace(conn) -> dict[str, int]:
    ids = {
        "fact": remember(conn, kind="fact", headline="A decaying fact")["memory_id"],
        "incident": remember(conn, kind="incident", headline="Disk filled up on build host")["memory_id"],
        "task": remember(conn, kind="task", headline="Rotate the TLS certificates")["memory_id"],
        "expiring": remember(conn, kind="fact", headline="Temporary freeze on deploys", expires_at=at(5))[
            "memory_id"
        ],
        "pinned_incident": remember(conn, kind="incident", headline="Pinned incident", pinned=True)[
            "memory_id"
        ],
    }
    for memory_id in ids.values():
        set_created(conn, memory_id, T0)
    return ids


# What a run of brain.maintain counts, job by job.
JOBS = ("facts_dormant", "incidents_archived", "tasks_stale", "expired")


def states(conn) -> dict[int, str]:
    return dict(conn.execute("SELECT memory_id, state FROM brain.memory").fetchall())


def test_maintain_does_each_job_at_its_time_and_is_idempotent(conn, workspace) -> None:
    first = maintain(conn, at(1))
    assert {k: first[k] for k in JOBS} == dict.fromkeys(JOBS, 0)

    week3 = maintain(conn, at(15))
    assert (week3["tasks_stale"], week3["expired"], week3["facts_dormant"]) == (1, 1, 0)
    assert scalar(conn, "SELECT status FROM brain.task WHERE memory_id = %s", (workspace["task"],)) == "stale"
    assert states(conn)[workspace["expiring"]] == "archived"

    later = maintain(conn, at(30))
    assert later["facts_dormant"] == 1, "7-day half-life: dormant after 23.3 days"

    quarter = maintain(conn, at(91))
    assert quarter["incidents_archived"] == 1
    assert states(conn)[workspace["incident"]] == "archived"
    assert states(conn)[workspace["pinned_incident"]] == "active"

    again = maintain(conn, at(91))
    assert {k: again[k] for k in JOBS} == dict.fromkeys(JOBS, 0)
    assert scalar(conn, "SELECT count(*) FROM brain.maintenance_run") == 5
    audited = rows(
        conn, "SELECT action, actor, detail FROM brain.audit WHERE actor = 'maintenance' ORDER BY audit_id"
    )
    assert [(a["action"], a["detail"]["reason"]) for a in audited] == [
        ("update", "idle for task_stale_days"),
        ("archive", "expired"),
        ("archive", "untouched for incident_archive_days"),
    ]


def test_an_update_reopens_a_stale_task(conn, workspace) -> None:
    maintain(conn, at(15))
    out = scalar(conn, "SELECT brain.update_task(%s, note => 'picked up again')", (workspace["task"],))
    assert (out["from"], out["status"]) == ("stale", "open")


def test_recall_keeps_an_incident_from_being_archived(conn, workspace) -> None:
    owner_execute(
        conn,
        "UPDATE brain.memory SET last_accessed = %s WHERE memory_id = %s",
        (at(60), workspace["incident"]),
    )
    assert maintain(conn, at(91))["incidents_archived"] == 0


def test_ttl_expiry_at_the_exact_second(conn, workspace) -> None:
    deadline = at(5)
    q = "SELECT id FROM brain.search('temporary freeze deploys', now => %s)"
    assert [r["id"] for r in rows(conn, q, (deadline - dt.timedelta(seconds=1),))] == [workspace["expiring"]]
    assert rows(conn, q, (deadline,)) == []
    assert maintain(conn, deadline - dt.timedelta(seconds=1))["expired"] == 0
    assert maintain(conn, deadline)["expired"] == 1


def test_maintain_if_due_runs_at_most_once_a_day(conn, database) -> None:
    """A rate limit, by the server's clock: the day is made to pass by moving the run back."""
    first = scalar(conn, "SELECT brain.maintain_if_due()")
    assert first["ran"] is True
    refused = scalar(conn, "SELECT brain.maintain_if_due()")
    assert refused["ran"] is False and refused["next_due"] is not None
    with psycopg.connect(database, autocommit=True) as owner:
        owner.execute("UPDATE brain.maintenance_run SET ran_at = ran_at - interval '23 hours 59 minutes'")
    assert scalar(conn, "SELECT brain.maintain_if_due()")["ran"] is False
    with psycopg.connect(database, autocommit=True) as owner:
        owner.execute("UPDATE brain.maintenance_run SET ran_at = ran_at - interval '1 minute'")
    assert scalar(conn, "SELECT brain.maintain_if_due()")["ran"] is True
    assert scalar(conn, "SELECT count(*) FROM brain.maintenance_run") == 2


def forget(conn, memory_id: int, when: dt.datetime) -> None:
    scalar(conn, "SELECT brain.forget(%s, 'obsolete')", (memory_id,))
    owner_execute(conn, "UPDATE brain.memory SET forgotten_at = %s WHERE memory_id = %s", (when, memory_id))


def prune(conn, **kwargs) -> list[dict]:
    return call_rows(conn, "prune", **kwargs)


def test_prune_is_a_dry_run_by_default_and_keeps_rules_pinned_and_young_rows(conn) -> None:
    old_fact = remember(conn, kind="fact", headline="Old fact")["memory_id"]
    young_fact = remember(conn, kind="fact", headline="Young fact")["memory_id"]
    rule = remember(conn, kind="rule", headline="Old rule")["memory_id"]
    pinned = remember(conn, kind="fact", headline="Pinned fact", pinned=True)["memory_id"]
    for memory_id in (old_fact, rule, pinned):
        forget(conn, memory_id, at(0))
    forget(conn, young_fact, at(50))

    listed = prune(conn, now=at(60))
    assert [(r["id"], r["action"]) for r in listed] == [(old_fact, "would delete")]
    assert scalar(conn, "SELECT count(*) FROM brain.memory") == 4

    deleted = prune(conn, dry_run=False, now=at(60), source="ops")
    assert [(r["id"], r["action"]) for r in deleted] == [(old_fact, "deleted")]
    assert sorted(states(conn)) == sorted([young_fact, rule, pinned])
    (audit,) = rows(conn, "SELECT memory_id, actor, snapshot FROM brain.audit WHERE action = 'prune'")
    assert (audit["memory_id"], audit["actor"], audit["snapshot"]["headline"]) == (
        old_fact,
        "ops",
        "Old fact",
    )


def test_prune_respects_max_rows_and_the_floor(conn) -> None:
    ids = [remember(conn, kind="incident", headline=f"Incident number {i}")["memory_id"] for i in range(5)]
    for memory_id in ids:
        forget(conn, memory_id, at(0))
    assert len(prune(conn, dry_run=False, max_rows=2, now=at(60))) == 2
    assert len(prune(conn, older_than="90 days", now=at(60))) == 0
    with raises_br("BR009"):
        prune(conn, older_than="1 hour")


def test_prune_keeps_what_a_supersede_chain_points_to(conn) -> None:
    a = remember(conn, kind="fact", headline="Version one")["memory_id"]
    b = scalar(conn, "SELECT memory_id FROM brain.supersede(%s, 'Version two', 'r')", (a,))
    forget(conn, b, at(0))
    assert prune(conn, now=at(60)) == []


def test_a_replay_of_the_past_does_not_hold_maintain_if_due_back(conn) -> None:
    scalar(conn, "SELECT brain.maintain(%s)", (at(30),))
    assert scalar(conn, "SELECT brain.maintain_if_due()")["ran"] is True
