"""Race-freedom of semantic dedup whatever is stored near the texts.

Two near-duplicate writes of one kind and project, concurrent, must end as
one memory even when they share none of their nearest stored memories (the
memories brain._lock_near locks). Each test builds such a scope with explicit
vectors, drives the writers through a fixed interleaving (transactions held
open, lock waits seen in pg_locks), and prints what was tried and what got
through.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

import psycopg
import pytest
from helpers import DIMS, function_calls, functions_tracked, remember, rows

from pybrain.client import Brain
from pybrain.embed import get_embedder

PROJECT = "ops"
LOOKUP = "brain._near_write"  # a write's duplicate lookup, counted by function_calls


def _vec(parts: dict[int, float]) -> list[float]:
    """The unit vector along these weighted axes."""
    v = [0.0] * DIMS
    for axis, weight in parts.items():
        v[axis] = weight
    norm = math.sqrt(sum(x * x for x in v))
    return [x / norm for x in v]


def _cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def _near_dups(n: int, similarity: float) -> list[list[float]]:
    """n unit vectors whose pairwise cosine is `similarity`: a common axis (0) and one axis each."""
    c = math.sqrt(similarity)
    return [_vec({0: c, 1 + i: math.sqrt(1 - c * c)}) for i in range(n)]


def _surround(conn: psycopg.Connection, targets: list[list[float]]) -> list[set[int]]:
    """Five stored runbook pages around each target, each page on an axis of its own: a page is
    nearer its own target (0.7) than any other (0.7 x their cosine) and below the related
    threshold for all. Returns, per target, the ids of its five nearest stored memories (exact)."""
    pages: list[tuple[int, list[float]]] = []
    for i, t in enumerate(targets):
        for k in range(5):
            axis = 40 + 5 * i + k
            v = [0.7 * x for x in t]
            v[axis] = math.sqrt(1 - 0.49)
            page = remember(
                conn,
                kind="fact",
                project=PROJECT,
                headline=f"Runbook page {axis} covers rack r{axis}",
                embedding=v,
            )
            assert page["action"] == "created"
            pages.append((page["memory_id"], v))
    nearest = []
    for t in targets:
        ranked = sorted(pages, key=lambda p: -_cos(p[1], t))
        assert max(_cos(p[1], t) for p in pages) < 0.75, "no page may be a duplicate of a target"
        nearest.append({p[0] for p in ranked[:5]})
    return nearest


def _active(conn: psycopg.Connection, headline_like: str) -> list[dict]:
    return rows(
        conn,
        "SELECT memory_id, headline, state FROM brain.memory WHERE headline LIKE %s AND state = 'active'"
        " ORDER BY memory_id",
        (headline_like,),
    )


def _wait_until(what: str, check: Callable[[], bool], timeout: float = 20.0) -> None:
    """Polls check (a read of pg_locks / pg_stat_activity) until it holds."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting until {what}")
        time.sleep(0.02)


def _waiting_on_advisory(conn: psycopg.Connection, pids: list[int]) -> list[int]:
    """The backends among pids that wait for an advisory lock."""
    return [
        r["pid"]
        for r in rows(
            conn,
            "SELECT DISTINCT pid FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND pid = ANY(%s)",
            (pids,),
        )
    ]


def _report(title: str, tried: list[str], through: list[dict]) -> None:
    print(f"\n{title}\n  tried: " + "\n         ".join(tried))
    print(
        "  active afterwards: "
        + (", ".join(f"#{r['memory_id']} {r['headline']!r}" for r in through) or "none")
    )


def test_near_duplicates_written_at_once_into_a_new_project_take_turns(conn, db_url) -> None:
    """A new project, in a space of ten vectors of other projects: two near-identical texts (0.97)
    whose five nearest stored vectors are disjoint, so they share no neighbour to lock. While the
    project holds fewer than 5 memories its writers take its scope lock: the second waits for the
    first and then folds into it, and nothing is refused at commit."""
    a = _vec({0: 1.0})
    b = _vec({0: 1.0, 1: 0.25})
    assert _cos(a, b) > 0.95
    near_a = [_vec({0: 1.0, 1: -0.5, 10 + k: 0.1}) for k in range(5)]
    near_b = [_vec({0: 1.0, 1: 0.75, 20 + k: 0.1}) for k in range(5)]
    assert min(_cos(a, x) for x in near_a) > max(_cos(a, x) for x in near_b)
    assert min(_cos(b, x) for x in near_b) > max(_cos(b, x) for x in near_a)
    for k, v in enumerate(near_a + near_b):
        r = remember(
            conn, kind="fact", project=f"other{k}", headline=f"Rack r{k} holds host h{k}", embedding=v
        )
        assert r["action"] == "created"

    outcome: dict[str, str] = {}
    tried = []
    with psycopg.connect(db_url) as holder, psycopg.connect(db_url, autocommit=True) as writer:
        writer.execute("SET lock_timeout = '20s'")
        first = remember(
            holder, kind="fact", project="fresh", headline="Deploys freeze on Fridays", embedding=a
        )
        tried.append(f"holder: 'Deploys freeze on Fridays' -> {first['action']} #{first['memory_id']} (open)")

        def second() -> None:
            try:
                r = remember(
                    writer, kind="fact", project="fresh", headline="Deploys freeze on Fridays!", embedding=b
                )
                outcome["writer"] = f"{r['action']} #{r['memory_id']}"
            except psycopg.Error as exc:
                outcome["writer"] = exc.sqlstate or "error"

        t = threading.Thread(target=second)
        t.start()
        waited = False
        deadline = time.monotonic() + 20
        while t.is_alive() and not waited and time.monotonic() < deadline:
            waited = bool(_waiting_on_advisory(conn, [writer.info.backend_pid]))
            time.sleep(0.02)
        try:
            holder.commit()
            outcome["holder"] = "committed"
        except psycopg.Error as exc:
            outcome["holder"] = exc.sqlstate or "error"
        t.join()
    tried.append(f"writer: 'Deploys freeze on Fridays!' waited {waited} -> {outcome.get('writer')}")
    tried.append(f"holder: COMMIT -> {outcome['holder']}")
    through = _active(conn, "Deploys freeze on Friday%")
    _report("near-identical pair in a new project, disjoint neighbours", tried, through)
    assert [r["memory_id"] for r in through] == [first["memory_id"]]
    assert waited and outcome["holder"] == "committed"
    assert outcome["writer"] == f"updated #{first['memory_id']}"


def test_two_near_duplicates_with_disjoint_neighbours_end_as_one_memory(conn, db_url) -> None:
    """A (held open) and A' (a second connection) share none of their five nearest stored memories,
    so they take no lock in common and both are created; the one that commits second finds the other
    at its commit and is rolled back (BR022). Written again, it folds into the first."""
    a, a2 = _near_dups(2, 0.94)
    assert _cos(a, a2) >= 0.92
    near_a, near_a2 = _surround(conn, [a, a2])
    assert not near_a & near_a2, "the two texts must have disjoint sets of nearest memories"

    tried = []
    with psycopg.connect(db_url) as holder, psycopg.connect(db_url, autocommit=True) as writer:
        writer.execute("SET lock_timeout = '10s'")  # it must not wait for the holder: fail, not hang
        first = remember(
            holder, kind="fact", project=PROJECT, headline="Deploys freeze on Fridays", embedding=a
        )
        tried.append(f"holder: 'Deploys freeze on Fridays' -> {first['action']} #{first['memory_id']} (open)")
        second = remember(
            writer, kind="fact", project=PROJECT, headline="Deploys freeze on Fridays!", embedding=a2
        )
        tried.append(f"writer: 'Deploys freeze on Fridays!' -> {second['action']} #{second['memory_id']}")
        assert (first["action"], second["action"]) == ("created", "created"), "neither can see the other yet"
        refused = None
        try:
            holder.commit()
            tried.append("holder: COMMIT -> committed")
        except psycopg.Error as exc:
            refused = exc
            tried.append(f"holder: COMMIT -> {exc.sqlstate} {exc.diag.message_primary}")

    through = _active(conn, "Deploys freeze on Friday%")
    _report("near-identical pair, disjoint neighbours", tried, through)
    assert [r["memory_id"] for r in through] == [second["memory_id"]], (
        "two concurrent near-duplicates got through"
    )
    assert refused is not None and refused.sqlstate == "BR022"
    assert f'"duplicate_of": {second["memory_id"]}' in refused.diag.message_detail
    again = remember(conn, kind="fact", project=PROJECT, headline="Deploys freeze on Fridays", embedding=a)
    assert (again["action"], again["memory_id"]) == ("skipped", second["memory_id"])


def test_eight_concurrent_near_duplicates_with_disjoint_neighbours_end_as_one_memory(conn, db_url) -> None:
    """Eight near-duplicates (pairwise 0.94), each surrounded by five stored memories of its own:
    all eight are created in open transactions, then commit at once. One commit gets through."""
    targets = _near_dups(8, 0.94)
    nearest = _surround(conn, targets)
    assert all(not nearest[i] & nearest[j] for i in range(8) for j in range(i + 1, 8))

    conns = [psycopg.connect(db_url) for _ in range(8)]
    tried: list[str] = []
    outcomes: list[str] = [""] * 8
    try:
        for i, c in enumerate(conns):
            r = remember(
                c,
                kind="fact",
                project=PROJECT,
                headline="Release train leaves on Tuesdays" + "!" * i,
                embedding=targets[i],
            )
            tried.append(f"writer {i}: created? {r['action']} #{r['memory_id']} (open)")
            assert r["action"] == "created"
        barrier = threading.Barrier(8)

        def commit(i: int) -> None:
            barrier.wait()
            try:
                conns[i].commit()
                outcomes[i] = "committed"
            except psycopg.Error as exc:
                outcomes[i] = exc.sqlstate or "error"

        threads = [threading.Thread(target=commit, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        for c in conns:
            c.close()
    tried += [f"writer {i}: COMMIT -> {o}" for i, o in enumerate(outcomes)]
    through = _active(conn, "Release train leaves on Tuesdays%")
    _report("eight near-duplicates, disjoint neighbours, committed at once", tried, through)
    assert len(through) == 1, "concurrent near-duplicates got through"
    assert sorted(outcomes) == ["BR022"] * 7 + ["committed"]

    # Sent again, each of the seven folds into the one that got through.
    for i, o in enumerate(outcomes):
        if o == "BR022":
            r = remember(
                conn,
                kind="fact",
                project=PROJECT,
                headline="Release train leaves on Tuesdays" + "!" * i,
                embedding=targets[i],
            )
            assert r["memory_id"] == through[0]["memory_id"] and r["action"] in ("skipped", "updated")
    assert len(_active(conn, "Release train leaves on Tuesdays%")) == 1


@pytest.mark.parametrize("on_related", ["refuse", "store"])
def test_a_related_write_committed_second_is_refused_unless_it_stores_anyway(
    conn, db_url, on_related
) -> None:
    """Related (0.8), not near-identical: written one after the other the second would be refused
    (BR008). Concurrently, the one that commits second is rolled back (BR022); sent again it gets
    the BR008 that names the first. A write whose policy is to store anyway commits."""
    a, a2 = _near_dups(2, 0.8)
    near_a, near_a2 = _surround(conn, [a, a2])
    assert not near_a & near_a2

    with psycopg.connect(db_url) as holder, psycopg.connect(db_url, autocommit=True) as writer:
        writer.execute("SET lock_timeout = '10s'")
        first = remember(
            holder,
            kind="fact",
            project=PROJECT,
            headline="Staging runs on k3s",
            embedding=a,
            on_related=on_related,
        )
        second = remember(writer, kind="fact", project=PROJECT, headline="Staging uses k3s", embedding=a2)
        assert (first["action"], second["action"]) == ("created", "created")
        try:
            holder.commit()
            outcome = None
        except psycopg.Error as exc:
            outcome = exc.sqlstate
    through = _active(conn, "Staging % k3s")
    _report(
        f"related pair, the held-open write's on_related = {on_related}",
        [
            f"holder: 'Staging runs on k3s' #{first['memory_id']} (open)",
            f"writer: 'Staging uses k3s' #{second['memory_id']} (committed)",
            f"holder: COMMIT -> {outcome or 'committed'}",
        ],
        through,
    )
    if on_related == "refuse":
        assert outcome == "BR022"
        assert [r["memory_id"] for r in through] == [second["memory_id"]]
        with pytest.raises(psycopg.Error) as again:
            remember(conn, kind="fact", project=PROJECT, headline="Staging runs on k3s", embedding=a)
        assert again.value.sqlstate == "BR008"
        assert f'"duplicate_of": {second["memory_id"]}' in again.value.diag.message_detail
    else:
        assert outcome is None
        assert len(through) == 2, "on_related = store keeps both, as it would one after the other"


def test_commits_of_near_duplicates_take_turns_and_the_second_sees_the_first(conn, db_url, database) -> None:
    """The commit-time check runs behind a lock of the kind and project: while a third connection
    holds it, both commits wait (seen in pg_locks); released, exactly one gets through."""
    a, a2 = _near_dups(2, 0.94)
    _surround(conn, [a, a2])
    with (
        psycopg.connect(db_url) as h1,
        psycopg.connect(db_url) as h2,
        psycopg.connect(db_url) as gate,
    ):
        r1 = remember(h1, kind="fact", project=PROJECT, headline="Backups run at 02:00 UTC", embedding=a)
        r2 = remember(h2, kind="fact", project=PROJECT, headline="Backups run at 02:00 UTC!", embedding=a2)
        assert (r1["action"], r2["action"]) == ("created", "created")
        gate.execute("SELECT brain._lock_commits('fact', %s)", (PROJECT,))
        pids = [h1.info.backend_pid, h2.info.backend_pid]
        outcomes: dict[int, str] = {}

        def commit(c: psycopg.Connection) -> None:
            try:
                c.commit()
                outcomes[c.info.backend_pid] = "committed"
            except psycopg.Error as exc:
                outcomes[c.info.backend_pid] = exc.sqlstate or "error"

        threads = [threading.Thread(target=commit, args=(c,)) for c in (h1, h2)]
        for t in threads:
            t.start()
        _wait_until(
            "both commits wait for the lock", lambda: sorted(_waiting_on_advisory(conn, pids)) == sorted(pids)
        )
        assert outcomes == {}, "no commit may pass while the check's lock is held"
        gate.commit()
        for t in threads:
            t.join()
    through = _active(conn, "Backups run at 02:00 UTC%")
    _report("two held-open near-duplicates commit behind a held lock", [str(outcomes)], through)
    assert sorted(outcomes.values()) == ["BR022", "committed"]
    assert len(through) == 1


def test_the_client_sends_a_write_refused_at_commit_again(conn, db_url) -> None:
    """Brain.call sends a write that a concurrent near-duplicate beat at commit (BR022) again: the
    caller gets the fold into the memory that got through, as if they had been written in turn."""
    a, a2 = _near_dups(2, 0.94)
    _surround(conn, [a, a2])
    with psycopg.connect(db_url) as gate, psycopg.connect(db_url, autocommit=True) as other:
        gate.execute("SELECT brain._lock_commits('fact', %s)", (PROJECT,))
        first: dict = {}

        def write_first() -> None:
            first.update(
                remember(other, kind="fact", project=PROJECT, headline="Logs are kept 30 days", embedding=a)
            )

        t1 = threading.Thread(target=write_first)
        t1.start()
        _wait_until(
            "the first write waits at its commit",
            lambda: _waiting_on_advisory(conn, [other.info.backend_pid]),
        )

        brain = Brain(psycopg.connect(db_url, autocommit=True), embedder=get_embedder("hash"))
        result: list = []

        def write_second() -> None:
            result.extend(
                brain.call(
                    "remember", kind="fact", project=PROJECT, headline="Logs are kept 30 days!", embedding=a2
                )
            )

        t2 = threading.Thread(target=write_second)
        t2.start()
        _wait_until(
            "both writes wait at their commit",
            lambda: (
                len(
                    rows(
                        conn, "SELECT DISTINCT pid FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
                    )
                )
                == 2
            ),
        )
        gate.commit()  # the first in line commits first; the second then finds it
        t1.join()
        t2.join()
        brain.close()
    through = _active(conn, "Logs are kept 30 days%")
    _report("a Brain write beaten at commit", [f"first: {first}", f"second: {result}"], through)
    assert first["action"] == "created"
    assert len(through) == 1 and through[0]["memory_id"] == first["memory_id"]
    (row,) = result
    assert (row["action"], row["memory_id"]) == ("updated", first["memory_id"]), "sent again, it folds in"


def test_a_batch_of_the_same_kind_and_project_waits_for_an_open_single_write(conn, db_url) -> None:
    """observe_batch locks the whole kind and project, single writes take that lock shared: a batch
    near-identical to a held-open write (disjoint neighbours again) waits (seen in pg_locks) and,
    once the write commits, folds its row into it."""
    a, a2 = _near_dups(2, 0.94)
    near_a, near_a2 = _surround(conn, [a, a2])
    assert not near_a & near_a2
    with psycopg.connect(db_url) as holder, psycopg.connect(db_url, autocommit=True) as batcher:
        first = remember(
            holder,
            kind="fact",
            project=PROJECT,
            headline="User prefers dark mode",
            origin="observed",
            embedding=a,
        )
        assert first["action"] == "created"
        result: list = []

        def batch() -> None:
            result.extend(
                rows(
                    batcher,
                    "SELECT * FROM brain.observe_batch(texts => %s, kind => 'fact', project => %s,"
                    " embeddings => %s::float8[][])",
                    (["User prefers dark mode!"], PROJECT, [a2]),
                )
            )

        t = threading.Thread(target=batch)
        t.start()
        _wait_until(
            "the batch waits for the open write",
            lambda: _waiting_on_advisory(conn, [batcher.info.backend_pid]) == [batcher.info.backend_pid],
        )
        assert result == []
        holder.commit()
        t.join()
    through = _active(conn, "User prefers dark mode%")
    _report("a batch against a held-open single write", [f"single: {first}", f"batch: {result}"], through)
    (item,) = result
    assert item["memory_id"] == first["memory_id"] and item["action"] in ("skipped", "updated")
    assert [r["memory_id"] for r in through] == [first["memory_id"]]


def test_repeatable_read_cannot_write_with_an_embedding_and_serializable_keeps_the_race_safe(
    conn, db_url
) -> None:
    """Under REPEATABLE READ the check at commit would read the transaction's first snapshot and miss
    a later commit: such writes are refused (BR009). Under SERIALIZABLE the same race as above ends
    with one memory too (PostgreSQL's serialization failure, 40001, or BR022)."""
    a, a2 = _near_dups(2, 0.94)
    _surround(conn, [a, a2])
    with psycopg.connect(db_url) as rr:
        rr.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        with pytest.raises(psycopg.Error) as refused:
            remember(rr, kind="fact", project=PROJECT, headline="Tokens expire after 1 hour", embedding=a)
        assert refused.value.sqlstate == "BR009"
        assert "READ COMMITTED" in refused.value.diag.message_hint

    with psycopg.connect(db_url) as holder, psycopg.connect(db_url) as writer:
        holder.isolation_level = writer.isolation_level = psycopg.IsolationLevel.SERIALIZABLE
        first = remember(
            holder, kind="fact", project=PROJECT, headline="Tokens expire after 1 hour", embedding=a
        )
        second = remember(
            writer, kind="fact", project=PROJECT, headline="Tokens expire after 1 hour!", embedding=a2
        )
        assert (first["action"], second["action"]) == ("created", "created")
        outcomes = []
        for c in (writer, holder):
            try:
                c.commit()
                outcomes.append("committed")
            except psycopg.Error as exc:
                outcomes.append(exc.sqlstate)
    through = _active(conn, "Tokens expire after 1 hour%")
    _report("serializable pair, disjoint neighbours", [f"writer, holder: {outcomes}"], through)
    assert outcomes[0] == "committed" and outcomes[1] in ("40001", "BR022")
    assert len(through) == 1


def test_an_uncontended_write_looks_for_its_duplicates_once(database, db_url) -> None:
    """A write looks for its nearest memories to lock them (brain._lock_near), reuses that lookup
    when no other transaction has ended since, and at commit looks again only if one has: alone,
    one lookup; with a write committed by another connection before its commit, a second one,
    which is what keeps two concurrent near-duplicates from both getting through."""
    with functions_tracked(database):
        a, b, c, d, e = _near_dups(5, 0.5)
        with psycopg.connect(db_url) as writer, psycopg.connect(db_url, autocommit=True) as other:
            other.execute("SET lock_timeout = '10s'")  # it must not wait for the writer: fail, not hang
            _surround(other, [a])

            def committed(what: str, written: dict, base: int, after_write: int) -> tuple[int, int]:
                """Runs the check at commit now, commits: a created write; returns (after the
                write, with the check) lookups since base."""
                writer.execute("SET CONSTRAINTS ALL IMMEDIATE")
                after_check = function_calls(writer, LOOKUP) - base
                writer.commit()
                print(
                    f"{what}: {written['action']}; lookups after the write {after_write},"
                    f" with the check {after_check}"
                )
                assert written["action"] == "created"
                return after_write, after_check

            # Alone: any transaction on the server that ends between the lookup and the commit
            # (autovacuum's, another test's leftover connection) rightly costs a second lookup, so
            # an attempt that saw one is tried again; one of three must get through with one lookup.
            attempts = []
            for vector, headline in (
                (a, "Backups run at 02:00"),
                (d, "Backups keep 30 days"),
                (e, "Backups are encrypted"),
            ):
                base = function_calls(writer, LOOKUP)  # in the writer's transaction, as every reading below
                first = remember(writer, kind="fact", project=PROJECT, headline=headline, embedding=vector)
                after_write = function_calls(writer, LOOKUP) - base
                attempts.append(committed("\nalone", first, base, after_write))
                if attempts[-1] == (1, 1):
                    break
                assert attempts[-1] == (1, 2), attempts  # never more than the one look again
            assert attempts[-1] == (1, 1), f"every attempt looked twice: {attempts}"

            base = function_calls(writer, LOOKUP)
            second = remember(
                writer, kind="fact", project=PROJECT, headline="Restores are tested monthly", embedding=b
            )
            after_write = function_calls(writer, LOOKUP) - base
            # another scope: no lock in common, and still a transaction that ended after the lookup
            remember(other, kind="fact", project="web", headline="Disk alerts page the on-call", embedding=c)
            lookups = committed("another write committed before the check", second, base, after_write)
            assert lookups == (1, 2)
