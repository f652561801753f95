"""python -m bench.experiments.writecost: where a remember's time goes, beside the raw write.

Issue 42 asks that a write cost at most twice the raw work it needs: the nearest
neighbour of its vector through the HNSW index, then an INSERT of the row and of its
vector (bench.latency's raw write, the same statements `make bench` times). This
takes a workspace the benchmark saved (`python -m bench --data-dir DIR`), copies it,
migrates the copy with this checkout and, for each round, times new facts stored by
brain.remember as the benchmark's client role (precomputed hash vectors, the gate's
check run before the round as the client runs it) and the same facts written raw by
the superuser. PostgreSQL's function statistics (track_functions = all, reset before
each timed remember round) give each function's own time (self_time: its statements,
their index updates included, and not the functions it calls), summed here into what
a write does:

- floor: the work the raw write also does (the memory row and its kind row, the
  vector and its HNSW insert, the nearest-neighbour walk);
- secrets: every field scanned for credentials (brain._refuse_secrets and its parts);
- audit: the audit row, with the memory's snapshot;
- guard: the write guard's reading of the call stack on every guarded statement;
- tenancy: the workspace and the role's access, looked up by row-level security and
  by the functions;
- the rest, named by function.

    python -m bench.experiments.writecost --data-dir /path/to/bench-data --size 10000 --rounds 3
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import time
from collections import defaultdict
from pathlib import Path

import psycopg

from bench import hashvec, latency
from bench.corpus import Generator
from bench.experiments import saved_workspace_copy

COPY = "bench_writecost"
TRACK = {"track_functions": "all"}  # each function's own time (pg_stat_user_functions)

PARTS = {
    "floor": {
        "_store_vectors",
        "_store_memories",
        "_near_write",
        "_nearest_k",
        "_lock_near",
        "_store_kind_rows",
    },
    "secrets": {"_refuse_secrets", "scan_secrets", "_scan_rules", "_field_text", "_secret_variant"},
    "audit": {"_audit_many", "_audit", "_audit_guard", "_memory_docs"},
    "guard": {"_api_frame", "_write_guard"},
    "tenancy": {"_access", "current_workspace", "_default_workspace"},
}


def _part(function: str) -> str:
    return next((part for part, names in PARTS.items() if function in names), function)


def _facts(gen: Generator, n: int, tag: str) -> list:
    """n new facts, each of a wording of its own (the round's tag in its headline)."""
    out = []
    while len(out) < n:
        m = gen.memory()
        if m.kind == "fact":
            out.append(dataclasses.replace(m, headline=f"{m.headline} ({tag} {len(out)})"))
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.experiments.writecost", description=__doc__)
    p.add_argument("--data-dir", type=Path, required=True, help="a data directory `python -m bench` kept")
    p.add_argument("--size", type=int, default=10000, help="the saved workspace's size (10000, 100000)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--writes", type=int, default=100, help="writes a round, each way")
    args = p.parse_args(argv)

    with saved_workspace_copy(args.data_dir, args.size, COPY, settings=TRACK) as (server, owner):
        owner.execute(latency.RAW_TIMER)
        space, through, dims = owner.execute(
            "SELECT s.space_id, s.indexed_through, s.dims FROM brain.active_embedding_space() AS s"
        ).fetchone()
        probe = latency.RAW_HNSW.format(space=space, through=through, dims=dims).replace(
            "LIMIT 10", "LIMIT 1"
        )
        gen = Generator(4242 + args.size)
        rounds: list[dict] = []
        for r in range(args.rounds):
            # pybrain: the gate's check first (as the client does), then the timed writes
            items = _facts(gen, args.writes, f"round {r}")
            with psycopg.connect(server.client_url(COPY), autocommit=True) as client:
                client.execute("SELECT set_config('brain.workspace', '1', false)")
                inputs = [
                    client.execute(
                        "SELECT embedding_input FROM brain.remember(kind => %(kind)s,"
                        " headline => %(headline)s, body => %(body)s, check_only => true)",
                        m.remember_args(),
                    ).fetchone()[0]
                    for m in items
                ]
                client.execute("SELECT pg_stat_force_next_flush()")
                client.execute("SELECT 1")
            vecs = hashvec.vectors(inputs)
            owner.execute("SELECT pg_stat_force_next_flush()")
            owner.execute("SELECT 1")
            time.sleep(0.5)
            owner.execute("SELECT pg_stat_reset()")
            owner.execute("SELECT pg_stat_clear_snapshot()")
            with psycopg.connect(server.client_url(COPY), autocommit=True) as client:
                client.execute("SELECT set_config('brain.workspace', '1', false)")
                times, outcomes = [], defaultdict(int)
                for m, v in zip(items, vecs, strict=True):
                    a = m.remember_args()
                    action, *_, code, ms = client.execute(
                        "SELECT * FROM bench_t.bench_t_remember(" + ", ".join(["%s"] * 13) + ")",
                        (a["kind"], a["headline"], a["body"], a["category"], a["project"], a["tags"],
                         a.get("severity"), a.get("status"), a.get("priority"), a.get("error_message"),
                         a.get("what_was_wrong"), a.get("what_is_correct"), latency._vec(v)),
                    ).fetchone()  # fmt: skip
                    outcomes[f"{action} ({code})" if code else action] += 1
                    times.append(ms)
                client.execute("SELECT pg_stat_force_next_flush()")
                client.execute("SELECT 1")
            time.sleep(0.5)
            parts: dict[str, float] = defaultdict(float)
            calls: dict[str, float] = defaultdict(float)
            for name, n, self_ms in owner.execute(
                "SELECT funcname, calls, self_time FROM pg_stat_user_functions WHERE schemaname = 'brain'"
            ):
                parts[_part(name)] += self_ms / len(items)
                calls[name] += n / len(items)  # (both current_workspace functions)
            # the raw write of the same facts, by the superuser
            raw = [
                owner.execute(
                    "SELECT ms FROM pg_temp.bench_t_raw_write(%s, %s, %s, %s, %s, %s, %s)",
                    (m.kind, m.headline + " (raw)", m.body, m.project, space, latency._vec_text(v), probe),
                ).fetchone()[0]
                for m, v in zip(items, vecs, strict=True)
            ]
            rounds.append(
                {
                    "remember": statistics.median(times),
                    "raw": statistics.median(raw),
                    "outcomes": dict(outcomes),
                    "parts": dict(parts),
                    "calls": {
                        k: calls[k] for k in ("current_workspace", "_access", "_api_frame", "_scan_rules")
                    },
                    "load": os.getloadavg()[0],
                }
            )

    print(
        f"remember of a new fact at {args.size:,} memories,"
        f" {args.writes} writes a round, {args.rounds} rounds"
    )
    for i, r in enumerate(rounds):
        print(
            f"  round {i + 1}: remember p50 {r['remember']:.2f} ms, raw write p50 {r['raw']:.2f} ms,"
            f" ratio {r['remember'] / r['raw']:.2f}; load {r['load']:.1f}; {r['outcomes']};"
            f" calls a write {r['calls']}"
        )
    med = {k: statistics.median(r[k] for r in rounds) for k in ("remember", "raw")}
    print(
        f"  median: remember {med['remember']:.2f} ms, raw {med['raw']:.2f} ms,"
        f" ratio {med['remember'] / med['raw']:.2f}"
    )
    names = sorted(
        {k for r in rounds for k in r["parts"]},
        key=lambda k: -statistics.median(r["parts"].get(k, 0) for r in rounds),
    )
    print("  own time a write (ms, median of the rounds; functions' self time, as the client role):")
    shown = 0.0
    for name in names:
        v = statistics.median(r["parts"].get(name, 0) for r in rounds)
        shown += v
        if name in PARTS or v >= 0.05:
            print(f"    {name:28} {v:6.2f}")
    print(f"    {'(all functions)':28} {shown:6.2f}")


if __name__ == "__main__":
    main()
