"""Exact and semantic dedup, the embedding queue, and dedup under concurrency."""

from __future__ import annotations

import math
import random
import threading
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from helpers import (
    DIMS,
    call_rows,
    function_calls,
    functions_tracked,
    memory_count,
    one,
    raises_br,
    remember,
    rows,
    scalar,
    unit,
)


def test_exact_duplicate_is_skipped_across_case_and_spacing(conn) -> None:
    first = remember(conn, kind="fact", headline="Deploys use blue-green", body="On prod.")
    again = remember(conn, kind="fact", headline="  deploys USE   blue-green ", body="on prod.")
    assert first["action"] == "created"
    assert (again["action"], again["memory_id"], again["duplicate_of"], again["similarity"]) == (
        "skipped",
        first["memory_id"],
        first["memory_id"],
        1.0,
    )
    assert memory_count(conn) == 1


def test_exact_dedup_is_scoped_by_kind_and_project(conn) -> None:
    remember(conn, kind="fact", headline="Use pnpm")
    assert remember(conn, kind="rule", headline="Use pnpm")["action"] == "created"
    assert remember(conn, kind="fact", headline="Use pnpm", project="web")["action"] == "created"
    assert memory_count(conn) == 3


def test_near_identical_longer_text_updates_the_existing_memory(conn) -> None:
    first = remember(conn, kind="fact", headline="Cache TTL is 5 minutes", embedding=unit(1.0))
    longer = remember(
        conn, kind="fact", headline="Cache TTL is 5 minutes on every edge node", embedding=unit(0.95)
    )
    assert (longer["action"], longer["memory_id"]) == ("updated", first["memory_id"])
    assert longer["similarity"] == pytest.approx(0.95, abs=1e-4)
    m = one(conn, "SELECT headline FROM brain.memory WHERE memory_id = %s", (first["memory_id"],))
    assert m["headline"] == "Cache TTL is 5 minutes on every edge node"
    assert scalar(conn, "SELECT count(*) FROM brain.audit WHERE action = 'update'") == 1
    assert memory_count(conn) == 1


def test_near_identical_shorter_text_is_skipped(conn) -> None:
    first = remember(
        conn, kind="fact", headline="Cache TTL is 5 minutes on every edge node", embedding=unit(1.0)
    )
    shorter = remember(conn, kind="fact", headline="Cache TTL is 5 minutes", embedding=unit(0.93))
    assert (shorter["action"], shorter["memory_id"]) == ("skipped", first["memory_id"])
    assert memory_count(conn) == 1


def test_near_identical_rule_is_never_rewritten(conn) -> None:
    first = remember(conn, kind="rule", headline="Never force-push", embedding=unit(1.0))
    longer = remember(conn, kind="rule", headline="Never force-push to shared branches", embedding=unit(0.97))
    assert (longer["action"], longer["memory_id"]) == ("skipped", first["memory_id"])
    assert scalar(conn, "SELECT headline FROM brain.memory") == "Never force-push"


@pytest.mark.parametrize("similarity", [0.75, 0.80, 0.919])
def test_related_authored_memory_raises_duplicate_naming_the_existing_one(conn, similarity) -> None:
    first = remember(conn, kind="fact", headline="Staging runs on k3s", embedding=unit(1.0))
    with raises_br("BR008") as caught:
        remember(conn, kind="fact", headline="Staging cluster uses k3s now", embedding=unit(similarity))
    detail = caught.error.diag.message_detail
    assert f'"duplicate_of": {first["memory_id"]}' in detail
    assert "supersede" in caught.error.diag.message_hint
    assert memory_count(conn) == 1


def test_below_related_threshold_is_a_new_memory(conn) -> None:
    remember(conn, kind="fact", headline="Staging runs on k3s", embedding=unit(1.0))
    r = remember(conn, kind="fact", headline="Prod runs on EKS", embedding=unit(0.74))
    assert r["action"] == "created"
    assert memory_count(conn) == 2


def test_observed_and_artifact_rows_are_not_refused_as_related(conn) -> None:
    remember(conn, kind="fact", headline="User asked about k3s", origin="observed", embedding=unit(1.0))
    r = remember(
        conn, kind="fact", headline="User asked about k3s again", origin="observed", embedding=unit(0.85)
    )
    assert r["action"] == "created"
    r = remember(
        conn, kind="fact", headline="User asked about k3s, again", origin="observed", embedding=unit(0.99)
    )
    assert r["action"] in ("updated", "skipped")


def test_incidents_skip_semantic_dedup(conn) -> None:
    remember(conn, kind="incident", headline="Deploy failed: disk full", embedding=unit(1.0))
    r = remember(conn, kind="incident", headline="Deploy failed: disk full again", embedding=unit(0.99))
    assert r["action"] == "created"


def test_semantic_dedup_ignores_superseded_and_other_kinds(conn) -> None:
    old = remember(conn, kind="fact", headline="API lives on port 8080", embedding=unit(1.0))
    call_rows(
        conn,
        "supersede",
        old_id=old["memory_id"],
        headline="API moved to port 9090",
        reason="port change",
        embedding=unit(0.5, axis=2),
    )
    r = remember(conn, kind="fact", headline="API is on port 8080 per old doc", embedding=unit(0.9))
    assert r["action"] == "created", "a superseded memory must not block a new write"
    assert remember(conn, kind="rule", headline="Check the port", embedding=unit(0.99))["action"] == "created"


def test_thresholds_are_settings_of_the_embedding_space(conn) -> None:
    one(
        conn,
        "SELECT * FROM brain.use_embedding_space('hash', 'feature-hash-v1', 384, "
        "near_identical => 0.99, related => 0.9)",
    )
    remember(conn, kind="fact", headline="Queue is Redis", embedding=unit(1.0))
    # 0.85 would be "related" under the defaults; 0.95 would be near-identical.
    assert (
        remember(conn, kind="fact", headline="Queue uses Redis streams", embedding=unit(0.85))["action"]
        == "created"
    )
    with raises_br("BR008"):
        remember(conn, kind="fact", headline="Queue is Redis, with streams", embedding=unit(0.95))
    with raises_br("BR009"):
        one(conn, "SELECT * FROM brain.use_embedding_space('hash', 'feature-hash-v1', 384, related => 1.5)")


def test_write_without_embedding_is_queued_and_announced(conn, db_url) -> None:
    with psycopg.connect(db_url, autocommit=True) as listener:
        listener.execute("LISTEN brain_embedding")
        r = remember(conn, kind="fact", headline="Written from psql", body="No embedder here.")
        assert r["action"] == "created" and r["embedding_pending"] is True
        note = next(listener.notifies(timeout=5, stop_after=1))
    assert note.payload == "", "any role may LISTEN: the wake-up names no workspace or memory"
    pending = rows(conn, "SELECT * FROM brain.pending_embeddings()")
    assert [p["memory_id"] for p in pending] == [r["memory_id"]]
    assert pending[0]["embedding_input"] == "Written from psql\n\nNo embedder here."


def queued_beside_make(conn, headline: str, similarity: float) -> tuple[dict, dict, dict]:
    """A fact stored with its vector ("Build uses make"), then one written without a vector and
    given one at `similarity` to it by brain.attach_embedding: (kept, queued, what it returned)."""
    kept = remember(conn, kind="fact", headline="Build uses make", embedding=unit(1.0))
    queued = remember(conn, kind="fact", headline=headline)
    done = one(conn, "SELECT * FROM brain.attach_embedding(%s, %s)", (queued["memory_id"], unit(similarity)))
    return kept, queued, done


def metadata_of(conn, memory_id: int) -> dict:
    return scalar(conn, "SELECT metadata FROM brain.memory WHERE memory_id = %s", (memory_id,))


def test_attach_embedding_completes_a_queued_write(conn) -> None:
    r = remember(conn, kind="fact", headline="Queued fact")
    done = one(conn, "SELECT * FROM brain.attach_embedding(%s, %s)", (r["memory_id"], unit(1.0)))
    assert done["action"] == "embedded"
    assert rows(conn, "SELECT * FROM brain.pending_embeddings()") == []
    assert scalar(conn, "SELECT dedup_pending FROM brain.memory") is False


def test_attach_embedding_folds_a_near_identical_queued_write(conn) -> None:
    kept, queued, done = queued_beside_make(conn, "Build uses make, run from the repository root", 0.96)
    assert (done["action"], done["memory_id"]) == ("updated", kept["memory_id"])
    states = dict(conn.execute("SELECT memory_id, state FROM brain.memory").fetchall())
    assert states == {kept["memory_id"]: "active", queued["memory_id"]: "tombstoned"}
    assert (
        scalar(conn, "SELECT headline FROM brain.memory WHERE memory_id = %s", (kept["memory_id"],))
        == "Build uses make, run from the repository root"
    )
    (fold,) = rows(conn, "SELECT * FROM brain.memory_fold")
    assert (fold["memory_id"], fold["displaced"], fold["headline"]) == (
        kept["memory_id"],
        True,
        "Build uses make",
    ), "the survivor's earlier text is kept as a fold record"


def test_a_queued_write_beside_a_captured_turn_is_not_flagged_related(conn) -> None:
    """A captured turn is a record of what was said: an authored write beside it meets no
    related gate, whether it came with its vector (brain._write) or was given one later
    (brain.attach_embedding); both take the one near verdict (brain._near_verdict)."""
    remember(conn, kind="fact", headline="User asked about k3s", origin="observed", embedding=unit(1.0))
    direct = remember(
        conn, kind="fact", headline="User asked about k3s on the Pi cluster", embedding=unit(0.85)
    )
    assert (direct["action"], direct["duplicate_of"]) == ("created", None)
    queued = remember(conn, kind="fact", headline="User asked about k3s on the Pi cluster twice")
    done = one(
        conn, "SELECT * FROM brain.attach_embedding(%s, %s)", (queued["memory_id"], unit(0.85, axis=2))
    )
    assert (done["action"], done["duplicate_of"]) == ("embedded", None)
    assert "possible_duplicate_of" not in metadata_of(conn, queued["memory_id"])


def test_attach_embedding_keeps_a_queued_write_that_names_more(conn) -> None:
    """Near-identical by cosine, but the queued text names GNU and ninja: two memories."""
    kept, queued, done = queued_beside_make(conn, "Build uses GNU make and ninja", 0.96)
    assert (done["action"], done["memory_id"]) == ("embedded", queued["memory_id"])
    meta = metadata_of(conn, queued["memory_id"])
    assert meta["possible_duplicate_of"] == kept["memory_id"], "it extends the other: flagged as related"
    assert rows(conn, "SELECT * FROM brain.memory_fold") == []


def test_attach_embedding_flags_a_related_queued_write(conn) -> None:
    kept, queued, done = queued_beside_make(conn, "Builds are driven by a Makefile", 0.8)
    assert (done["action"], done["duplicate_of"]) == ("embedded", kept["memory_id"])
    meta = metadata_of(conn, queued["memory_id"])
    assert meta["possible_duplicate_of"] == kept["memory_id"]


def _race(db_url: str, writes: list[dict]) -> list[dict | Exception]:
    barrier = threading.Barrier(len(writes))
    results: list[dict | Exception] = [None] * len(writes)  # type: ignore[list-item]

    def write(i: int) -> None:
        with psycopg.connect(db_url, autocommit=True) as c:
            barrier.wait()
            try:
                results[i] = remember(c, **writes[i])
            except psycopg.Error as exc:
                results[i] = exc

    threads = [threading.Thread(target=write, args=(i,)) for i in range(len(writes))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


@pytest.mark.parametrize("with_embedding", [False, True])
def test_eight_concurrent_identical_writes_leave_one_row(conn, db_url, with_embedding) -> None:
    write = {"kind": "fact", "headline": "Release train leaves on Tuesdays"}
    if with_embedding:
        write["embedding"] = unit(1.0)
    results = _race(db_url, [write] * 8)
    actions = sorted(r["action"] for r in results)
    assert actions == ["created"] + ["skipped"] * 7
    assert memory_count(conn) == 1


def test_eight_concurrent_near_identical_writes_leave_one_row(conn, db_url) -> None:
    writes = [
        {
            "kind": "fact",
            "headline": f"Release train leaves on Tuesdays{'!' * i}",
            "embedding": unit(1.0 - i * 0.005, axis=1 + i),
        }
        for i in range(8)
    ]
    results = _race(db_url, writes)
    assert sum(r["action"] == "created" for r in results) == 1
    assert memory_count(conn) == 1


def test_a_write_embedded_while_its_space_was_filling_still_gets_its_dedup(conn) -> None:
    """A queued write reaches a new space before that space is activated: the worker owes it dedup."""
    kept = remember(conn, kind="fact", headline="Build uses make", embedding=unit(1.0))
    one(conn, "SELECT * FROM brain.use_embedding_space('other', 'model', 384)")
    queued = remember(conn, kind="fact", headline="Build uses make, run from the repository root")
    for memory_id, vector in ((kept["memory_id"], unit(1.0)), (queued["memory_id"], unit(0.97))):
        one(conn, "SELECT * FROM brain.attach_embedding(%s, %s, 'other:model')", (memory_id, vector))
    one(conn, "SELECT brain.activate_embedding_space('other:model')")
    owed = rows(conn, "SELECT memory_id FROM brain.pending_embeddings()")
    assert [o["memory_id"] for o in owed] == [queued["memory_id"]]
    done = one(conn, "SELECT * FROM brain.attach_embedding(%s, %s)", (queued["memory_id"], unit(0.97)))
    assert (done["action"], done["memory_id"]) == ("updated", kept["memory_id"])
    assert rows(conn, "SELECT * FROM brain.pending_embeddings()") == []


def test_the_duplicate_check_finds_a_near_identical_memory_by_either_plan(conn) -> None:
    """A scope under exact_rank_rows is ranked exactly; a larger one walks the HNSW index: both fold."""
    rng = random.Random(4)
    for i in range(300):
        g = [rng.gauss(0, 1) for _ in range(DIMS)]
        norm = math.sqrt(sum(x * x for x in g))
        remember(
            conn,
            kind="fact",
            project="fleet",
            headline=f"Disk {i} of host db-{i % 17} reports {i * 3} GB free",
            embedding=[x / norm for x in g],
        )
    kept = remember(
        conn, kind="fact", project="fleet", headline="Backups run at 02:00 UTC", embedding=unit(1.0)
    )
    rare = remember(
        conn, kind="fact", project="rare", headline="Backups run at 02:00 UTC", embedding=unit(1.0)
    )
    conn.execute("ANALYZE brain.memory")

    for n, exact_rows in enumerate((2000, 20), 1):
        one(conn, "SELECT brain.set_setting('exact_rank_rows', %s)", (str(exact_rows),))
        for project, target in (("fleet", kept), ("rare", rare)):
            again = remember(
                conn,
                kind="fact",
                project=project,
                headline="Backups run at 02:00 UTC" + "!" * n,
                embedding=unit(0.99, axis=n),
            )
            assert again["memory_id"] == target["memory_id"], (exact_rows, project)
            assert again["action"] in ("skipped", "updated")
        new = remember(
            conn,
            kind="fact",
            project=f"new-{exact_rows}",
            headline="Backups run at 02:00 UTC",
            embedding=unit(1.0),
        )
        assert new["action"] == "created", "a new project has nothing to fold into"


def test_the_duplicate_lookup_is_bounded_whatever_the_scope(database, db_url) -> None:
    """A write's duplicate lookup (brain._near_write) ranks a scope of fewer than 50 memories exactly
    (brain._nearest_k on its few rows), and walks a larger one's space nearest first, whatever kind and
    project its vectors are of, until it has met 5 of the scope or passed the related threshold: a
    scope of 60 among 300 others decides without the walk filtered by the scope, and so does one
    crowded with 210 of its own near memories. Only a crowd of over 40 vectors of other scopes nearer
    than the scope's related memory sends the lookup on the filtered walk, and it still finds it."""

    def lookups(conn: psycopg.Connection, write: Callable[[], Any]) -> tuple[Any, int]:
        """The write's outcome (or its error) and how many filtered walks (brain._nearest_k) it ran."""
        conn.execute("BEGIN")
        before = function_calls(conn, "brain._nearest_k")
        conn.execute("SAVEPOINT write")
        try:
            outcome = write()
        except psycopg.Error as exc:
            outcome = exc
            conn.execute("ROLLBACK TO SAVEPOINT write")
        walks = function_calls(conn, "brain._nearest_k") - before
        conn.execute("COMMIT")
        return outcome, walks

    with functions_tracked(database), psycopg.connect(db_url, autocommit=True) as conn:

        def fact(project: str, headline: str, embedding: list[float]) -> dict:
            return remember(conn, kind="fact", project=project, headline=headline, embedding=embedding)

        one(conn, "SELECT brain.set_setting('exact_rank_rows', '20')")  # the HNSW walk, not exact
        rng = random.Random(7)
        for i in range(300):
            g = [rng.gauss(0, 1) for _ in range(DIMS)]
            norm = math.sqrt(sum(x * x for x in g))
            fact("fleet" if i < 240 else "mid", f"Disk {i} has {i * 3} GB free", [x / norm for x in g])
        rare = fact("rare", "Backups run at 02:00 UTC", unit(1.0))
        mid = fact("mid", "Backups run at 02:00 UTC", unit(1.0))
        tried = []
        for project, kept, expect_walks in (("rare", rare, 1), ("mid", mid, 0)):
            again, walks = lookups(
                conn,
                lambda p=project: fact(p, "Backups run at 02:00 UTC!", unit(0.99, axis=1)),
            )
            tried.append(f"{project}: {again['action']} #{again['memory_id']}, filtered walks {walks}")
            assert again["action"] in ("skipped", "updated") and again["memory_id"] == kept["memory_id"]
            assert walks == expect_walks, tried

        # 210 log lines of project 'mid' itself, each 0.9 similar to e0: the walk stops at 5 of them
        for k in range(210):
            fact("logs" if k < 205 else "mid", f"Host {k} logged backup step {k}", unit(0.9, axis=2 + k))
        for k in range(205):
            fact("mid", f"Host {k} archived backup step {k}", unit(0.9, axis=2 + k))
        own, walks = lookups(
            conn,
            lambda: fact("mid", "Backups run at 02:00 UTC every day", unit(0.995, axis=250)),
        )
        tried.append(f"mid, crowded by its own: {own['action']} #{own['memory_id']}, filtered walks {walks}")
        assert own["memory_id"] == mid["memory_id"] and walks == 0, tried

        # 205 lines of 'logs' nearer to e0 than the fact of 'crowded' below: the filtered walk finds it
        # (ranked exactly: an HNSW graph of such equidistant crowds is not what is tested here)
        one(conn, "SELECT brain.set_setting('exact_rank_rows', '2000')")
        crowded = fact("crowded", "Backups run at 02:00 UTC", unit(0.85, axis=300))
        for k in range(60):
            fact("crowded", f"Rack {k} holds host {k}", unit(0.1, axis=301 + k % 60))
        refused, walks = lookups(
            conn,
            lambda: fact("crowded", "The backups run at 02:00 UTC", unit(1.0, axis=370)),
        )
        tried.append(
            f"crowded by 205 others: {getattr(refused, 'sqlstate', refused)}, filtered walks {walks}"
        )
        print("\n" + "\n".join(tried))
        assert isinstance(refused, psycopg.Error) and refused.sqlstate == "BR008", tried
        assert f'"duplicate_of": {crowded["memory_id"]}' in refused.diag.message_detail
        assert walks == 1, tried


def _axes(*axes: int) -> list[float]:
    """The unit vector along the sum of these axes."""
    v = [0.0] * DIMS
    for a in axes:
        v[a] = 1.0 / math.sqrt(len(axes))
    return v


def ops_fact(conn: psycopg.Connection, headline: str, *axes: int) -> dict:
    """A fact of project ops whose vector lies along the sum of these axes."""
    return remember(conn, kind="fact", project="ops", headline=headline, embedding=_axes(*axes))


def test_writers_of_unrelated_texts_do_not_wait_for_each_other(conn, db_url) -> None:
    """One writer holds its transaction open; a writer of an unrelated text of the same kind and project
    completes (it would wait forever if they took one lock); a near-identical one waits. Each text is
    near five runbook pages of its own, the pages a write locks."""
    for axis in range(10, 20):
        ops_fact(conn, f"Runbook page {axis}", axis)
    with psycopg.connect(db_url) as holder, psycopg.connect(db_url, autocommit=True) as other:
        first = ops_fact(holder, "Deploys freeze on Fridays", 10, 11, 12, 13, 14, 100)
        assert first["action"] == "created"  # and its transaction stays open, holding its locks
        other.execute("SET lock_timeout = '10s'")
        unrelated = ops_fact(other, "Cache hit rate is 94%", 15, 16, 17, 18, 19, 101)
        assert unrelated["action"] == "created"

        other.execute("SET lock_timeout = '300ms'")
        with pytest.raises(psycopg.errors.LockNotAvailable):
            ops_fact(other, "Deploys freeze on Friday", 10, 11, 12, 13, 14, 100)
        holder.commit()
    # Once the first has committed, the near-identical write sees it: the related memory, named.
    with pytest.raises(psycopg.Error) as refused:
        ops_fact(conn, "Deploys freeze on Friday", 10, 11, 12, 13, 14, 100)
    assert refused.value.diag.sqlstate == "BR008"
    assert f'"duplicate_of": {first["memory_id"]}' in refused.value.diag.message_detail
