"""python -m bench.experiments.searchab: search's function files at two revisions, on one server.

Two runs of `make bench` compare two checkouts on two copies of the data and at two
moments of the machine's load; a change to search alone is better judged on one
server and one copy of a workspace, its two versions of sql/functions/005*.sql
(005-search.sql and its parts) applied in turn. This takes a workspace the benchmark
saved (`python -m bench --data-dir DIR`), copies it, migrates the copy with this
checkout, and then for each round applies the files as of REV, times the searches,
applies the files of this checkout, times them again: hybrid searches (text and
vector), vector only, lexical only, and hybrid with a 1% tag filter and with a 10% kinds
filter, as the benchmark's client role, each the median of its searches' times in the
database (bench.latency's timer, as `make bench` reads them; the first five of a round
left out: plans). The version at REV must run on this checkout's schema (its
search_result type and tables).

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
from bench.experiments import saved_workspace_copy
from bench.server import CLIENT_PASSWORD, CLIENT_ROLE

SEARCH_FILES = "sql/functions/005"  # 005-search.sql and its parts, 005a-... to 005d-...
COPY = "bench_searchab"


def _search(
    conn: psycopg.Connection,
    rows: list[tuple[str, list[float]]],
    kind: str,
    tags: list[str],
) -> float:
    """The median of the searches' times in the database (the bench's own timer), the first five
    left out: plans. kind: hybrid, vector only, lexical only, or hybrid with a filter (the 1% tag
    filter, the 10% kinds filter)."""
    times = [
        latency.timed_search(
            conn,
            "" if kind == "vector only" else " ".join(headline.split()[:4]),
            None if kind == "lexical only" else vector,
            tags=[tags[i]] if kind == "1% tag filter" else None,
            kinds=["rule"] if kind == "10% kinds filter" else None,
        )["ms"]
        for i, (headline, vector) in enumerate(rows)
    ]
    return statistics.median(times[5:])


KINDS = ("hybrid", "vector only", "lexical only", "1% tag filter", "10% kinds filter")


def _floor(
    owner: psycopg.Connection, rows: list[tuple[str, list[float]]], tags: list[str]
) -> dict[str, float]:
    """The least statements doing each kind's work, in the same round (bench.latency's raw floor,
    as the superuser): the least hybrid statement (both legs at search's depth, fused), HNSW
    top-10, full-text top-10, the 1% tag filter's HNSW top-10. Medians, the first five left out."""
    space, through, dims = owner.execute(
        "SELECT space_id, indexed_through, dims FROM brain.embedding_space WHERE workspace_id = 1"
        " ORDER BY space_id LIMIT 1"
    ).fetchone()
    candidates, ef = owner.execute(
        "SELECT (brain.setting('search_candidates'))::integer, (brain.setting('hnsw_ef_search'))::integer"
    ).fetchone()
    statements = {
        "hybrid": latency.RAW_LEAST_HYBRID.format(
            space=space, through=through, dims=dims, candidates=candidates
        ),
        "vector only": latency.RAW_HNSW.format(space=space, through=through, dims=dims),
        "lexical only": latency.RAW_FTS,
    }
    out: dict[str, list[float]] = {}
    with owner.transaction():
        owner.execute(f"SET LOCAL hnsw.ef_search = {max(int(ef), int(candidates))}")
        owner.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        for i, (headline, vector) in enumerate(rows):
            (tsq,) = owner.execute(
                "SELECT brain.lexical_query(%s)::text", (" ".join(headline.split()[:4]),)
            ).fetchone()
            vec = "[" + ",".join(repr(float(x)) for x in vector) + "]"
            tagged = latency.RAW_FILTERED_HNSW.format(space=space, through=through, dims=dims, tag=tags[i])
            for kind, sql in (*statements.items(), ("1% tag filter", tagged)):
                (ms,) = owner.execute(
                    "SELECT ms FROM pg_temp.bench_t_raw(%s, %s, %s)", (sql, vec, tsq)
                ).fetchone()
                out.setdefault(kind, []).append(ms)
    return {kind: statistics.median(times[5:]) for kind, times in out.items()}


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
    with saved_workspace_copy(args.data_dir, args.size, COPY) as (server, owner):
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
        owner.execute(latency.RAW_TIMER)
        figures: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.rounds):
            for kind, median in _floor(owner, rows, tags).items():
                figures.setdefault(("least statement", kind), []).append(round(median, 2))
            for side, text in ((args.rev, before), ("this checkout", after)):
                owner.execute(text)
                with psycopg.connect(client_url, autocommit=True) as client:
                    for kind in KINDS:
                        median = round(_search(client, rows, kind, tags), 2)
                        figures.setdefault((side, kind), []).append(median)
        owner.execute(after)
        print(
            f"brain.search at {args.size} memories: p50 ms of {len(rows) - 5} searches a round,"
            f" {args.rounds} rounds"
        )
        for (side, kind), values in figures.items():
            print(f"  {side:>15} {kind:16} median {statistics.median(values):6.2f}  rounds {values}")


if __name__ == "__main__":
    main()
