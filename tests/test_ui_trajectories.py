"""The dashboard's pages for trajectories, context packs, snapshots and injections (over HTTP)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import requests
from helpers import scalar
from psycopg.types.json import Jsonb
from test_ui import Dashboard, start_ui

from pybrain.client import Brain
from pybrain.embed import get_embedder

SCRIPT = "<script>window.pwned = 1</script>"


def seed(conn) -> dict[str, int]:
    brain = Brain(conn, embedder=get_embedder("hash"), actor="claude-code")
    ids = {}
    ids["fact"] = brain.remember("fact", "The runner pool has 4 hosts", project="ops").memory_id
    ids["traj"] = brain.record_trajectory(
        "The deploy job fails on a cold runner",
        [
            {"action": "read the log", "command": "journalctl -u runner"},
            {"action": f"restart {SCRIPT}", "command": "systemctl restart runner", "failed": True},
        ],
        outcome="Pruning the docker cache fixed it",
        project="ops",
    ).memory_id
    brain.create_pack("deploy", memory_ids=[ids["fact"], ids["traj"]], description="deploying")
    session = brain.boot_session("claude-code", project="ops")["session_id"]
    at = dt.datetime.now(dt.UTC)
    conn.execute(
        "SELECT brain.end_session(%s, 'Rerun after sign-off.', %s, now => %s)",
        (
            session,
            Jsonb(
                {
                    "summary": "Half migrated",
                    "status": "in progress",
                    "blockers": [f"finance {SCRIPT}"],
                    "pending": ["drop the old table"],
                }
            ),
            at,
        ),
    )
    return ids


def test_the_pages_show_trajectories_packs_snapshots_and_injections(
    db_url: str, conn, tmp_path: Path
) -> None:
    ids = seed(conn)
    ui: Iterator[Dashboard] = start_ui(db_url, tmp_path)
    dashboard = next(ui)
    try:
        http = requests.Session()
        pages = {
            p: http.get(dashboard.url + p) for p in ("/trajectories", "/packs", "/snapshots", "/injections")
        }
        for path, r in pages.items():
            assert r.status_code == 200, (path, r.text[:500])
            assert "<script>" not in r.text and " style=" not in r.text, path
            assert "script-src 'self'" in r.headers["content-security-policy"]
        t = pages["/trajectories"].text
        assert "The deploy job fails on a cold runner" in t and "[failed] restart &lt;script&gt;" in t
        assert "<code>journalctl -u runner</code>" in t
        p = pages["/packs"].text
        assert "deploy" in p and "v1" in p and f'href="/memories/{ids["fact"]}"' in p
        s = pages["/snapshots"].text
        assert "Half migrated" in s and "in progress" in s and "finance &lt;script&gt;" in s
        assert "drop the old table" in s
        m = http.get(f"{dashboard.url}/memories/{ids['traj']}")
        assert m.status_code == 200 and "The deploy job fails on a cold runner" in m.text
        listed = http.get(f"{dashboard.url}/memories?kind=trajectory")
        assert listed.status_code == 200 and f'href="/memories/{ids["traj"]}"' in listed.text
        i = pages["/injections"].text
        assert "<td>boot</td>" in i
        assert (
            http.get(dashboard.url + "/snapshots?project=nothing").text.count("No snapshots for nothing") == 1
        )
        assert scalar(conn, "SELECT count(*) FROM brain.injection WHERE trigger = 'pack'") == 0, (
            "the dashboard renders packs without counting an injection"
        )
    finally:
        next(ui, None)
