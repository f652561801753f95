"""Backups: pg_dump of the whole database, drop, restore, and the count check."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import psycopg
import pytest
from conftest import TEST_ROLE, new_database, with_database
from psycopg.conninfo import conninfo_to_dict
from test_transfer import build_workspace

from pybrain import db
from pybrain.client import Brain
from pybrain.embed import get_embedder
from pybrain.errors import BrainError
from pybrain.transfer import backup


def test_backup_drop_restore(brain: Brain, conn, database: str, admin_url: str, tmp_path: Path) -> None:
    ids = build_workspace(brain, conn)
    conn.execute("SELECT brain.boot_session(source => 'claude', project => 'shop', cwd => '/home/dev/shop')")
    before = [h["id"] for h in brain.search("signed tags release branch")]
    assert before[0] == ids["rule_v3"]
    conn.close()

    out = backup.backup(database, tmp_path / "nightly.dump")
    manifest = json.loads((tmp_path / "nightly.dump.json").read_text())
    assert manifest["counts"] == out["counts"]
    assert out["counts"]["memories"] == {"active": 9, "superseded": 2, "archived": 1, "tombstoned": 2}
    assert (
        out["counts"]["annotations"] == 2 and out["counts"]["folds"] == 1 and out["counts"]["sessions"] == 1
    )
    assert out["counts"]["audit"] > 20
    assert "brain_user" in manifest["roles"]

    name = conninfo_to_dict(database)["dbname"]
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE {name} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {name}")
    restored = backup.restore(tmp_path / "nightly.dump", database)
    assert restored["count_check"] is True
    assert restored["counts"] == manifest["counts"]

    # The application role works on the restored database as before: grants and
    # row-level security came back with it, and search finds the same memory.
    user_url = with_database(database, name, user=TEST_ROLE, password="test")
    with psycopg.connect(user_url, autocommit=True) as again:
        after = Brain(again, embedder=get_embedder("hash"))
        assert [h["id"] for h in after.search("signed tags release branch")] == before
        assert after.recall(ids["rule_v1"])["current_id"] == ids["rule_v3"]
        assert db.is_current(again)
    with psycopg.connect(database, autocommit=True) as owner:
        assert (
            owner.execute(
                "SELECT nspowner::regrole::text FROM pg_namespace WHERE nspname = 'brain'"
            ).fetchone()[0]
            == "brain_owner"
        ), "a restore gives schema brain back to its owner, not a superuser"

    # Nothing of the restore stays behind, and plpgsql is still closed to PUBLIC.
    with psycopg.connect(admin_url, autocommit=True) as admin:
        assert not admin.execute(
            "SELECT FROM pg_database WHERE datname ~ '^brain_(restore|reference)_'"
            " UNION ALL SELECT FROM pg_roles WHERE rolname ~ '^brain_restore_'"
        ).fetchall()
    with psycopg.connect(database) as again:
        assert not again.execute("SELECT has_language_privilege('public', 'plpgsql', 'USAGE')").fetchone()[0]

    # A restore never goes into a database that has pybrain in it.
    with pytest.raises(BrainError, match="already has a brain schema"):
        backup.restore(tmp_path / "nightly.dump", database)


def test_a_manifest_changed_after_the_backup_is_refused(
    brain: Brain, database: str, admin_url: str, tmp_path: Path
) -> None:
    brain.remember("fact", "Backups are checked by their counts")
    backup.backup(database, tmp_path / "b.dump")
    manifest_path = tmp_path / "b.dump.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["counts"]["memories"]["active"] += 1
    manifest_path.write_text(json.dumps(manifest))
    with new_database(admin_url, f"{conninfo_to_dict(database)['dbname']}_copy") as target:
        with pytest.raises(backup.RestoreRefused, match="changed after `brain backup` wrote it"):
            backup.restore(tmp_path / "b.dump", target)
        with psycopg.connect(target) as c:
            assert c.execute("SELECT to_regnamespace('brain')").fetchone()[0] is None


def test_cli_backup_and_restore_into_a_new_data_directory(
    brain_cli, brain: Brain, database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    brain.remember("fact", "The staging bucket is emptied every Sunday night")
    monkeypatch.setenv("BRAIN_DATABASE_URL", database)  # the owner's URL, as `brain init` uses
    file = tmp_path / "brain.dump"
    r = brain_cli("backup", str(file))
    assert r.exit_code == 0, r.output
    assert r.output.startswith(f"backup: {file} (") and "memories: 1 active" in r.output

    # A file without its manifest is refused with the hint, and no server is started for it.
    bare = tmp_path / "bare.dump"
    bare.write_bytes(file.read_bytes())
    r = brain_cli("restore", str(bare), "--home", str(tmp_path / "never"))
    assert r.exit_code == 1 and "has no manifest" in r.output and "--without-manifest" in r.output, r.output
    assert not (tmp_path / "never").exists()

    # A new data directory outside pytest's (which is private to its user, and
    # the embedded server runs as its own user under root), as conftest's server.
    scratch = tempfile.TemporaryDirectory(prefix="pybrain-restore-")
    home = Path(scratch.name) / "restored-home"
    monkeypatch.delenv("BRAIN_DATABASE_URL")
    try:
        r = brain_cli("restore", str(file), "--home", str(home))
        assert r.exit_code == 0, r.output
        assert f"restored {file} into {home / 'pgdata'}" in r.output
        assert "count check: ok" in r.output
        monkeypatch.setenv("BRAIN_HOME", str(home))
        r = brain_cli("search", "staging bucket emptied", "--json")
        assert r.exit_code == 0, r.output
        assert [h["headline"] for h in json.loads(r.output)] == [
            "The staging bucket is emptied every Sunday night"
        ]
        # The embedded database backs up the same way (its superuser, no URL to give).
        r = brain_cli("backup", str(tmp_path / "embedded.dump"), "--json")
        assert r.exit_code == 0, r.output
        assert (
            json.loads(r.output)["counts"] == json.loads((tmp_path / "brain.dump.json").read_text())["counts"]
        )
        r = brain_cli("restore", "12")
        assert r.exit_code == 1 and "#12" in r.output, "a number still restores a memory"
    finally:
        db.EmbeddedServer(home).stop()
        scratch.cleanup()


def _postgres_of(home: Path) -> list[int]:
    """The PostgreSQL processes whose command line names home."""
    import psutil

    found = []
    for p in psutil.process_iter(["pid", "cmdline"]):
        cmdline = " ".join(p.info["cmdline"] or [])
        if "postgres" in cmdline and str(home) in cmdline:
            found.append(p.info["pid"])
    return found


def test_a_refused_restore_stops_the_server_it_started_and_removes_the_home_it_made(
    brain_cli, brain: Brain, database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    brain.remember("fact", "The staging bucket is emptied every Sunday night")
    with psycopg.connect(database, autocommit=True) as admin:
        # An index pybrain never builds (watermark 0 is never in a name): the schema check refuses it,
        # after the server for the restore was started.
        admin.execute(
            "CREATE INDEX embedding_hnsw_1_0 ON brain.embedding USING hnsw ((embedding::public.vector(384))"
            " public.vector_cosine_ops) WITH (m = 16, ef_construction = 128)"
            " WHERE space_id = 1 AND ingest_seq <= 0"
        )
    monkeypatch.setenv("BRAIN_DATABASE_URL", database)
    refused, good = tmp_path / "refused.dump", tmp_path / "good.dump"
    assert brain_cli("backup", str(refused)).exit_code == 0
    with psycopg.connect(database, autocommit=True) as admin:
        admin.execute("DROP INDEX brain.embedding_hnsw_1_0")
    assert brain_cli("backup", str(good)).exit_code == 0
    monkeypatch.delenv("BRAIN_DATABASE_URL")

    scratch = tempfile.TemporaryDirectory(prefix="pybrain-restore-")
    home = Path(scratch.name) / "restored-home"
    try:
        r = brain_cli("restore", str(refused), "--home", str(home))
        print(f"refused restore into a new home: exit {r.exit_code}; home left: {home.exists()}")
        assert r.exit_code == 1 and "not the one pybrain's migrations make" in r.output, r.output
        assert not home.exists() and _postgres_of(home) == []

        # Into a home whose server runs and holds a restored database: a failed restore leaves both.
        assert brain_cli("restore", str(good), "--home", str(home)).exit_code == 0
        running = db.EmbeddedServer(home).status()
        assert running.running
        r = brain_cli("restore", str(refused), "--home", str(home))
        assert r.exit_code == 1, r.output
        assert db.EmbeddedServer(home).status().pid == running.pid
        with psycopg.connect(running.url) as c:
            assert backup.counts(c)["memories"]["active"] == 1
    finally:
        db.EmbeddedServer(home).stop()
        scratch.cleanup()


def test_backup_verify_restores_into_a_scratch_server_and_compares(
    brain_cli, brain: Brain, database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    brain.remember("fact", "The staging bucket is emptied every Sunday night")
    brain.remember("rule", "Release branches are cut from main with signed tags")
    brain.observe([f"Build {i} of the release branch passed" for i in range(3)])
    monkeypatch.setenv("BRAIN_DATABASE_URL", database)
    file = tmp_path / "verified.dump"
    r = brain_cli("backup", str(file), "--verify")
    print(r.output)
    assert r.exit_code == 0, r.output
    assert "verify: counts the same as the manifest's" in r.output
    assert "verify: search 'Build 2 of the release branch passed' in workspace 1: " in r.output
    assert "the same as at backup time" in r.output and r.output.rstrip().endswith("verify: ok")
    scratch = r.output.split("scratch server (", 1)[1].split(", removed)")[0]
    assert not Path(scratch).exists() and _postgres_of(Path(scratch)) == []

    # A search that finds other memories than at backup time is a mismatch.
    made = backup.backup(database, tmp_path / "again.dump", sample=True)
    sample = made["sample_search"]
    assert sample["ids"]
    report = backup.verify_restore(tmp_path / "again.dump", {**sample, "ids": [*sample["ids"][::-1], 10**9]})
    print(report["mismatches"])
    assert not report["ok"] and report["counts"] == made["counts"]
    assert report["mismatches"] == ["search 'Build 2 of the release branch passed' found other memories"]
    assert not Path(report["scratch"]).exists()
