"""python -m bench.experiments.searchcost: where a search's time goes, by function.

Takes a workspace the benchmark saved (`python -m bench --data-dir DIR`), copies it with
PostgreSQL's function statistics on (track_functions = all), migrates the copy with this
checkout, runs searches of one kind as the benchmark's client role (a first round for
the plans, then the statistics reset and two rounds in a new session), and prints each function's own
time a search (self_time: its statements, not the functions it calls) and calls a search,
most first.

    python -m bench.experiments.searchcost --data-dir /path/to/bench-data --size 10000 --kind hybrid
"""

from __future__ import annotations

import random
import statistics
import time
from pathlib import Path

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from bench import boot, latency
from bench.experiments import parser, saved_workspace_copy
from bench.experiments.searchab import KINDS, _search
from bench.server import CLIENT_PASSWORD, CLIENT_ROLE

COPY = "bench_searchcost"
TRACK = {"track_functions": "all"}  # each function's own time (pg_stat_user_functions)


def main(argv: list[str] | None = None) -> None:
    p = parser("bench.experiments.searchcost", __doc__)
    p.add_argument("--data-dir", type=Path, required=True, help="a data directory `python -m bench` kept")
    p.add_argument("--size", type=int, default=10000)
    p.add_argument("--kind", choices=(*KINDS, "boot"), default="hybrid", help="boot: a boot with a task")
    p.add_argument("--queries", type=int, default=45)
    p.add_argument("--top", type=int, default=25)
    args = p.parse_args(argv)
    with saved_workspace_copy(args.data_dir, args.size, COPY, settings=TRACK) as (server, owner):
        rows = owner.execute(
            "SELECT m.headline, e.embedding::real[] FROM brain.memory m"
            " JOIN brain.embedding e USING (workspace_id, memory_id) WHERE m.workspace_id = 1"
            " ORDER BY m.memory_id LIMIT %s",
            (args.queries,),
        ).fetchall()
        rnd = random.Random(7)
        tags = [f"comp-{rnd.randrange(100):02d}" for _ in rows]
        client_url = make_conninfo(
            **(conninfo_to_dict(server.url(COPY)) | {"user": CLIENT_ROLE, "password": CLIENT_PASSWORD})
        )
        run = _search
        if args.kind == "boot":
            with psycopg.connect(client_url, autocommit=True) as client:
                client.execute("SELECT set_config('brain.workspace', '1', false)")
                boot._rules_and_tasks(client, random.Random(5))
            owner.execute("ANALYZE brain.memory")
            latency.install_timers(owner, boot.TIMER)

            def run(conn: psycopg.Connection, rows: list, kind: str, tags: list) -> float:
                conn.execute("SELECT set_config('brain.workspace', '1', false)")
                times = [
                    conn.execute(
                        "SELECT ms FROM bench_t.bench_t_boot(%s, %s)", (" ".join(h.split()[:4]), list(v))
                    ).fetchone()[0]
                    for h, v in rows
                ]
                return statistics.median(times[5:])

        with psycopg.connect(client_url, autocommit=True) as client:
            run(client, rows, args.kind, tags)  # plans
        owner.execute("SELECT pg_stat_reset()")
        with psycopg.connect(client_url, autocommit=True) as client:
            run(client, rows, args.kind, tags)  # plans of this session
            median = run(client, rows, args.kind, tags)
        time.sleep(2)  # the closed session's statistics reach the counters
        owner.execute("SELECT pg_stat_clear_snapshot()")
        (searches,) = owner.execute(
            "SELECT coalesce(sum(calls), 0) FROM pg_stat_user_functions"
            " WHERE schemaname = 'brain' AND funcname = %s",
            ("boot_session" if args.kind == "boot" else "search",),
        ).fetchone()
        stats = owner.execute(
            "SELECT p.funcname, p.calls, p.self_time FROM pg_stat_user_functions p"
            " WHERE p.schemaname = 'brain' AND p.funcname NOT IN ('adopt_role', '_claim_objects',"
            " '_hide_index_sizes', '_hide_workspace_sizes', '_grant_workspace')"
            " ORDER BY p.self_time DESC LIMIT %s",
            (args.top,),
        ).fetchall()
        n = max(int(searches), 1)
        print(f"{args.kind} search at {args.size} memories: p50 {median:.2f} ms; {n} searches profiled")
        print(f"  {'function':40} {'self ms/search':>14} {'calls/search':>12}")
        for name, calls, self_time in stats:
            print(f"  {name:40} {self_time / n:14.3f} {calls / n:12.1f}")
        print(f"  total self time a search: {statistics.fsum(s for _, _, s in stats) / n:.2f} ms")


if __name__ == "__main__":
    main()
