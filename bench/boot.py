"""boot_session latency in the database, on a loaded synthetic workspace.

The workspace gets 500 rules (100 BLOCKER, 400 PATTERN) and 200 open tasks on
top of its memories, with embeddings, so the PATTERN ranking by the task
embedding does real work. Each boot is timed inside the database like the
other latencies (a bench_t wrapper reading clock_timestamp()), with a task
embedding (ranked patterns) and without one. Each boot registers a session,
which is ended after the timing.

Each boot also records its injection (brain.injection); the cost of recording
one is measured apart, as brain.record_injection of a search's ten results in
a session, and of the use of one of them (brain.note_use, which recall, rate and supersede call).
"""

from __future__ import annotations

import random
from typing import Any

import psycopg

from bench import hashvec, latency
from bench.util import log, summary

TIMER = """
CREATE OR REPLACE FUNCTION bench_t.bench_t_boot(p_task text, p_embedding double precision[],
                                                OUT tokens integer, OUT ms double precision)
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz := clock_timestamp();
    payload jsonb;
BEGIN
    payload := brain.boot_session(source => 'bench', project => '', task => p_task,
                                  task_embedding => p_embedding);
    ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
    tokens := (payload->>'tokens')::integer;
    -- End it outside the timing, so the next boot does not list a crowd of siblings.
    PERFORM brain.end_session((payload->>'session_id')::bigint);
END
$$;
"""

INJECTION_TIMER = """
CREATE OR REPLACE FUNCTION bench_t.bench_t_injection(
    p_session bigint, p_items bigint[], OUT record_ms double precision, OUT use_ms double precision)
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz := clock_timestamp();
BEGIN
    PERFORM brain.record_injection('search', p_items, 120, false, p_session);
    record_ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
    t0 := clock_timestamp();
    PERFORM brain.note_use(p_items[1:1], 'recall', p_session);
    use_ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
END
$$;
"""

VERBS = ["deploy", "migrate", "review", "profile", "debug", "document", "release", "test"]
THINGS = [
    "the billing service",
    "the search cluster",
    "the auth tokens",
    "the CI cache",
    "the queue workers",
    "the staging database",
    "the mobile app",
    "the metrics pipeline",
]


def _rules_and_tasks(conn: psycopg.Connection, rnd: random.Random) -> None:
    rows = []
    for i in range(500):
        severity = "BLOCKER" if i < 100 else "PATTERN"
        text = f"Rule {i}: {rnd.choice(VERBS)} {rnd.choice(THINGS)} only after {rnd.choice(VERBS)}ing it"
        rows.append(("rule", severity, text))
    for i in range(200):
        rows.append(("task", None, f"Task {i}: {rnd.choice(VERBS)} {rnd.choice(THINGS)} this week"))
    vectors = hashvec.vectors([r[2] for r in rows])
    with conn.cursor() as cur:
        for (kind, severity, text), v in zip(rows, vectors, strict=True):
            cur.execute(
                "SELECT brain.remember(kind => %s, severity => %s, headline => %s, priority => %s, "
                "embedding => %s, origin => 'observed')",
                (
                    kind,
                    severity,
                    text,
                    1 + rnd.randrange(5) if kind == "task" else None,
                    [float(x) for x in v],
                ),
            )


def run(
    conn: psycopg.Connection, *, seed: int, n: int = 100, owner: psycopg.Connection | None = None
) -> dict[str, Any]:
    """Boots timed on conn (the client role); owner (the superuser, when given) runs ANALYZE,
    which only the table's owner may."""
    rnd = random.Random(seed)
    log("  boot_session: adding 500 rules and 200 open tasks")
    _rules_and_tasks(conn, rnd)
    (owner or conn).execute("ANALYZE brain.memory")
    latency.install_timers(owner or conn, TIMER)
    tasks = [f"{rnd.choice(VERBS)} {rnd.choice(THINGS)}" for _ in range(n)]
    vectors = hashvec.vectors(tasks)
    with_task, without, tokens = [], [], []
    for task, v in zip(tasks, vectors, strict=True):
        t, ms = conn.execute(
            "SELECT * FROM bench_t.bench_t_boot(%s, %s)", (task, [float(x) for x in v])
        ).fetchone()
        with_task.append(ms)
        tokens.append(t)
        _, ms = conn.execute("SELECT * FROM bench_t.bench_t_boot(NULL, NULL)").fetchone()
        without.append(ms)
    out = {
        "with_task_embedding": summary(with_task),
        "without_task": summary(without),
        **_injections(conn, rnd, n, owner),
        **_pinned(conn, tasks, vectors),
        "tokens": summary([float(t) for t in tokens], 0),
        "boots": 2 * n,
        "rules": 500,
        "open_tasks": 200,
    }
    ranked = out["with_task_embedding"]
    log(
        f"  boot_session: p50 {ranked['p50']} ms, p95 {ranked['p95']} ms "
        f"(task embedding); p50 {out['without_task']['p50']} ms without"
    )
    return out


PINNED = 10


def _pinned(conn: psycopg.Connection, tasks: list[str], vectors: list) -> dict[str, Any]:
    """The same boots with PINNED facts of the global scope pinned (brain.pin as conn, the client
    role): each pinned line is looked at for a newer statement that may replace it. Unpinned after."""
    ids = [
        r[0]
        for r in conn.execute(
            "SELECT memory_id FROM brain.memory WHERE kind = 'fact' AND origin = 'explicit' AND project = ''"
            " AND state = 'active' AND NOT pinned ORDER BY memory_id LIMIT %s",
            (PINNED,),
        )
    ]
    for i in ids:
        conn.execute("SELECT brain.pin(%s)", (i,))
    try:
        boot = "SELECT ms FROM bench_t.bench_t_boot(%s, %s)"
        times = [
            conn.execute(boot, (task, [float(x) for x in v])).fetchone()[0]
            for task, v in zip(tasks, vectors, strict=True)
        ]
    finally:
        for i in ids:
            conn.execute("SELECT brain.unpin(%s)", (i,))
    out = {"with_pinned": summary(times), "pinned": len(ids)}
    log(f"  boot_session with {len(ids)} pinned facts: p50 {out['with_pinned']['p50']} ms (task embedding)")
    return out


def _injections(
    conn: psycopg.Connection, rnd: random.Random, n: int, owner: psycopg.Connection | None
) -> dict[str, Any]:
    """brain.record_injection of ten memory ids in a live session, and the use of one of them,
    timed on conn (the client role); the timer installed by owner when given."""
    latency.install_timers(owner or conn, INJECTION_TIMER)
    session = conn.execute(
        "SELECT brain.boot_session(source => 'bench-injections') ->> 'session_id'"
    ).fetchone()[0]
    ids = [r[0] for r in conn.execute("SELECT memory_id FROM brain.memory ORDER BY random() LIMIT 1000")]
    records, uses = [], []
    for _ in range(max(n, 200)):
        r, u = conn.execute(
            "SELECT * FROM bench_t.bench_t_injection(%s, %s)", (int(session), rnd.sample(ids, 10))
        ).fetchone()
        records.append(r)
        uses.append(u)
    conn.execute("SELECT brain.end_session(%s)", (int(session),))
    out = {"injection_record": summary(records), "injection_use": summary(uses)}
    log(
        f"  injection telemetry: record p50 {out['injection_record']['p50']} ms, "
        f"use p50 {out['injection_use']['p50']} ms"
    )
    return out


def run_shaped(server: Any, *, seed: int, size: int, n: int = 100) -> dict[str, Any]:
    """boot_session in the shape the target names: `size` memories of which only the 500
    rules and 200 open tasks added here are rules and tasks (the rest facts and incidents)."""
    from bench import loader
    from bench.corpus import Generator

    name = f"bench_boot_{size}"
    log(f"== boot_session: {size:,} facts and incidents, 500 rules, 200 open tasks (database {name})")
    url = server.create_database(name)
    corpus = [m for m in Generator(seed).memories(int(size * 1.25)) if m.kind in ("fact", "incident")][:size]
    with server.connect(name) as conn:
        space_id = loader.register_space(conn, "hash", "feature-hash-v1", 384, statements=True)
    loader.load(url, corpus, space_id=space_id)
    with server.connect(name) as conn, server.connect_client(name) as client:
        loader.set_workspace(conn, 1)
        loader.set_workspace(client, 1)
        out = run(client, seed=seed, n=n, owner=conn)
        out["memories"] = conn.execute("SELECT count(*) FROM brain.memory").fetchone()[0]
        out["timed_as"] = "client role (row-level security)"
    server.drop_database(name)
    return out
