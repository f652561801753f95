"""python -m bench.experiments.filtercost: hybrid search unfiltered, scoped to a project and
filtered to one kind, on a saved workspace spread over projects.

The benchmark's workspace is one project; a user's holds many, and filters keep shares
of it that lie near the query or far from it (a project's memories spread evenly, a
kind's rules apart from the facts the queries are). This copies a workspace the benchmark
saved (`python -m bench --data-dir DIR`), migrates the copy with this checkout, gives each
memory one of `--projects` projects by its id, and times 45 hybrid searches (the first 45
memories' headlines and vectors) per variant as the benchmark's client role, in the
database, for `--rounds` rounds; each round prints p50, p95 and the mean of its searches
but the first five (plans). Run it from two checkouts in turn (PYTHONPATH) to compare.

    python -m bench.experiments.filtercost --data-dir /path/to/bench-data --size 100000 \\
        --variants "unfiltered,project,kinds rule,kinds fact"
"""

from __future__ import annotations

import argparse
import statistics

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from bench.experiments import saved_workspace_copy
from bench.server import CLIENT_PASSWORD, CLIENT_ROLE

COPY = "bench_filtercost"
TIMER = """
CREATE OR REPLACE FUNCTION bench_t.bench_t_fsearch(p_query text, p_embedding double precision[],
    p_project text, p_kinds text[], OUT n integer, OUT ms double precision)
LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
    SELECT count(*) INTO n
    FROM brain.search(query => p_query, query_embedding => p_embedding, project => p_project,
                      kinds => p_kinds, max_results => 10, min_relevance => 0);
    ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
END $$;
GRANT EXECUTE ON FUNCTION bench_t.bench_t_fsearch TO PUBLIC;
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", required=True, help="a data directory `python -m bench` kept")
    parser.add_argument("--size", type=int, default=100000)
    parser.add_argument("--projects", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--variants", default="unfiltered,project,kinds rule,kinds fact")
    args = parser.parse_args()
    with saved_workspace_copy(args.data_dir, args.size, COPY) as (server, owner):
        # each memory a project by its id (a second copy of a text in one project gets a suffix:
        # the normalized text is unique in its kind and project)
        owner.execute("SET session_replication_role = replica")
        owner.execute(
            "UPDATE brain.memory m SET project = 'p' || (m.memory_id %% %(n)s)"
            " || CASE WHEN d.rn > 1 THEN '-' || d.rn ELSE '' END"
            " FROM (SELECT memory_id, row_number() OVER ("
            "           PARTITION BY kind, normalized_hash, memory_id %% %(n)s ORDER BY memory_id) AS rn"
            "       FROM brain.memory WHERE workspace_id = 1) d"
            " WHERE m.workspace_id = 1 AND d.memory_id = m.memory_id",
            {"n": args.projects},
        )
        owner.execute("RESET session_replication_role")
        owner.execute("VACUUM ANALYZE brain.memory")
        owner.execute(TIMER)
        queries = owner.execute(
            "SELECT m.headline, e.embedding::real[], m.project FROM brain.memory m"
            " JOIN brain.embedding e USING (workspace_id, memory_id) WHERE m.workspace_id = 1"
            " ORDER BY m.memory_id LIMIT 45"
        ).fetchall()
        url = make_conninfo(
            **(conninfo_to_dict(server.url(COPY)) | {"user": CLIENT_ROLE, "password": CLIENT_PASSWORD})
        )
        with psycopg.connect(url, autocommit=True) as c:
            c.execute("SELECT set_config('brain.workspace', '1', false)")
            for n in range(args.rounds):
                for variant in args.variants.split(","):
                    times = []
                    for headline, vector, project in queries:
                        _, ms = c.execute(
                            "SELECT * FROM bench_t.bench_t_fsearch(%s, %s, %s, %s)",
                            (
                                headline,
                                list(vector),
                                project if variant == "project" else None,
                                [variant.split()[1]] if variant.startswith("kinds ") else None,
                            ),
                        ).fetchone()
                        times.append(ms)
                    kept = sorted(times[5:])
                    print(
                        f"round {n + 1} {variant:12s} p50 {statistics.median(kept):7.2f} ms"
                        f"  p95 {kept[int(len(kept) * 0.95)]:7.2f}  mean {statistics.mean(kept):7.2f}"
                    )


if __name__ == "__main__":
    main()
