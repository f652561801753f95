"""python -m bench.experiments.searchab: search's function files at two revisions, on one server.

Two runs of `make bench` compare two checkouts on two copies of the data and at two
moments of the machine's load; a change to search alone is better judged on one
server and one copy of a workspace, its two versions of sql/functions/005*.sql
(005-search.sql and its parts) applied in turn. This takes a workspace the benchmark
saved (`python -m bench --data-dir DIR`), copies it, migrates the copy with this
checkout, and then for each round applies the files as of REV, times the searches,
applies the files of this checkout, times them again: hybrid searches (text and
vector) and the same with a 1% tag filter, as the benchmark's client role, each the
median of its searches' times in the database (bench.latency's timer, as `make bench`
reads them; the first five of a round left out: plans). The version at REV must run
on this checkout's schema (its search_result type and tables).

    python -m bench.experiments.searchab --data-dir /path/to/bench-data --size 10000 --rev 070bef9
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
from pathlib import Path

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from bench import latency
from bench.experiments import copy_saved_workspace
from bench.server import CLIENT_PASSWORD, CLIENT_ROLE, BenchServer

SEARCH_FILES = "sql/functions/005"  # 005-search.sql and its parts, 005a-... to 005d-...
COPY = "bench_searchab"


def _search(conn: psycopg.Connection, rows: list[tuple[str, list[float]]], tags: list[str] | None) -> float:
    """The median of the searches' times in the database (the bench's own timer), the first five
    left out: plans."""
    times = [
        latency.timed_search(conn, " ".join(headline.split()[:4]), vector, tags=[tags[i]] if tags else None)[
            "ms"
        ]
        for i, (headline, vector) in enumerate(rows)
    ]
    return statistics.median(times[5:])


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.experiments.searchab", description=__doc__)
    p.add_argument("--data-dir", type=Path, required=True, help="a data directory `python -m bench` kept")
    p.add_argument("--size", type=int, default=10000, help="the saved workspace's size (10000, 100000)")
    p.add_argument("--rev", default="HEAD", help="the revision compared with this one (its search files)")
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--queries", type=int, default=60)
    args = p.parse_args(argv)

    repo = Path(__file__).resolve().parents[2]
    listed = subprocess.run(
        ["git", "-C", str(repo), "ls-tree", "--name-only", args.rev, "sql/functions/"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    before = "\n".join(
        subprocess.run(
            ["git", "-C", str(repo), "show", f"{args.rev}:{name}"], capture_output=True, text=True, check=True
        ).stdout
        for name in sorted(n for n in listed if n.startswith(SEARCH_FILES) and n.endswith(".sql"))
    )
    after = "\n".join(p.read_text() for p in sorted((repo / "sql" / "functions").glob("005*.sql")))
    server = BenchServer(args.data_dir)
    try:
        owner = copy_saved_workspace(server, args.size, COPY)
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
        figures: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.rounds):
            for side, text in ((args.rev, before), ("this checkout", after)):
                owner.execute(text)
                with psycopg.connect(client_url, autocommit=True) as client:
                    for kind, with_tags in (("hybrid", None), ("1% tag filter", tags)):
                        figures.setdefault((side, kind), []).append(
                            round(_search(client, rows, with_tags), 2)
                        )
        owner.execute(after)
        owner.close()
        print(
            f"brain.search at {args.size} memories: p50 ms of {len(rows) - 5} searches a round,"
            f" {args.rounds} rounds"
        )
        for (side, kind), values in figures.items():
            print(f"  {side:>14} {kind:14} median {statistics.median(values):6.2f}  rounds {values}")
    finally:
        with server.admin() as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {COPY} WITH (FORCE)")
        server.close()


if __name__ == "__main__":
    main()
