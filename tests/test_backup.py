"""Backups: pg_dump of the whole database, drop, restore, and the count check."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

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


def _restores(database: str, admin_url: str, path: Path, step: str) -> dict[str, Any]:
    """The backup at path restored into a new database: its counts checked, and a search there."""
    out = backup.backup(database, path)
    with new_database(admin_url, f"{conninfo_to_dict(database)['dbname']}_r") as target:
        try:
            restored = backup.restore(path, target)
        except backup.RestoreRefused as refused:
            pytest.fail(f"after {step}: {refused.message} {refused.detail}")
        assert restored["count_check"] is True, step
        assert restored["counts"] == out["counts"], step
        user_url = with_database(target, conninfo_to_dict(target)["dbname"], user=TEST_ROLE, password="test")
        with psycopg.connect(user_url, autocommit=True) as again:
            found = Brain(again, embedder=get_embedder("hash")).search("deploy window staging cluster")
    return {"counts": out["counts"], "found": [h["headline"] for h in found]}


def test_every_backup_restores_after_writes_indexing_reembedding_and_an_upgrade(
    brain: Brain, conn, database: str, admin_url: str, tmp_path: Path
) -> None:
    """A backup after each of the things that change a database restores, with the same counts
    and the same search: a batch the worker indexes rebuilds the space's index under a new name
    (embedding_hnsw_<space>_<seq>), a second space and its index, a migrate run again."""
    steps: list[str] = []

    def check(step: str) -> None:
        steps.append(step)
        got = _restores(database, admin_url, tmp_path / f"{len(steps)}.dump", step)
        with psycopg.connect(
            with_database(database, conninfo_to_dict(database)["dbname"], user=TEST_ROLE, password="test"),
            autocommit=True,
        ) as here:
            expected = Brain(here, embedder=get_embedder("hash")).search("deploy window staging cluster")
        assert got["found"] == [h["headline"] for h in expected], step

    brain.remember("fact", "The deploy window for the staging cluster is Tuesday 10:00")
    check("a write")
    texts = [f"Staging cluster node {i} restarted after the deploy window" for i in range(150)]
    brain.observe(texts)  # a batch the index takes later
    conn.execute("SELECT brain.index_vectors()")
    assert (
        conn.execute(
            "SELECT count(*) FROM pg_indexes WHERE indexname ~ '^embedding_hnsw_[0-9]+_[0-9]+$'"
        ).fetchone()[0]
        == 1
    ), "the space's index was rebuilt under its new name"
    check("the worker indexed a batch")
    conn.execute("SELECT brain.use_embedding_space('hash', 'feature-hash-v2', 384)")
    check("a second embedding space")
    with psycopg.connect(database, autocommit=True) as owner:
        db.migrate(owner)
    check("migrate run again")
    assert len(steps) == 4


def test_a_database_upgraded_from_the_previous_release_backs_up_and_restores(
    admin_url: str, tmp_path: Path
) -> None:
    """Made by the previous release (its migrations and function files), written to, then
    upgraded by this one: its backup holds what today's migrations make, and restores."""
    from test_migrations import migrate_through

    with new_database(admin_url, "brain_upgraded_backup") as url:
        with psycopg.connect(url, autocommit=True) as conn:
            before = [p.name for p in db.sql_files("migrations")].index("027-schema-owner.sql")
            migrate_through(conn, before)
            for path in db.sql_files("functions"):
                if path.name < "026-ownership.sql":
                    conn.execute(path.read_text())
            conn.execute("SELECT set_config('brain.workspace', '1', false)")
            conn.execute("SELECT brain.use_embedding_space('hash', 'h', 3)")
            conn.execute(
                "SELECT brain.remember(kind => 'fact', headline => 'The deploy window is Tuesday',"
                " embedding => '{1,0,0}')"
            )
            assert db.migrate(conn).applied == ["027-schema-owner.sql"]
        out = backup.backup(url, tmp_path / "upgraded.dump")
        with new_database(admin_url, "brain_upgraded_restored") as target:
            restored = backup.restore(tmp_path / "upgraded.dump", target)
            assert restored["count_check"] is True and restored["counts"] == out["counts"]


def test_a_refused_restore_stops_the_server_it_started_and_removes_the_home_it_made(
    brain_cli, brain: Brain, database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    brain.remember("fact", "The staging bucket is emptied every Sunday night")
    with psycopg.connect(database, autocommit=True) as owner:  # something pybrain never makes
        owner.execute("CREATE INDEX not_pybrains ON brain.memory (headline)")
    file = tmp_path / "odd.dump"
    backup.backup(database, file)
    scratch = tempfile.TemporaryDirectory(prefix="pybrain-restore-")
    home = Path(scratch.name) / "restored-home"
    monkeypatch.delenv("BRAIN_DATABASE_URL", raising=False)
    try:
        r = brain_cli("restore", str(file), "--home", str(home))
        assert r.exit_code == 1 and "not pybrain's" in r.output, r.output
        assert not home.exists(), "the home it made is gone, with the server it started"
    finally:
        if home.exists():
            db.EmbeddedServer(home).stop()
        scratch.cleanup()


def test_backup_verify_restores_into_a_scratch_database_and_compares(
    brain_cli, brain: Brain, database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    brain.remember("fact", "The staging bucket is emptied every Sunday night")
    brain.remember("rule", "Never empty the production bucket by hand")
    monkeypatch.setenv("BRAIN_DATABASE_URL", database)  # the owner's URL, as `brain init` uses
    before = set(Path(tempfile.gettempdir()).glob("pybrain-verify-*"))
    r = brain_cli("backup", str(tmp_path / "v.dump"), "--verify")
    assert r.exit_code == 0, r.output
    assert "verify: restored into a scratch database (removed): the same counts" in r.output
    assert (
        "verify: workspace 1, search 'Never empty the production': the same 2 results, first #2" in r.output
    )
    assert set(Path(tempfile.gettempdir()).glob("pybrain-verify-*")) == before, "the scratch folder is gone"
    r = brain_cli("backup", str(tmp_path / "v2.dump"), "--verify", "--json")
    checked = json.loads(r.output)["verify"]
    assert checked["ok"] is True and checked["count_check"] is True
    assert checked["counts"]["memories"]["active"] == 2
