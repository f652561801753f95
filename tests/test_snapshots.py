"""Resuming after a gap: the boot shows the project's last snapshot beside the handoff, within
the budget; a boot soon after the last session does not."""

from __future__ import annotations

import datetime as dt

from helpers import call_scalar
from psycopg.types.json import Jsonb

from pybrain.client import render_boot

T0 = dt.datetime(2026, 6, 1, 9, 0, tzinfo=dt.UTC)
SNAPSHOT = {
    "summary": "Half of the invoices migrated",
    "status": "in progress",
    "blockers": ["finance has not signed off"],
    "pending": ["migrate the 2024 invoices", "drop the old table"],
}


def boot(conn, at: dt.datetime, **kwargs) -> dict:
    return call_scalar(
        conn, "boot_session", **{"source": "claude", "project": "billing", "now": at, **kwargs}
    )


def end(conn, session: int, at: dt.datetime) -> None:
    conn.execute(
        "SELECT brain.end_session(%s, 'Rerun the migration after sign-off.', %s, now => %s)",
        (session, Jsonb(SNAPSHOT), at),
    )


def test_a_boot_after_a_gap_shows_the_last_snapshot(conn) -> None:
    first = boot(conn, T0)["session_id"]
    end(conn, first, T0 + dt.timedelta(hours=1))
    soon = boot(conn, T0 + dt.timedelta(days=1))
    assert soon["sections"]["snapshot"] == [] and soon["sections"]["handoff"] is not None
    conn.execute("SELECT brain.end_session(%s, now => %s)", (soon["session_id"], T0 + dt.timedelta(days=1)))
    later = boot(conn, T0 + dt.timedelta(days=5))
    lines = [i["text"] for i in later["sections"]["snapshot"]]
    assert lines == [
        'status: "in progress"',
        'summary: "Half of the invoices migrated"',
        'blocker: "finance has not signed off"',
        'pending: "migrate the 2024 invoices"',
        'pending: "drop the old table"',
    ]
    text = render_boot(later)
    assert "## Where the project stood 4 days ago (snapshot of 2026-06-01)" in text
    assert text.index("## Handoff from the last session") < text.index("## Where the project stood")
    assert later["tokens"] <= later["budget"]
    # another project's sessions say nothing about this one's gap
    assert boot(conn, T0 + dt.timedelta(days=5), project="other")["sections"]["snapshot"] == []


def test_the_gap_is_a_setting_and_the_snapshot_is_cut_within_the_budget(conn) -> None:
    first = boot(conn, T0)["session_id"]
    end(conn, first, T0 + dt.timedelta(hours=1))
    conn.execute("SELECT brain.set_setting('resume_gap_days', '10')")
    assert boot(conn, T0 + dt.timedelta(days=5))["sections"]["snapshot"] == []
    conn.execute("SELECT brain.set_setting('resume_gap_days', '0.5')")
    p = boot(conn, T0 + dt.timedelta(days=5, hours=1), token_budget=200)
    assert p["tokens"] <= 200
    assert len(p["sections"]["snapshot"]) < len(SNAPSHOT["pending"]) + 3 or not p["dropped"]
