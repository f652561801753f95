"""Vectors of large batches: stored outside the HNSW index, ranked exactly meanwhile,
and indexed (with their near-identical dedup) by brain.index_vectors."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest
from conftest import with_database
from helpers import call_scalar, each_refused, raises_br, remember, rows, scalar, unit
from test_observe import observe
from test_search import ids, search


@pytest.fixture(autouse=True)
def small_batches_count_as_large(conn) -> None:
    conn.execute("SELECT brain.set_setting('index_defer_rows', '5')")


def texts(n: int, start: int = 0) -> list[str]:
    return [f"shard {i} of the nightly export finished" for i in range(start, start + n)]


def orthogonal(n: int, start: int = 0) -> list[list[float]]:
    return [unit(0.0, axis=i + 1) for i in range(start, start + n)]


def waiting(conn) -> int:
    return scalar(
        conn,
        "SELECT count(*) FROM brain.embedding e JOIN brain.embedding_space s USING (workspace_id, space_id)"
        " WHERE e.ingest_seq > s.indexed_through",
    )


def index_vectors(conn, **kwargs) -> dict:
    return call_scalar(conn, "index_vectors", **kwargs)


def index_all(conn) -> list[dict]:
    """brain.index_vectors until it has nothing to do, as `brain worker` runs it."""
    steps = []
    while (done := index_vectors(conn))["action"] != "none":
        steps.append(done)
        assert len(steps) < 20
    return steps


def index_names(conn) -> list[str]:
    return [
        r[0] for r in conn.execute("SELECT indexname FROM pg_indexes WHERE indexname LIKE 'embedding_hnsw_%'")
    ]


def index_definition(conn) -> str:
    (name,) = index_names(conn)
    return scalar(conn, "SELECT indexdef FROM pg_indexes WHERE indexname = %s", (name,))


def vector_plan(conn, vector: list[float]) -> str:
    """The plan of the vector lookup search and dedup make (brain._nearest_sql), with
    sorts off: the HNSW index when the query can use it, a sort only where it cannot."""
    conn.execute("SET enable_sort = off")
    # and an index where one serves (space_id's statistics say one space: a table of a few
    # rows is cheaper to read whole)
    conn.execute("SET enable_seqscan = off")
    query = scalar(
        conn,
        "SELECT brain._nearest_sql(brain.active_embedding_space(), %s, '', 'true', 10)",
        (f"'{vector}'::public.vector(384)",),
    )
    plan = "\n".join(
        r[0] for r in conn.execute(f"EXPLAIN SELECT * FROM ({query}) AS k ORDER BY k.dist LIMIT 10")
    )
    conn.execute("RESET enable_seqscan")
    return plan


def test_a_large_batch_waits_outside_the_index_and_is_found_exactly(conn) -> None:
    out = observe(conn, texts(8), embeddings=orthogonal(8))
    assert {r["action"] for r in out} == {"created"}
    assert waiting(conn) == 8
    assert index_definition(conn).endswith("WHERE ((space_id = 1) AND (ingest_seq <= 0))")
    assert "embedding_unindexed" in vector_plan(conn, orthogonal(1)[0])
    # the vector leg ranks them exactly: each text's own vector finds it first
    for r, v in zip(out, orthogonal(8), strict=True):
        found = search(conn, "", v, max_results=3)
        assert found[0]["id"] == r["memory_id"] and found[0]["vector_rank"] == 1


def test_index_vectors_rebuilds_the_index_then_drops_the_old_one_then_dedups(conn) -> None:
    out = observe(conn, texts(8), embeddings=orthogonal(8))
    first = index_vectors(conn)
    assert (first["action"], first["indexed"], first["waiting"]) == ("rebuilt", 8, 0)
    through = scalar(conn, "SELECT indexed_through FROM brain.embedding_space")
    assert through == scalar(conn, "SELECT max(ingest_seq) FROM brain.embedding") > 0
    assert sorted(index_names(conn)) == ["embedding_hnsw_1", f"embedding_hnsw_1_{through}"]
    assert f"embedding_hnsw_1_{through}" in vector_plan(conn, orthogonal(1)[0]), "the new index serves"
    assert index_vectors(conn)["action"] == "dropped"
    assert index_definition(conn).endswith(f"WHERE ((space_id = 1) AND (ingest_seq <= {through}))")
    assert (
        index_vectors(conn)["action"],
        scalar(conn, "SELECT folded_through FROM brain.embedding_space"),
    ) == (
        "folded",
        through,
    )
    assert index_vectors(conn)["action"] == "none"
    plan = vector_plan(conn, orthogonal(1)[0])
    assert f"embedding_hnsw_1_{through}" in plan and "embedding_unindexed" not in plan
    assert ids(search(conn, "", orthogonal(8)[5], max_results=1)) == [out[5]["memory_id"]]


def test_the_walk_of_a_rebuilt_index_is_written_when_the_files_are_applied(conn, admin) -> None:
    """Search's walk of a space's index is a function of the space and its watermark
    (005e-search-vector.sql) that applying the function files writes: after a rebuild, search
    runs the walk of the new index as a statement planned on each call until the files are
    applied again, and the step that drops the old index drops the old walk with it."""
    from pybrain import db

    def walks() -> list[str]:
        return [
            r["proname"]
            for r in rows(
                admin,
                "SELECT proname FROM pg_proc WHERE pronamespace = 'brain'::regnamespace"
                " AND proname ~ '^_search_vector_1_[0-9]+$' ORDER BY 1",
            )
        ]

    db.migrate(admin)
    assert walks() == ["_search_vector_1_0"]
    out = observe(conn, texts(8), embeddings=orthogonal(8))
    assert index_vectors(conn)["action"] == "rebuilt"
    through = scalar(conn, "SELECT indexed_through FROM brain.embedding_space")
    conn.execute("SELECT brain.set_setting('exact_rank_rows', '0')")  # the walk, however small
    assert walks() == ["_search_vector_1_0"]
    assert ids(search(conn, "", orthogonal(8)[5], max_results=1)) == [out[5]["memory_id"]]
    db.migrate(admin)
    assert walks() == ["_search_vector_1_0", f"_search_vector_1_{through}"]
    assert ids(search(conn, "", orthogonal(8)[5], max_results=1)) == [out[5]["memory_id"]]
    assert index_vectors(conn)["action"] == "dropped"
    assert walks() == [f"_search_vector_1_{through}"]
    assert ids(search(conn, "", orthogonal(8)[2], max_results=1)) == [out[2]["memory_id"]]


def test_few_waiting_vectors_are_inserted_into_the_index(conn) -> None:
    conn.execute("SELECT brain.set_setting('index_defer_rows', '100')")
    observe(conn, texts(12), embeddings=orthogonal(12))  # small: indexed at once
    conn.execute("SELECT brain.set_setting('index_defer_rows', '5')")
    out = observe(conn, texts(5, start=12), embeddings=orthogonal(5, start=12))
    assert waiting(conn) == 5
    conn.execute("SELECT brain.set_setting('index_rebuild_share', '0.5')")  # 5 of 12 indexed: insert
    done = index_vectors(conn, max_rows=3)
    assert (done["action"], done["indexed"], done["waiting"]) == ("inserted", 3, 2)
    moved = [r["memory_id"] for r in out[:3]]
    assert (
        rows(conn, "SELECT ingest_seq FROM brain.embedding WHERE memory_id = ANY (%s)", (moved,))
        == [{"ingest_seq": 0}] * 3
    ), "the oldest first, into the index as it is"
    assert index_names(conn) == ["embedding_hnsw_1"]
    assert index_vectors(conn)["indexed"] == 2 and waiting(conn) == 0


def test_near_identical_rows_of_a_large_batch_fold_when_indexed(conn) -> None:
    (kept,) = observe(conn, ["disk almost full on db-1"], embeddings=[unit(1.0)])
    batch = ["disk almost full on db-1 again", "disk almost full on db-1 again, still", *texts(4)]
    out = observe(conn, batch, embeddings=[unit(0.96), unit(0.97), *orthogonal(4, start=10)])
    assert [r["action"] for r in out] == ["created"] * 6, "dedup waits for the index"
    steps = index_all(conn)
    assert [s["action"] for s in steps] == ["rebuilt", "dropped", "folded"]
    assert sum(s["folded"] for s in steps) == 2
    states = rows(
        conn,
        "SELECT memory_id, state, replaced_by FROM brain.memory WHERE memory_id = ANY (%s) ORDER BY 1",
        ([kept["memory_id"], out[0]["memory_id"], out[1]["memory_id"]],),
    )
    assert states == [
        {"memory_id": kept["memory_id"], "state": "active", "replaced_by": None},
        {"memory_id": out[0]["memory_id"], "state": "tombstoned", "replaced_by": kept["memory_id"]},
        {"memory_id": out[1]["memory_id"], "state": "tombstoned", "replaced_by": kept["memory_id"]},
    ], "a chain: the second folds into where the first went"
    assert scalar(conn, "SELECT headline FROM brain.memory WHERE memory_id = %s", (kept["memory_id"],)) == (
        "disk almost full on db-1"
    ), "an observation's text is never rewritten: the later ones are its folds"
    dedups = rows(
        conn,
        "SELECT memory_id, detail->>'kept' AS kept FROM brain.audit WHERE action = 'dedup' ORDER BY audit_id",
    )
    assert dedups == [
        {"memory_id": out[0]["memory_id"], "kept": str(kept["memory_id"])},
        {"memory_id": out[1]["memory_id"], "kept": str(kept["memory_id"])},
    ]
    assert ids(search(conn, "disk almost full", unit(1.0), max_results=3))[0] == kept["memory_id"]


def test_inserted_vectors_fold_into_near_identical_ones(conn) -> None:
    conn.execute("SELECT brain.set_setting('index_defer_rows', '100')")
    (kept,) = observe(conn, ["disk almost full on db-1"], embeddings=[unit(1.0)])
    observe(conn, texts(20), embeddings=orthogonal(20, start=10))
    conn.execute("SELECT brain.set_setting('index_defer_rows', '5')")
    out = observe(
        conn,
        ["disk almost full on db-1 again", *texts(4, start=40)],
        embeddings=[unit(0.97), *orthogonal(4, start=40)],
    )
    done = index_vectors(conn)
    assert (done["action"], done["indexed"], done["folded"]) == ("inserted", 5, 1)
    assert (
        scalar(conn, "SELECT replaced_by FROM brain.memory WHERE memory_id = %s", (out[0]["memory_id"],))
        == (kept["memory_id"])
    )


def test_incidents_of_a_large_batch_are_not_folded(conn) -> None:
    observe(conn, ["pager fired for db-1"], kind="incident", embeddings=[unit(1.0)])
    observe(
        conn,
        ["pager fired for db-1 again", *texts(4)],
        kind="incident",
        embeddings=[unit(0.99), *orthogonal(4, start=10)],
    )
    assert sum(s["folded"] for s in index_all(conn)) == 0


def test_writes_dedup_against_waiting_vectors(conn) -> None:
    out = observe(conn, ["the cache was warmed before the deploy", *texts(4)], embeddings=orthogonal(5))
    assert waiting(conn) == 5
    r = remember(
        conn,
        kind="fact",
        headline="the cache was warmed before the deploy, twice",
        origin="observed",
        category="episodic",
        embedding=orthogonal(1)[0],
    )
    # (the observation it folds into keeps its text: skipped, not updated)
    assert (r["action"], r["duplicate_of"]) == ("skipped", out[0]["memory_id"])
    # a small batch, indexed at once, compares its rows with the waiting ones too
    small = observe(conn, ["shard 1 of the nightly export finished, late"], embeddings=[orthogonal(3)[2]])
    assert (small[0]["action"], small[0]["duplicate_of"]) == ("skipped", out[2]["memory_id"])


def test_a_batch_moves_waiting_vectors_into_the_index_when_too_many_wait(conn) -> None:
    conn.execute("SELECT brain.set_setting('index_pending_max', '6')")
    first = observe(conn, texts(6), embeddings=orthogonal(6))
    assert waiting(conn) == 6
    out = observe(
        conn,
        ["shard 0 of the nightly export finished, late", *texts(4, start=20)],
        embeddings=[unit(0.0, axis=1), *orthogonal(4, start=20)],
    )
    assert waiting(conn) == 6, "the 5 oldest went into the index first; this batch waits"
    assert rows(
        conn,
        "SELECT ingest_seq = 0 AS indexed FROM brain.embedding WHERE memory_id = %s",
        (first[5]["memory_id"],),
    ) == [{"indexed": False}]
    assert out[0]["action"] == "created"
    assert sum(s["folded"] for s in index_all(conn)) == 1, "its near-identical row folds when indexed"


def test_index_vectors_checks_its_arguments(conn) -> None:
    with raises_br("BR009"):
        index_vectors(conn, max_rows=0)
    with raises_br("BR012"):
        index_vectors(conn, embedding_space="nope:nothing")
    assert index_vectors(conn)["action"] == "none"


def test_writers_wait_for_a_rebuild_and_searches_do_not(conn, db_url) -> None:
    out = observe(conn, texts(8), embeddings=orthogonal(8))
    conn.execute("BEGIN")
    assert index_vectors(conn)["action"] == "rebuilt"
    with psycopg.connect(db_url, autocommit=True) as other:
        other.execute("SET lock_timeout = '2s'")
        found = search(other, "", orthogonal(3)[2], max_results=1)  # would raise if it waited
        assert ids(found) == [out[2]["memory_id"]]
    written: dict = {}

    def write() -> None:
        with psycopg.connect(db_url, autocommit=True) as other:
            written["row"] = remember(
                other, kind="fact", headline="written during the rebuild", embedding=unit(0.0, axis=50)
            )

    t = threading.Thread(target=write)
    t.start()
    with psycopg.connect(db_url, autocommit=True) as watcher:
        for _ in range(100):
            waits = scalar(watcher, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")
            if waits:
                break
            time.sleep(0.05)
    assert waits == 1 and "row" not in written, "the writer waits for the rebuild's lock"
    conn.execute("COMMIT")
    t.join()
    index_all(conn)
    assert ids(search(conn, "", unit(0.0, axis=50), max_results=1)) == [written["row"]["memory_id"]]
    assert waiting(conn) == 0


def test_the_old_index_waits_while_the_table_is_in_use_and_the_rest_goes_on(conn, db_url) -> None:
    observe(conn, texts(8), embeddings=orthogonal(8))
    assert index_vectors(conn)["action"] == "rebuilt"
    with psycopg.connect(db_url) as reader:  # a transaction that has read brain.embedding
        reader.execute("SELECT count(*) FROM brain.embedding").fetchone()
        started = time.perf_counter()
        assert index_vectors(conn)["action"] == "folded", "the drop would wait: the dedup goes first"
        assert index_vectors(conn)["action"] == "busy"
        assert time.perf_counter() - started < 1, "it does not queue for the lock"
        assert len(index_names(conn)) == 2
    assert index_vectors(conn)["action"] == "dropped"
    assert index_vectors(conn)["action"] == "none"


def test_only_index_vectors_moves_the_watermarks(conn) -> None:
    observe(conn, texts(8), embeddings=orthogonal(8))
    each_refused(
        conn,
        ("42501", "UPDATE brain.embedding_space SET indexed_through = 1000"),
        ("42501", "SELECT brain._build_space_index(1)"),
        ("42501", "SELECT brain._drop_replaced_indexes(1)"),
    )
    assert index_vectors(conn)["action"] == "rebuilt"
    with raises_br("42501"):
        conn.execute("SELECT brain._fold_indexed(brain.active_embedding_space(), 10)")


def test_a_batch_already_covered_by_a_rebuild_runs_its_dedup_at_once(conn, admin_url) -> None:
    # As when an index rebuild takes a batch's vectors in between the batch
    # taking its ingest_seq and storing them (set up here by the table owner).
    (kept,) = observe(conn, ["disk almost full on db-1"], embeddings=[unit(1.0)])
    with psycopg.connect(with_database(admin_url, conn.info.dbname), autocommit=True) as owner:
        owner.execute(
            "UPDATE brain.embedding_space SET indexed_through = nextval('brain.embedding_ingest_seq') + 1,"
            " folded_through = currval('brain.embedding_ingest_seq') + 1"
        )
    out = observe(
        conn, ["disk almost full on db-1 again", *texts(4)], embeddings=[unit(0.96), *orthogonal(4, 10)]
    )
    assert (out[0]["action"], out[0]["duplicate_of"]) == ("skipped", kept["memory_id"])


def test_worker_indexes_waiting_vectors(conn, brain_cli) -> None:
    observe(conn, texts(8), embeddings=orthogonal(8))
    out = brain_cli("worker", "--once", "--json")
    assert '"indexed": 8' in out.output
    assert waiting(conn) == 0 and len(index_names(conn)) == 1


def test_stats_count_the_waiting_vectors(conn, brain_cli) -> None:
    observe(conn, texts(8), embeddings=orthogonal(8))
    assert scalar(conn, "SELECT brain.stats()")["unindexed_vectors"] == 8
    assert "8 waiting for the index" in brain_cli("stats").output
    index_all(conn)
    assert scalar(conn, "SELECT brain.stats()")["unindexed_vectors"] == 0


def test_brain_observe_leaves_nothing_waiting(conn, brain_cli) -> None:
    step = "Step {} of the runbook restarts service {} and checks its logs."
    document = " ".join(step.format(i, i) for i in range(700))
    r = brain_cli("observe", document)  # 700 sentences: more chunks than index_defer_rows (5 here)
    assert r.exit_code == 0 and r.output.count("created") >= 5
    assert waiting(conn) == 0 and len(index_names(conn)) == 1
