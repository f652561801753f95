"""Curation in SQL: ratings, annotations, pins, confirmation, decay and dormancy."""

from __future__ import annotations

import datetime as dt

import pytest
from helpers import owner_execute, raises_br, remember, rows, scalar


def test_rate_counts_and_audits(conn) -> None:
    a = remember(conn, kind="fact", headline="Useful fact")["memory_id"]
    scalar(conn, "SELECT brain.rate(%s, 'up')", (a,))
    out = scalar(conn, "SELECT brain.rate(%s, 'UP', source => 'claude')", (a,))
    assert out == {"id": a, "upvotes": 2, "downvotes": 0, "rating": 2}
    assert scalar(conn, "SELECT brain.rate(%s, 'down')", (a,))["rating"] == 1
    with raises_br("BR009"):
        scalar(conn, "SELECT brain.rate(%s, 'sideways')", (a,))
    with raises_br("BR010"):
        scalar(conn, "SELECT brain.rate(999, 'up')")
    actors = [
        r["actor"]
        for r in rows(conn, "SELECT actor FROM brain.audit WHERE action = 'rate' ORDER BY audit_id")
    ]
    assert actors[1] == "claude" and len(actors) == 3


def test_annotations_show_with_the_memory(conn) -> None:
    a = remember(conn, kind="fact", headline="Deploys are blue-green")["memory_id"]
    first = scalar(conn, "SELECT brain.annotate(%s, 'Canary since November', 'ops')", (a,))
    scalar(conn, "SELECT brain.annotate(%s, 'Rollback takes 2 minutes')", (a,))
    notes = scalar(conn, "SELECT brain.recall(%s)", (a,))["annotations"]
    assert next((n["id"], n["note"], n["source"]) for n in notes) == (first, "Canary since November", "ops")
    assert len(notes) == 2
    with raises_br("BR009"):
        scalar(conn, "SELECT brain.annotate(%s, '  ')", (a,))
    with raises_br("BR007"):
        scalar(conn, "SELECT brain.annotate(%s, 'token AKIAIOSFODNN7EXAMPLE')", (a,))
    assert scalar(conn, "SELECT count(*) FROM brain.audit WHERE action = 'annotate'") == 2


def test_pin_and_unpin_are_idempotent_and_audited(conn) -> None:
    a = remember(conn, kind="rule", headline="Always run the linter")["memory_id"]
    assert scalar(conn, "SELECT brain.pin(%s)", (a,)) is True
    assert scalar(conn, "SELECT brain.pin(%s)", (a,)) is False
    assert scalar(conn, "SELECT brain.unpin(%s)", (a,)) is True
    assert scalar(conn, "SELECT brain.unpin(%s)", (a,)) is False
    actions = [r["action"] for r in rows(conn, "SELECT action FROM brain.audit ORDER BY audit_id")]
    assert actions == ["insert", "pin", "unpin"]
    scalar(conn, "SELECT brain.forget(%s, 'obsolete')", (a,))
    with raises_br("BR011"):
        scalar(conn, "SELECT brain.pin(%s)", (a,))


@pytest.mark.parametrize(("days", "expected"), [(0, 1.0), (7, 0.5), (14, 0.25), (-3, 1.0)])
def test_decay_score(conn, days, expected) -> None:
    score = scalar(conn, "SELECT brain.decay_score(now() - make_interval(days => %s), 7, now())", (days,))
    assert score == pytest.approx(expected)


def test_a_fact_turns_dormant_at_the_threshold_and_recall_revives_it(conn) -> None:
    a = remember(conn, kind="fact", headline="Office wifi is guest-5g")["memory_id"]
    created, dormant_after = conn.execute(
        "SELECT created_at, dormant_after FROM brain.memory WHERE memory_id = %s", (a,)
    ).fetchone()
    # 2^(-t/7) = 0.1  <=>  t = 7 * log2(10) days
    assert (dormant_after - created).total_seconds() / 86400 == pytest.approx(7 * 3.321928, rel=1e-5)
    just_before = dormant_after - dt.timedelta(seconds=1)
    at = dormant_after
    q = "SELECT id, score FROM brain.search('office wifi', now => %s)"
    ((found, score_before),) = conn.execute(q, (just_before,)).fetchall()
    ((found_dormant, score_dormant),) = conn.execute(q, (at,)).fetchall()
    assert found == found_dormant == a, "a dormant fact still answers the search it matches"
    assert score_dormant < score_before
    year = conn.execute(q, (at + dt.timedelta(days=365),)).fetchall()
    assert [r[0] for r in year] == [a] and year[0][1] == pytest.approx(score_before / 1.1, rel=0.01), (
        "decay halves the fused score at most: 0.5 + 0.5 x 0.1 at the threshold, 0.5 a year on"
    )
    decay = scalar(conn, "SELECT brain.decay_score(%s, 7, %s)", (created, at))
    assert decay == pytest.approx(0.1)

    owner_execute(
        conn,
        "UPDATE brain.memory SET created_at = created_at - interval '60 days', "
        "dormant_after = dormant_after - interval '60 days' WHERE memory_id = %s",
        (a,),
    )
    assert scalar(conn, "SELECT brain.stats()")["dormant_facts"] == 1
    scalar(conn, "SELECT brain.recall(%s)", (a,))
    assert scalar(conn, "SELECT brain.stats()")["dormant_facts"] == 0
    assert [r[0] for r in conn.execute("SELECT id FROM brain.search('office wifi')").fetchall()] == [a]


def test_confirm_revives_a_dormant_fact_and_is_audited(conn) -> None:
    a = remember(conn, kind="fact", headline="VPN endpoint is vpn-2")["memory_id"]
    owner_execute(
        conn, "UPDATE brain.memory SET dormant_after = now() - interval '1 day' WHERE memory_id = %s", (a,)
    )
    assert scalar(conn, "SELECT brain.stats()")["dormant_facts"] == 1
    ((found, score_dormant),) = conn.execute("SELECT id, score FROM brain.search('vpn endpoint')").fetchall()
    assert found == a, "dormant, and still found"
    out = scalar(conn, "SELECT brain.confirm(%s)", (a,))
    assert out["dormant_after"] is not None
    assert scalar(conn, "SELECT brain.stats()")["dormant_facts"] == 0
    ((found, score),) = conn.execute("SELECT id, score FROM brain.search('vpn endpoint')").fetchall()
    assert found == a and score > score_dormant
    assert scalar(conn, "SELECT count(*) FROM brain.audit WHERE action = 'confirm'") == 1


def test_confirm_refuses_a_superseded_memory(conn) -> None:
    a = remember(conn, kind="fact", headline="Port is 80")["memory_id"]
    conn.execute("SELECT * FROM brain.supersede(%s, 'Port is 443', 'tls')", (a,))
    with raises_br("BR011") as caught:
        scalar(conn, "SELECT brain.confirm(%s)", (a,))
    assert "current version" in caught.error.diag.message_hint


def test_per_fact_halflife_and_settings(conn) -> None:
    slow = remember(conn, kind="fact", headline="Slow fact", halflife_days=70.0)["memory_id"]
    fast = remember(conn, kind="fact", headline="Fast fact")["memory_id"]
    spans = dict(
        conn.execute(
            "SELECT memory_id, extract(epoch FROM dormant_after - created_at) / 86400 FROM brain.memory"
        ).fetchall()
    )
    assert float(spans[slow]) == pytest.approx(10 * float(spans[fast]))
    scalar(conn, "SELECT brain.set_setting('fact_dormant_threshold', '0.5')")
    spans = dict(
        conn.execute(
            "SELECT memory_id, extract(epoch FROM dormant_after - created_at) / 86400 FROM brain.memory"
        ).fetchall()
    )
    assert float(spans[fast]) == pytest.approx(7.0)
    with raises_br("BR009"):
        scalar(conn, "SELECT brain.set_setting('no_such_setting', '1')")
    with raises_br("BR009"):
        scalar(conn, "SELECT brain.set_setting('rrf_k', '\"sixty\"')")
