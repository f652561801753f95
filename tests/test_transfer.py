"""Export and import: the JSONL round trip, the Markdown export, and the importers
of other tools' formats (fixtures in tests/fixtures/transfer/)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import psycopg
import pytest
from helpers import remember, rows, scalar, unit

from pybrain.client import Brain
from pybrain.embed import get_embedder
from pybrain.transfer import (
    claude_code,
    detect_format,
    import_documents,
    mem0,
    native,
    notes,
    ownsona,
    summarize,
)

FIXTURES = Path(__file__).parent / "fixtures" / "transfer"
LINKS = ("supersedes", "superseded_by", "replaced_by")


def build_workspace(brain: Brain, conn: psycopg.Connection) -> dict[str, int]:
    """Every kind, every state, a supersede chain of three, annotations, pins, ratings, a fold."""
    ids: dict[str, int] = {}
    r1 = brain.remember("rule", "Deploy only from the release branch", severity="BLOCKER", tags=["deploy"])
    r2 = brain.supersede(
        r1.memory_id, "Deploy only from a tagged release branch", reason="tags pin what shipped"
    )
    r3 = brain.supersede(
        r2.memory_id,
        "Deploy only signed tags of the release branch",
        reason="unsigned tags were pushed by the bot",
        body="Check the signature with git tag -v before the pipeline starts.",
    )
    ids.update(rule_v1=r1.memory_id, rule_v2=r2.memory_id, rule_v3=r3.memory_id)
    pattern = brain.remember(
        "rule", "Name migrations by their number and purpose", severity="PATTERN", category="procedural"
    )
    ids["pattern"] = pattern.memory_id
    skill = brain.remember(
        "rule",
        "Run database migrations with the checksum test first",
        severity="PATTERN",
        skill_trigger={
            "name": "db-migrations",
            "keywords": ["migration"],
            "projects": [],
            "always_on": False,
        },
    )
    ids["skill"] = skill.memory_id
    fact = brain.remember(
        "fact",
        "The payments API answers within 300 ms at the 99th percentile",
        body="Measured over November with @maria on the load test rig. #performance",
        metadata={"ticket": "OPS-12"},
        importance=0.8,
    )
    ids["fact"] = fact.memory_id
    brain.pin(fact.memory_id, source="lead")
    brain.rate(fact.memory_id, "up", source="maria")
    brain.rate(fact.memory_id, "up", source="tom")
    brain.rate(pattern.memory_id, "down", source="tom")
    brain.annotate(fact.memory_id, "Re-measure after the connection pool change.", source="maria")
    brain.annotate(fact.memory_id, "Confirmed again on the new hardware.", source="tom")
    incident = brain.remember(
        "incident",
        "Nightly export filled the disk on the reporting host",
        what_was_wrong="exports were written to /tmp without rotation",
        what_is_correct="write exports to /srv/exports and keep seven days",
        error_message="No space left on device",
        command_attempted="pg_dump reporting > /tmp/reporting.sql",
        related_files=["ops/cron/export.sh"],
        complexity="medium",
    )
    ids["incident"] = incident.memory_id
    task = brain.remember("task", "Rotate the reporting exports weekly", priority=2)
    brain.update_task(task.memory_id, status="blocked", note="waiting for the new volume")
    ids["task"] = task.memory_id
    done = brain.remember("task", "Write the export runbook", priority=4)
    brain.update_task(done.memory_id, status="done")
    ids["task_done"] = done.memory_id
    archived = brain.remember("fact", "The old build server runs Jenkins 2.346 on port 8080")
    brain.archive(archived.memory_id, reason="the build server was retired")
    ids["archived"] = archived.memory_id
    gone = brain.remember("fact", "The office wifi password rotates every quarter")
    kept = brain.remember("fact", "The office wifi password rotates on the first of each month")
    brain.forget(gone.memory_id, reason="the rotation schedule changed", replaced_by=kept.memory_id)
    ids.update(tombstoned=gone.memory_id, replacement=kept.memory_id)
    # A fold: a queued near-identical write folds into the older memory; the
    # longer text survives and the earlier one is kept as a fold record.
    survivor = remember(conn, kind="fact", headline="Build uses make", embedding=unit(1.0))
    queued = remember(conn, kind="fact", headline="Build uses make, run from the repository root")
    conn.execute("SELECT brain.attach_embedding(%s, %s)", (queued["memory_id"], unit(0.96)))
    ids.update(survivor=survivor["memory_id"], folded=queued["memory_id"])
    brain.recall(fact.memory_id)
    return ids


def export_docs(brain: Brain, **kwargs: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    docs = list(native.documents(brain, **kwargs))
    return docs[0], docs[1:]


def comparable(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Documents with every id replaced by the memory's position in the export, and the
    session ids (a workspace's own) left out: what round-trips exactly."""
    position = {d["id"]: n for n, d in enumerate(docs)}
    out = []
    for d in docs:
        d = copy.deepcopy(d)
        d.pop("line", None)  # where the reader found it in its file
        d["metadata"].pop("import", None)  # the import's mark on what it claimed
        d["id"] = position[d["id"]]
        for key in LINKS:
            if d.get(key) is not None:
                d[key] = position[d[key]]
        d.pop("session_id")
        for a in d["annotations"]:
            a.pop("id")
        for f in d["folds"]:
            f.pop("session_id")
            if f.get("folded_memory_id") is not None:
                f["folded_memory_id"] = position[f["folded_memory_id"]]
        out.append(d)
    return out


def new_workspace(database: str, name: str) -> int:
    """A new workspace (as the owner) whose admin is the test role."""
    with psycopg.connect(database, autocommit=True) as admin:
        (created,) = admin.execute("SELECT brain.create_workspace(%s)", (name,)).fetchone()
        admin.execute("SELECT brain.grant_workspace('brain_tester', %s, 'admin')", (created["workspace"],))
        return created["workspace"]


def test_round_trip_into_an_empty_workspace(brain: Brain, conn, database: str, tmp_path: Path) -> None:
    ids = build_workspace(brain, conn)
    path = tmp_path / "export.jsonl"
    with path.open("w", encoding="utf-8") as f:
        count = native.write_jsonl(brain, f, include_vectors=True)
    header, docs = native.read_jsonl(path)
    assert header["format"] == "pybrain-memories" and header["version"] == 2
    assert count == header["memories"] == len(docs) == scalar(conn, "SELECT count(*) FROM brain.memory")
    assert {d["state"] for d in docs} == {"active", "superseded", "archived", "tombstoned"}
    assert {d["kind"] for d in docs} == {"rule", "fact", "incident", "task"}
    by_id = {d["id"]: d for d in docs}
    assert by_id[ids["rule_v1"]]["superseded_by"] == ids["rule_v2"]
    assert by_id[ids["rule_v3"]]["supersedes"] == ids["rule_v2"]
    assert [f["headline"] for f in by_id[ids["survivor"]]["folds"]] == ["Build uses make"]
    assert all(v["provider"] == "hash" and len(v["values"]) == v["dims"] for d in docs for v in d["vectors"])

    brain.workspace = 1  # the test role is a member of two workspaces now: it names the one it means
    target = Brain(conn, workspace=new_workspace(database, "restored"), embedder=get_embedder("hash"))
    target.use_embedding_space()
    # The owner trusts its own export: pins, ratings and access counts come along.
    result = import_documents(target, docs, source="round-trip", trust_file=True)
    assert summarize(result) == {"created": len(docs)}
    assert sum(r["vectors"] for r in result) == sum(len(d["vectors"]) for d in docs)

    _, again = export_docs(target, include_vectors=True)
    assert comparable(again) == comparable(docs)
    new_ids = {d["id"]: n["id"] for d, n in zip(docs, again, strict=True)}
    # The chain reads as before in the new workspace: recall of the first version
    # points at the current truth; the rule's severity history is kept.
    recalled = target.recall(new_ids[ids["rule_v1"]])
    assert recalled["current_id"] == new_ids[ids["rule_v3"]]
    assert recalled["severity"] == "DEPRECATED" and recalled["prior_severity"] == "BLOCKER"
    assert target.history(new_ids[ids["rule_v3"]])["chain"][0]["id"] == new_ids[ids["rule_v1"]]
    # Every imported memory has an audit row naming what it was imported from.
    with target.transaction() as cur:
        cur.execute("SELECT detail FROM brain.audit WHERE action = 'insert'")
        audits = cur.fetchall()
    assert sorted(a["detail"]["imported_id"] for a in audits) == sorted(by_id)

    # Importing the same file again stores nothing twice.
    assert summarize(import_documents(target, docs)) == {"skipped": len(docs)}
    assert target.value("database_counts")["memories"] == brain.value("database_counts")["memories"]


def test_import_goes_through_the_gate(brain: Brain, conn) -> None:
    brain.remember("fact", "Backups are kept for thirty days")
    docs = [
        {"id": 1, "kind": "fact", "headline": "Backups are kept for thirty days"},
        {
            "id": 2,
            "kind": "fact",
            "headline": "The CI token",
            "body": "token = ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2,
        },
        {
            "id": 3,
            "kind": "rule",
            "headline": "Never skip the migration checksum test",
            "severity": "SOMETIMES",
        },
        {"id": 4, "kind": "fact", "headline": "Archived memories stay searchable", "state": "lost"},
        {"id": 5, "kind": "task", "headline": "Renew the TLS certificate", "priority": 9},
        {"id": 6, "kind": "fact", "headline": "Restores are tested every quarter", "supersedes": 2},
        "not a document",
    ]
    result = import_documents(brain, docs)
    outcome = {r["item"]: (r["action"], r["error_code"]) for r in result}
    assert outcome == {
        1: ("skipped", None),
        2: ("rejected", "BR007"),
        3: ("rejected", "BR002"),
        4: ("rejected", "BR009"),
        5: ("rejected", "BR009"),
        6: ("created", None),
        7: ("rejected", "BR009"),
    }
    secret = next(r for r in result if r["item"] == 2)
    assert "ghp_" not in secret["error"], "the refusal never echoes the secret"
    assert scalar(conn, "SELECT count(*) FROM brain.memory WHERE body LIKE '%ghp_%'") == 0
    created = next(r for r in result if r["item"] == 6)
    assert (
        scalar(conn, "SELECT supersedes FROM brain.memory WHERE memory_id = %s", (created["memory_id"],))
        is None
    )


def test_a_superseded_memory_without_its_successor_stays_out_of_default_reads(brain: Brain, conn) -> None:
    docs = [
        {
            "id": 7,
            "kind": "fact",
            "headline": "Logs are kept for a week",
            "state": "superseded",
            "superseded_by": 8,
            "superseded_at": "2025-10-01T00:00:00+00:00",
            "supersede_reason": "policy",
        },
        {
            "id": 8,
            "kind": "fact",
            "headline": "Logs are kept for thirty days",
            "body": "ghp_" + "Z9y8X7w6V5u4T3s2R1q0" * 2,
        },
    ]
    result = import_documents(brain, docs)
    assert [r["action"] for r in result] == ["created", "rejected"]
    state = rows(conn, "SELECT state, superseded_by, archived_at FROM brain.memory")
    assert [(s["state"], s["superseded_by"]) for s in state] == [("archived", None)]
    assert state[0]["archived_at"].year == 2025
    # Imported again: the record is there already (the secret is refused again).
    assert [r["action"] for r in import_documents(brain, docs)] == ["skipped", "rejected"]


def test_markdown_export_shows_chains(brain: Brain, conn, tmp_path: Path) -> None:
    ids = build_workspace(brain, conn)
    files = native.write_markdown(brain, tmp_path / "md")
    names = sorted(str(f.relative_to(tmp_path / "md")) for f in files)
    assert names == ["_global/facts.md", "_global/incidents.md", "_global/rules.md", "_global/tasks.md"]
    rules = (tmp_path / "md" / "_global" / "rules.md").read_text()
    chain = f"#{ids['rule_v1']} → #{ids['rule_v2']} → #{ids['rule_v3']}"
    assert f"Earlier versions ({chain})" in rules
    assert rules.index("Deploy only signed tags") < rules.index("Deploy only from a tagged release branch")
    assert "Superseded by" in rules and "unsigned tags were pushed by the bot" in rules
    facts = (tmp_path / "md" / "_global" / "facts.md").read_text()
    assert "## Archived" in facts and "## Forgotten" in facts
    assert "Annotation (maria): Re-measure after the connection pool change." in facts
    assert "pinned" in facts and "rated +2/-0" in facts
    assert "Folded in: Build uses make" in facts


def test_ownsona_export(brain: Brain, conn) -> None:
    path = FIXTURES / "ownsona-export.json"
    assert detect_format(path) == "ownsona"
    result = import_documents(brain, ownsona.read(path), source="import:ownsona")
    assert [(r["old_id"], r["action"], r["error_code"]) for r in result] == [
        (101, "created", None),
        (102, "created", None),
        (103, "created", None),
        (104, "rejected", "BR007"),
    ]
    got = {
        r["source_ref"]: r
        for r in rows(conn, "SELECT m.*, brain.memory_json(m.memory_id) AS doc FROM brain.memory m")
    }
    assert set(got) == {"memories/101", "memories/102", "memories/103"}
    staging = got["memories/101"]
    assert staging["source_system"] == "ownsona" and staging["source_agent"] == "claude-desktop"
    assert staging["body"].startswith("The staging database is restored from the nightly snapshot")
    assert staging["tags"] == ["staging", "database"] and staging["record_version"] == 2
    assert staging["metadata"]["ownsona"]["source_conversation_id"] == "conv-8841"
    assert staging["created_at"].isoformat().startswith("2025-11-02T09:14:22")
    deleted = got["memories/102"]
    assert deleted["state"] == "tombstoned"
    assert deleted["replaced_by"] == got["memories/103"]["memory_id"], "replaced_by_id is remapped"
    assert deleted["forget_reason"] == "billing moved to the ledger service"
    assert len(got["memories/103"]["headline"].split()) <= 15


def test_mem0_export(brain: Brain, conn) -> None:
    path = FIXTURES / "mem0-export.json"
    assert detect_format(path) == "mem0"
    result = import_documents(brain, mem0.read(path))
    assert summarize(result) == {"created": 3}
    got = {r["source_ref"]: r for r in rows(conn, "SELECT * FROM brain.memory")}
    coffee = got["3c90c3cc-0d44-4b50-8888-8dd25736052a"]
    assert coffee["headline"] == "Prefers dark roast coffee and drinks it without sugar"
    assert coffee["source_system"] == "mem0" and coffee["source_hash"] == "8f4a2a3c1d2e9b7f6a5c4d3e2f1a0b9c"
    assert coffee["tags"] == ["food", "preferences"]
    assert coffee["metadata"] == {
        "source": "chat",
        "mem0": {"user_id": "alice", "categories": ["food", "preferences"]},
        "import": {
            "source": "import",
            "trusted": False,
            "claims": ["created_at", "updated_at", "source_system", "source_ref", "source_hash"],
            "later_than_import": {},
            "not_taken": [],
        },
    }
    peanuts = got["7b1e2c9a-5f3d-4e8b-9a6c-2d1f0e3b4a5c"]
    assert peanuts["metadata"]["mem0"]["agent_id"] == "travel-agent"
    assert peanuts["updated_at"] == peanuts["created_at"], "no updated_at: the creation time"
    # The same export again: every memory is already there.
    assert summarize(import_documents(brain, mem0.read(path))) == {"skipped": 3}


def test_markdown_notes_with_front_matter(brain: Brain, conn) -> None:
    folder = FIXTURES / "notes"
    assert detect_format(folder) == "markdown"
    docs = notes.read(folder)
    result = import_documents(brain, docs, source="import:markdown")
    assert {r["action"] for r in result} == {"created"}
    got = rows(conn, "SELECT * FROM brain.memory ORDER BY memory_id")
    by_ref: dict[str, list[dict[str, Any]]] = {}
    for m in got:
        by_ref.setdefault(m["source_ref"], []).append(m)
    assert set(by_ref) == {
        "engineering/release-process",
        "engineering/handbook",
        "meetings/2025-11-14-retro.md",
        "no-front-matter.md",
    }
    (release,) = by_ref["engineering/release-process"]
    assert release["headline"] == "Release process" and release["category"] == "procedural"
    assert release["origin"] == "artifact" and release["source_system"] == "markdown"
    assert release["tags"] == ["releases", "ci", "deploy"], "front-matter tags, then #tags of the text"
    assert release["body"].startswith("Releases are cut from"), "the title heading is not repeated"
    assert release["created_at"].date().isoformat() == "2025-10-01"
    (retro,) = by_ref["meetings/2025-11-14-retro.md"]
    assert retro["category"] == "meeting" and retro["tags"] == ["retro", "team"]
    assert retro["people"] == ["maria"] and retro["action_items"]
    assert retro["metadata"]["front_matter"] == {"aliases": ["November retro"]}
    (tuning,) = by_ref["no-front-matter.md"]
    assert tuning["headline"] == "Vector index tuning"
    parts = by_ref["engineering/handbook"]
    assert len(parts) > 1, "a note longer than one memory is split into parts"
    assert [p["metadata"]["chunk"] for p in parts] == list(range(1, len(parts) + 1))
    assert all(p["headline"].startswith("Architecture handbook (part ") for p in parts)
    assert "Section 60 covers" in parts[-1]["body"]
    # Unchanged notes imported again: nothing new.
    assert {r["action"] for r in import_documents(brain, notes.read(folder))} == {"skipped"}


def test_claude_code_transcripts(brain: Brain, conn) -> None:
    folder = FIXTURES / "claude-code"
    (transcript,) = claude_code.transcripts(folder)
    assert detect_format(transcript) == "claude-code"
    result = claude_code.observe(brain, folder, project="shop")
    assert summarize(result) == {"created": 4}
    got = rows(conn, "SELECT * FROM brain.memory ORDER BY memory_id")
    sid = "5e3c1a2b-7d4f-4c8e-9b1a-0f2e3d4c5b6a"
    assert [m["source_ref"] for m in got] == [f"{sid}/u-1", f"{sid}/u-2", f"{sid}/u-4", f"{sid}/u-6"]
    assert {(m["origin"], m["source_system"], m["project"]) for m in got} == {
        ("observed", "claude-code", "shop")
    }
    assert [m["metadata"]["role"] for m in got] == ["user", "assistant", "assistant", "user"]
    assert got[0]["metadata"]["timestamp"] == "2025-11-18T09:00:01.120Z"
    assert got[0]["metadata"]["cwd"] == "/home/dev/shop"
    found = got[2]["headline"] + "\n" + got[2]["body"]
    assert "fifty round trips" in found and "ANY(item_ids)" in found, "both text blocks of the turn"
    assert not any("load_prices(items)" in m["body"] for m in got), "tool results are left out"
    assert not any("local-command-caveat" in m["body"] + m["headline"] for m in got), (
        "meta lines are left out"
    )
    hits = brain.search("checkout cart price table round trips")
    assert hits and hits[0]["id"] == got[2]["memory_id"]
    # The same transcript again (a later capture of a growing session): nothing twice.
    assert summarize(claude_code.observe(brain, folder, project="shop")) == {"skipped": 4}


def test_cli_export_and_import(brain_cli, brain: Brain, conn, tmp_path: Path) -> None:
    build_workspace(brain, conn)
    out = tmp_path / "all.jsonl"
    r = brain_cli("export", str(out))
    assert r.exit_code == 0, r.output
    n = scalar(conn, "SELECT count(*) FROM brain.memory")
    assert r.output.strip() == f"exported {n} memories to {out}"
    r = brain_cli("import", str(out))
    assert r.exit_code == 0, r.output
    assert f"imported {n} items: {n} skipped" in r.output
    r = brain_cli("import", str(FIXTURES / "ownsona-export.json"), "--json")
    assert r.exit_code == 1, "a rejected item is reported with exit code 1"
    payload = json.loads(r.output)
    assert payload["counts"] == {"created": 3, "rejected": 1}
    assert payload["embedded"] == 2, "imported memories are embedded (not the tombstoned one)"
    r = brain_cli("export", "--markdown", str(tmp_path / "md"))
    assert r.exit_code == 0 and "Markdown files" in r.output


@pytest.mark.parametrize(
    "line", ['{"format": "other", "version": 1}', '{"format": "pybrain-memories", "version": 9}']
)
def test_an_unknown_export_is_refused(tmp_path: Path, line: str) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(Exception) as err:
        native.read_jsonl(path)
    assert "version" in str(err.value) or "not a pybrain export" in str(err.value)


def test_sessions_handoffs_and_snapshots_round_trip(
    brain: Brain, conn, database: str, tmp_path: Path
) -> None:
    """Export carries the sessions (with their handoffs and snapshots) and the handoffs stored
    apart; an import into another workspace gives its next session the same handoff."""
    brain.remember("fact", "The billing export runs at 02:00 UTC", project="billing")
    first = brain.boot_session("claude-code", project="billing", cwd="/src/billing")["session_id"]
    brain.end_session(
        first,
        "Export fix merged; rerun 2026-11-19 next.",
        {"summary": "IAM policy fixed", "status": "in progress", "blockers": [], "pending": ["rerun"]},
    )
    second = brain.boot_session("claude-code", project="billing", cwd="/src/billing")["session_id"]
    brain.end_session(second)  # ended with nothing to hand off
    live = brain.boot_session("cursor", project="web", cwd="/src/web", task="Fix the login form")[
        "session_id"
    ]
    late = brain.end_session_of(
        "claude-code", project="billing", cwd="/elsewhere", handoff="Rerun done: 18,204."
    )
    assert late["handoff_id"] is not None

    path = tmp_path / "export.jsonl"
    with path.open("w", encoding="utf-8") as f:
        assert native.write_jsonl(brain, f) == 1
    header, docs, records = native.read_export(path)
    assert header["version"] == 2 and (header["sessions"], header["handoffs"]) == (3, 1)
    assert len(docs) == 1 and native.read_jsonl(path)[1] == docs
    sessions = [r for r in records if r["record"] == "session"]
    assert [s["id"] for s in sessions] == [first, second, live]
    assert sessions[0]["handoff"] == "Export fix merged; rerun 2026-11-19 next."
    assert sessions[0]["snapshot"]["pending"] == ["rerun"]
    assert "pid" not in sessions[0]
    (apart,) = [r for r in records if r["record"] == "handoff"]
    assert (apart["text"], apart["session_id"]) == ("Rerun done: 18,204.", None)

    brain.workspace = 1
    target = Brain(conn, workspace=new_workspace(database, "restored"), embedder=get_embedder("hash"))
    target.use_embedding_space()
    rows = native.import_records(target, records)
    assert summarize(rows) == {"created": 4}
    with target.transaction() as cur:
        cur.execute(
            "SELECT source, status, end_reason, handoff, snapshot FROM brain.session ORDER BY started_at"
        )
        restored = cur.fetchall()
    assert [(r["source"], r["status"], r["handoff"]) for r in restored] == [
        ("claude-code", "ended", "Export fix merged; rerun 2026-11-19 next."),
        ("claude-code", "ended", None),
        ("cursor", "ended", None),  # an imported session is not live here
    ]
    assert restored[0]["snapshot"]["summary"] == "IAM policy fixed"
    payload = target.boot_session("claude-code", project="billing", cwd="/src/billing")
    assert payload["sections"]["handoff"]["text"] == "Rerun done: 18,204."
    # Imported again: nothing twice.
    assert summarize(native.import_records(target, records)) == {"skipped": 4}

    # A secret in an imported handoff is refused, never stored.
    secret = "key AKIA2E3KQ7ZP4XWN6RLM"
    bad = [{**sessions[0], "id": 99, "started_at": "2026-01-01T00:00:00Z", "handoff": secret}]
    (row,) = native.import_records(target, bad)
    assert (row["action"], row["error_code"]) == ("rejected", "BR007")


def test_a_bad_value_refuses_its_line_alone(brain_cli, conn, tmp_path: Path) -> None:
    """NaN (which Python's json writes and PostgreSQL's refuses), a date that is not one and a
    number that is not one: each refuses its own line, named by number, field and type, never
    echoing the value; the rest of the file is imported."""
    lines = [
        '{"format": "pybrain-memories", "version": 2}',
        '{"id": 1, "kind": "fact", "headline": "The build cache lives on the CI volume"}',
        '{"id": 2, "kind": "fact", "headline": "Importance is a number", "importance": NaN}',
        '{"id": 3, "kind": "fact", "headline": "Dates are dates", "created_at": "around teatime-ish"}',
        '{"id": 4, "kind": "task", "headline": "Priorities are numbers", "priority": "urgent-ish"}',
        '{"id": 5, "kind": "fact", "headline": "Half-lives are finite", "halflife_days": "Infinity"}',
        '{"id": 6, "kind": "fact", "headline": "Times are finite", "created_at": "-infinity"}',
        '{"id": 7, "kind": "fact", "headline": "The release train leaves on Thursdays"}',
        '{"record": "session", "id": 1, "source": "claude", "started_at": "half past teatime"}',
    ]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    r = brain_cli("import", str(path), "--json", "--no-embed")
    assert r.exit_code == 1, r.output
    out = json.loads(r.output)
    assert out["counts"] == {"created": 2, "rejected": 6}
    refused = {row["line_number"]: row for row in out["rows"] if row["action"] == "rejected"}
    assert sorted(refused) == [3, 4, 5, 6, 7, 9]
    assert {row["error_code"] for row in refused.values()} == {"BR009"}
    assert "NaN" in refused[3]["error"]
    assert refused[4]["error"] == "created_at is not a time."
    assert refused[5]["error"] == "priority is not a whole number."
    assert "halflife_days" in refused[6]["error"] and "created_at" in refused[7]["error"]
    assert refused[9]["line"] == "session" and "started_at" in refused[9]["error"]
    assert not any(v in r.output for v in ("teatime", "urgent-ish")), "values are never repeated"
    r = brain_cli("import", str(path), "--no-embed")
    assert f"{path} line 4: rejected (BR009): created_at is not a time." in r.output


def test_a_nan_in_another_tools_export_refuses_its_entry_alone(brain: Brain, tmp_path: Path) -> None:
    path = tmp_path / "mem0.json"
    path.write_text(
        '{"results": [{"id": "a", "memory": "Prefers tea in the morning", "metadata": {"score": NaN}},'
        ' {"id": "b", "memory": "Works from Lisbon on Fridays"}]}',
        encoding="utf-8",
    )
    rows = import_documents(brain, mem0.read(path))
    assert [(r["item"], r["action"], r["error_code"]) for r in rows] == [
        (1, "rejected", "BR009"),
        (2, "created", None),
    ]
    assert "NaN or infinite" in rows[0]["error"]


def test_a_restored_row_redacted_into_another_active_text_is_kept_apart(admin) -> None:
    """The restore's gate (brain._gate_restored) redacts a secret that a row edited behind
    the API holds; when the redacted text is another active memory's, the row keeps it under
    its own key (its normalized text marked with its id), and the gate goes on."""
    admin.execute("SELECT set_config('brain.workspace', '1', false)")
    text = "The deploy token is {} for now"
    (kept,) = admin.execute(
        "SELECT memory_id FROM brain.remember(kind => 'fact', headline => %s)",
        (text.format("[redacted:github-token]"),),
    ).fetchone()
    secret = text.format("ghp_" + "Zq4" * 12)
    admin.execute("SET session_replication_role = replica")
    try:
        (edited,) = admin.execute(
            "INSERT INTO brain.memory (kind, headline, normalized) VALUES ('fact', %s, lower(%s))"
            " RETURNING memory_id",
            (secret, secret),
        ).fetchone()
    finally:
        admin.execute("SET session_replication_role = origin")
    gate = admin.execute("SELECT brain._gate_restored()").fetchone()[0]
    assert [m["id"] for m in gate["memories"]] == [edited]
    rows = dict(
        admin.execute(
            "SELECT memory_id, (headline, normalized, state) FROM brain.memory WHERE memory_id IN (%s, %s)",
            (kept, edited),
        ).fetchall()
    )
    norm = admin.execute("SELECT brain.normalize_text(%s, '')", (text.format("[redacted:github-token]"),))
    norm = norm.fetchone()[0]
    assert rows[kept] == (text.format("[redacted:github-token]"), norm, "active")
    assert rows[edited] == (text.format("[redacted:github-token]"), f"{norm} #{edited}", "active")
