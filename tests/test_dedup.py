"""Exact and semantic dedup, the embedding queue, and dedup under concurrency."""

from __future__ import annotations

import math
import random
import threading

import psycopg
import pytest
from helpers import DIMS, memory_count, one, raises_br, remember, rows, scalar, unit


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
    one(
        conn,
        "SELECT * FROM brain.supersede(old_id => %s, headline => 'API moved to port 9090', "
        "reason => 'port change', embedding => %s)",
        (old["memory_id"], unit(0.5, axis=2)),
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


def test_attach_embedding_completes_a_queued_write(conn) -> None:
    r = remember(conn, kind="fact", headline="Queued fact")
    done = one(conn, "SELECT * FROM brain.attach_embedding(%s, %s)", (r["memory_id"], unit(1.0)))
    assert done["action"] == "embedded"
    assert rows(conn, "SELECT * FROM brain.pending_embeddings()") == []
    assert scalar(conn, "SELECT dedup_pending FROM brain.memory") is False


def test_attach_embedding_folds_a_near_identical_queued_write(conn) -> None:
    kept = remember(conn, kind="fact", headline="Build uses make", embedding=unit(1.0))
    queued = remember(conn, kind="fact", headline="Build uses make, run from the repository root")
    done = one(conn, "SELECT * FROM brain.attach_embedding(%s, %s)", (queued["memory_id"], unit(0.96)))
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


def test_attach_embedding_keeps_a_queued_write_that_names_more(conn) -> None:
    """Near-identical by cosine, but the queued text names GNU and ninja: two memories."""
    kept = remember(conn, kind="fact", headline="Build uses make", embedding=unit(1.0))
    queued = remember(conn, kind="fact", headline="Build uses GNU make and ninja")
    done = one(conn, "SELECT * FROM brain.attach_embedding(%s, %s)", (queued["memory_id"], unit(0.96)))
    assert (done["action"], done["memory_id"]) == ("embedded", queued["memory_id"])
    meta = scalar(conn, "SELECT metadata FROM brain.memory WHERE memory_id = %s", (queued["memory_id"],))
    assert meta["possible_duplicate_of"] == kept["memory_id"], "it extends the other: flagged as related"
    assert rows(conn, "SELECT * FROM brain.memory_fold") == []


def test_attach_embedding_flags_a_related_queued_write(conn) -> None:
    kept = remember(conn, kind="fact", headline="Build uses make", embedding=unit(1.0))
    queued = remember(conn, kind="fact", headline="Builds are driven by a Makefile")
    done = one(conn, "SELECT * FROM brain.attach_embedding(%s, %s)", (queued["memory_id"], unit(0.8)))
    assert (done["action"], done["duplicate_of"]) == ("embedded", kept["memory_id"])
    meta = scalar(conn, "SELECT metadata FROM brain.memory WHERE memory_id = %s", (queued["memory_id"],))
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


def _calls(conn: psycopg.Connection, function: str) -> int:
    """Calls of a function by this connection not yet flushed to the statistics (track_functions)."""
    return scalar(conn, "SELECT pg_stat_get_xact_function_calls(%s::regproc)", (function,)) or 0


def test_the_duplicate_lookup_walks_the_space_not_the_scope(database, db_url) -> None:
    """A write's duplicate lookup (brain._near_write) walks the space's nearest vectors, whatever their
    kind and project, and stops past the related threshold: a write in a rare project, or a new one,
    decides without the scoped walk (brain._nearest_k, which ran until five memories of the scope
    passed: all of a space for a new project). Only a crowd of over 200 vectors of other scopes nearer
    than the scope's related memory sends the lookup there, and it still finds that memory."""
    with psycopg.connect(database, autocommit=True) as owner:
        dbname = owner.info.dbname
        owner.execute(f"ALTER ROLE brain_tester IN DATABASE {dbname} SET track_functions = 'all'")
    try:
        with psycopg.connect(db_url, autocommit=True) as conn:
            one(conn, "SELECT brain.set_setting('exact_rank_rows', '20')")  # the HNSW walk, not exact
            rng = random.Random(7)
            for i in range(300):
                g = [rng.gauss(0, 1) for _ in range(DIMS)]
                norm = math.sqrt(sum(x * x for x in g))
                remember(
                    conn,
                    kind="fact",
                    project="fleet",
                    headline=f"Disk {i} has {i * 3} GB free",
                    embedding=[x / norm for x in g],
                )
            kept = remember(
                conn, kind="fact", project="rare", headline="Backups run at 02:00 UTC", embedding=unit(1.0)
            )
            conn.execute("BEGIN")
            scoped, walks = _calls(conn, "brain._nearest_k"), _calls(conn, "brain._near_write")
            again = remember(
                conn,
                kind="fact",
                project="rare",
                headline="Backups run at 02:00 UTC!",
                embedding=unit(0.99, axis=1),
            )
            new = remember(
                conn, kind="fact", project="new", headline="Backups run at 02:00 UTC", embedding=unit(1.0)
            )
            quiet = (_calls(conn, "brain._nearest_k") - scoped, _calls(conn, "brain._near_write") - walks)
            conn.execute("COMMIT")
            print(
                f"\nrare project: {again['action']}; new project: {new['action']};"
                f" scoped walks, lookups: {quiet}"
            )
            assert again["action"] in ("skipped", "updated") and again["memory_id"] == kept["memory_id"]
            assert new["action"] == "created"
            assert quiet == (0, 2), "a rare or new scope must not send the lookup on the scoped walk"

            # 210 log lines of another project, each 0.9 similar to e0, nearer to it than the fact below;
            # the space's 500-odd vectors ranked exactly, so the walk meets them in order
            one(conn, "SELECT brain.set_setting('exact_rank_rows', '2000')")
            for k in range(210):
                remember(
                    conn,
                    kind="fact",
                    project="logs",
                    headline=f"Host {k} logged backup step {k}",
                    embedding=unit(0.9, axis=2 + k),
                )
            related = remember(
                conn,
                kind="fact",
                project="crowded",
                headline="Backups run at 02:00 UTC",
                embedding=unit(0.85, axis=300),
            )
            conn.execute("BEGIN")
            scoped = _calls(conn, "brain._nearest_k")
            conn.execute("SAVEPOINT write")
            with raises_br("BR008") as refused:
                remember(
                    conn,
                    kind="fact",
                    project="crowded",
                    headline="The backups run at 02:00 UTC",
                    embedding=unit(1.0, axis=301),
                )
            conn.execute("ROLLBACK TO SAVEPOINT write")
            crowd = _calls(conn, "brain._nearest_k") - scoped
            conn.execute("ROLLBACK")
            print(f"behind a crowd of 210: refused as related; scoped walks {crowd}")
            assert f'"duplicate_of": {related["memory_id"]}' in refused.error.diag.message_detail
            assert crowd == 1
    finally:
        with psycopg.connect(database, autocommit=True) as owner:
            owner.execute(f"ALTER ROLE brain_tester IN DATABASE {dbname} RESET track_functions")


def _axes(*axes: int) -> list[float]:
    """The unit vector along the sum of these axes."""
    v = [0.0] * DIMS
    for a in axes:
        v[a] = 1.0 / math.sqrt(len(axes))
    return v


def test_writers_of_unrelated_texts_do_not_wait_for_each_other(conn, db_url) -> None:
    """One writer holds its transaction open; a writer of an unrelated text of the same kind and project
    completes (it would wait forever if they took one lock); a near-identical one waits. Each text is
    near five runbook pages of its own, the pages a write locks."""
    for axis in range(10, 20):
        remember(conn, kind="fact", project="ops", headline=f"Runbook page {axis}", embedding=_axes(axis))
    with psycopg.connect(db_url) as holder, psycopg.connect(db_url, autocommit=True) as other:
        first = remember(
            holder,
            kind="fact",
            project="ops",
            headline="Deploys freeze on Fridays",
            embedding=_axes(10, 11, 12, 13, 14, 100),
        )
        assert first["action"] == "created"  # and its transaction stays open, holding its locks
        other.execute("SET lock_timeout = '10s'")
        unrelated = remember(
            other,
            kind="fact",
            project="ops",
            headline="Cache hit rate is 94%",
            embedding=_axes(15, 16, 17, 18, 19, 101),
        )
        assert unrelated["action"] == "created"

        other.execute("SET lock_timeout = '300ms'")
        with pytest.raises(psycopg.errors.LockNotAvailable):
            remember(
                other,
                kind="fact",
                project="ops",
                headline="Deploys freeze on Friday",
                embedding=_axes(10, 11, 12, 13, 14, 100),
            )
        holder.commit()
    # Once the first has committed, the near-identical write sees it: the related memory, named.
    with pytest.raises(psycopg.Error) as refused:
        remember(
            conn,
            kind="fact",
            project="ops",
            headline="Deploys freeze on Friday",
            embedding=_axes(10, 11, 12, 13, 14, 100),
        )
    assert refused.value.diag.sqlstate == "BR008"
    assert f'"duplicate_of": {first["memory_id"]}' in refused.value.diag.message_detail
