"""Vectors of large batches: stored outside the HNSW index, ranked exactly meanwhile,
and indexed (with their near-identical dedup) by brain.index_vectors."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest
from helpers import raises_br, remember, rows, scalar, unit
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
    args = ", ".join(f"{k} => %({k})s" for k in kwargs)
    return scalar(conn, f"SELECT brain.index_vectors({args})", kwargs)


def index_definition(conn) -> str:
    return scalar(conn, "SELECT indexdef FROM pg_indexes WHERE indexname LIKE 'embedding_hnsw_%%'")


def test_a_large_batch_waits_outside_the_index_and_is_found_exactly(conn) -> None:
    out = observe(conn, texts(8), embeddings=orthogonal(8))
    assert {r["action"] for r in out} == {"created"}
    assert waiting(conn) == 8
    assert index_definition(conn).endswith("WHERE ((space_id = 1) AND (ingest_seq <= 0))")
    # the vector leg ranks them exactly: each text's own vector finds it first
    for r, v in zip(out, orthogonal(8), strict=True):
        found = search(conn, "", v, max_results=3)
        assert found[0]["id"] == r["memory_id"] and found[0]["vector_rank"] == 1


def test_index_vectors_rebuilds_the_index_with_the_waiting_vectors(conn) -> None:
    out = observe(conn, texts(8), embeddings=orthogonal(8))
    done = index_vectors(conn)
    assert (done["action"], done["indexed"], done["folded"], done["waiting"]) == ("rebuilt", 8, 0, 0)
    assert waiting(conn) == 0
    through = scalar(conn, "SELECT indexed_through FROM brain.embedding_space")
    assert through == scalar(conn, "SELECT max(ingest_seq) FROM brain.embedding") > 0
    assert index_definition(conn).endswith(f"WHERE ((space_id = 1) AND (ingest_seq <= {through}))")
    assert scalar(conn, "SELECT count(*) FROM pg_indexes WHERE indexname LIKE 'embedding_hnsw_%%'") == 1
    # the rebuilt index serves the searches
    conn.execute("SET enable_seqscan = off")
    assert ids(search(conn, "", orthogonal(8)[5], max_results=1)) == [out[5]["memory_id"]]
    assert index_vectors(conn)["action"] == "none"


def test_few_waiting_vectors_are_inserted_into_the_index(conn) -> None:
    conn.execute("SELECT brain.set_setting('index_defer_rows', '100')")
    observe(conn, texts(12), embeddings=orthogonal(12))  # small: indexed at once
    conn.execute("SELECT brain.set_setting('index_defer_rows', '5')")
    out = observe(conn, texts(5, start=12), embeddings=orthogonal(5, start=12))
    assert waiting(conn) == 5
    conn.execute("SELECT brain.set_setting('index_rebuild_share', '0.5')")  # 5 of 12 indexed: insert
    definition = index_definition(conn)
    done = index_vectors(conn, max_rows=3)
    assert (done["action"], done["indexed"], done["waiting"]) == ("inserted", 3, 2)
    moved = [r["memory_id"] for r in out[:3]]
    assert (
        rows(conn, "SELECT ingest_seq FROM brain.embedding WHERE memory_id = ANY (%s)", (moved,))
        == [{"ingest_seq": 0}] * 3
    ), "the oldest first, into the index as it is"
    assert index_definition(conn) == definition
    assert index_vectors(conn)["indexed"] == 2 and waiting(conn) == 0


def test_near_identical_rows_of_a_large_batch_fold_when_indexed(conn) -> None:
    (kept,) = observe(conn, ["disk almost full on db-1"], embeddings=[unit(1.0)])
    batch = ["disk almost full on db-1 again", "disk almost full on db-1 again, at 97%", *texts(4)]
    out = observe(conn, batch, embeddings=[unit(0.96), unit(0.97), *orthogonal(4, start=10)])
    assert [r["action"] for r in out] == ["created"] * 6, "dedup waits for the index"
    done = index_vectors(conn)
    assert (done["indexed"], done["folded"]) == (6, 2)
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
        "disk almost full on db-1 again, at 97%"
    ), "the longest text is kept"
    dedups = rows(
        conn,
        "SELECT memory_id, detail->>'kept' AS kept FROM brain.audit WHERE action = 'dedup' ORDER BY audit_id",
    )
    assert dedups == [
        {"memory_id": out[0]["memory_id"], "kept": str(kept["memory_id"])},
        {"memory_id": out[1]["memory_id"], "kept": str(kept["memory_id"])},
    ]
    assert ids(search(conn, "disk almost full", unit(1.0), max_results=3))[0] == kept["memory_id"]


def test_incidents_of_a_large_batch_are_not_folded(conn) -> None:
    observe(conn, ["pager fired for db-1"], kind="incident", embeddings=[unit(1.0)])
    observe(
        conn,
        ["pager fired for db-1 again", *texts(4)],
        kind="incident",
        embeddings=[unit(0.99), *orthogonal(4, start=10)],
    )
    assert index_vectors(conn)["folded"] == 0


def test_a_write_dedups_against_a_waiting_vector(conn) -> None:
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
    assert (r["action"], r["duplicate_of"]) == ("updated", out[0]["memory_id"])


def test_a_batch_indexes_the_waiting_vectors_when_too_many_wait(conn) -> None:
    conn.execute("SELECT brain.set_setting('index_pending_max', '6')")
    observe(conn, texts(6), embeddings=orthogonal(6))
    assert waiting(conn) == 6
    out = observe(
        conn,
        ["shard 0 of the nightly export finished, late", *texts(4, start=20)],
        embeddings=[unit(0.0, axis=1), *orthogonal(4, start=20)],
    )
    assert waiting(conn) == 5, "the 6 were indexed first; this batch waits"
    assert out[0]["action"] == "created"
    assert index_vectors(conn)["folded"] == 1, "its near-identical row folds when indexed"


def test_index_vectors_checks_its_arguments(conn) -> None:
    with raises_br("BR009"):
        index_vectors(conn, max_rows=0)
    with raises_br("BR012"):
        index_vectors(conn, embedding_space="nope:nothing")
    assert index_vectors(conn)["action"] == "none"


def test_a_writer_waits_for_a_rebuild_and_its_vector_is_indexed(conn, db_url) -> None:
    observe(conn, texts(8), embeddings=orthogonal(8))
    conn.execute("BEGIN")
    assert index_vectors(conn)["action"] == "rebuilt"
    written: dict = {}

    def write() -> None:
        with psycopg.connect(db_url, autocommit=True) as other:
            written["row"] = remember(
                other, kind="fact", headline="written during the rebuild", embedding=unit(0.0, axis=50)
            )

    t = threading.Thread(target=write)
    t.start()
    time.sleep(0.3)
    assert "row" not in written, "writers of embeddings wait for the new index"
    found = search(conn, "", orthogonal(3)[2], max_results=1)  # searches go on
    assert found[0]["vector_rank"] == 1
    conn.execute("COMMIT")
    t.join()
    conn.execute("SET enable_seqscan = off")
    assert ids(search(conn, "", unit(0.0, axis=50), max_results=1)) == [written["row"]["memory_id"]]
    assert waiting(conn) == 0


def test_worker_indexes_waiting_vectors(conn, brain_cli) -> None:
    observe(conn, texts(8), embeddings=orthogonal(8))
    out = brain_cli("worker", "--once", "--json")
    assert '"indexed": 8' in out.output
    assert waiting(conn) == 0


def test_stats_count_the_waiting_vectors(conn, brain_cli) -> None:
    observe(conn, texts(8), embeddings=orthogonal(8))
    assert scalar(conn, "SELECT brain.stats()")["unindexed_vectors"] == 8
    assert "8 waiting for the index" in brain_cli("stats").output
    index_vectors(conn)
    assert scalar(conn, "SELECT brain.stats()")["unindexed_vectors"] == 0


def test_a_batch_already_covered_by_a_rebuild_runs_its_dedup_at_once(conn) -> None:
    # As when an index rebuild takes the vectors in between the batch taking its
    # ingest_seq and storing them: no later pass of index_vectors would see them.
    (kept,) = observe(conn, ["disk almost full on db-1"], embeddings=[unit(1.0)])
    conn.execute(
        "UPDATE brain.embedding_space SET indexed_through = nextval('brain.embedding_ingest_seq') + 1"
    )
    out = observe(
        conn, ["disk almost full on db-1 again", *texts(4)], embeddings=[unit(0.96), *orthogonal(4, 10)]
    )
    assert (out[0]["action"], out[0]["duplicate_of"]) == ("updated", kept["memory_id"])
