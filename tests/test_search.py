"""Hybrid search in SQL: fusion order, weights, filters, states, as_of, skills."""

from __future__ import annotations

import datetime as dt
import math
import random
import re

import psycopg
import pytest
from helpers import DIMS, call_rows, logged_plans, one, owner_execute, raises_br, remember, rows, scalar, unit


@pytest.fixture(autouse=True)
def exact_vectors_only(conn) -> None:
    """Hand-built vectors here are close on purpose: only identical vectors count as duplicates."""
    conn.execute(
        "SELECT brain.use_embedding_space('hash', 'feature-hash-v1', 384, "
        "near_identical => 1.0, related => 1.0)"
    )


def search(conn, query: str, embedding: list[float] | None = None, **filters) -> list[dict]:
    return call_rows(conn, "search", query=query, query_embedding=embedding, **filters)


def ids(results: list[dict]) -> list[int]:
    return [r["id"] for r in results]


def test_calibrated_relevance_orders_a_hand_built_set(conn) -> None:
    # (headline, body, similarity to the query's vector, axis of the rest)
    hand_built = [
        ("First memory", "alpha beta alpha beta gamma", 0.5, 3),
        ("Second memory", "alpha and other words entirely", 0.99, 1),
        ("Third memory", "nothing in common", 0.9, 2),
    ]
    a, b, c = (
        remember(conn, kind="rule", headline=h, body=body, embedding=unit(similarity, axis=axis))["memory_id"]
        for h, body, similarity, axis in hand_built
    )
    found = search(conn, "alpha beta", unit(1.0), min_relevance=0)
    assert set(ids(found)) == {a, b, c}
    by_id = {r["id"]: r for r in found}
    assert (by_id[a]["lexical_rank"], by_id[a]["vector_rank"]) == (1, 3)
    assert (by_id[b]["lexical_rank"], by_id[b]["vector_rank"]) == (2, 1)
    assert (by_id[c]["lexical_rank"], by_id[c]["vector_rank"]) == (None, 2)
    assert by_id[b]["similarity"] == pytest.approx(0.99, abs=1e-5)
    # The evidence of each: its similarity and the share of the query's BM25 weight it holds.
    space = one(
        conn, "SELECT relevance_center, relevance_slope FROM brain.embedding_space WHERE state = 'active'"
    )

    def setting(name: str) -> float:
        return float(scalar(conn, "SELECT brain.setting(%s)::float", (name,)))

    calibration = [
        space["relevance_center"],
        space["relevance_slope"],
        setting("relevance_lexical_center"),
        setting("relevance_lexical_slope"),
        setting("relevance_hybrid_bias"),
        setting("relevance_hybrid_vector"),
        setting("relevance_hybrid_lexical"),
    ]
    idf = {r["lexeme"]: r["idf"] for r in rows(conn, "SELECT * FROM brain.lexical_terms('alpha beta')")}
    assert set(idf) == {"alpha", "beta"}
    avg_len = scalar(conn, "SELECT sum(lexemes)::float / sum(docs) FROM brain.lexical_corpus")
    k1, b_ = setting("lexical_k1"), setting("lexical_b")
    for memory, sim in ((a, 0.5), (b, 0.99), (c, 0.9)):
        length, tsv_words = one(
            conn, "SELECT lexical_len, tsv::text FROM brain.memory WHERE memory_id = %s", (memory,)
        ).values()
        bm25 = sum(
            w * (k1 + 1) / (1 + k1 * (1 - b_ + b_ * length / avg_len))
            for word, w in idf.items()
            if f"'{word}'" in tsv_words
        )
        share = bm25 / sum(idf.values())
        expected = scalar(conn, "SELECT brain.relevance(%s, %s, %s)", (sim, share, calibration))
        assert by_id[memory]["relevance"] == pytest.approx(expected, rel=1e-4)
        # Rules at default importance weigh exactly 1: the score is the relevance.
        assert by_id[memory]["score"] == pytest.approx(expected, rel=1e-4)
    assert [r["relevance"] for r in found] == sorted((r["relevance"] for r in found), reverse=True)
    assert 0 < by_id[c]["relevance"] < min(by_id[a]["relevance"], by_id[b]["relevance"]) < 1, "c: no word"


def test_a_query_without_embedding_uses_the_lexical_legs(conn) -> None:
    a = remember(conn, kind="fact", headline="Redis holds the job queue")["memory_id"]
    remember(conn, kind="fact", headline="Postgres holds the accounts")
    found = search(conn, "which queue do jobs use")
    assert ids(found) == [a]
    assert found[0]["vector_rank"] is None and found[0]["lexical_rank"] == 1


def test_fuzzy_leg_finds_typos_and_identifiers(conn) -> None:
    a = remember(conn, kind="fact", headline="Postgres runs on db-primary-01")["memory_id"]
    remember(conn, kind="fact", headline="Traffic goes through the load balancer")
    found = search(conn, "postgress", min_relevance=0)
    assert ids(found) == [a] and found[0]["fuzzy_rank"] == 1 and found[0]["lexical_rank"] is None
    assert 0 < found[0]["relevance"] < 0.5, "a misspelling alone is weak evidence"
    assert ids(search(conn, "db-primary")) == [a]


def test_results_are_headlines_and_previews(conn) -> None:
    remember(conn, kind="fact", headline="Long body", body=" ".join(["word"] * 100))
    (hit,) = search(conn, "long body")
    assert len(hit["preview"]) == 160 and hit["preview"].endswith("…")
    assert "body" not in hit


def test_rating_and_pin_change_the_order(conn) -> None:
    # Six words or more: no trigram leg. Both hold the same words, so both are as
    # relevant, and the newer one comes first: the weights alone change the order.
    query = "what do we know about the cache warmup"
    b = remember(conn, kind="rule", headline="Warmup of the cache", body="before traffic arrives")
    b = b["memory_id"]
    a = remember(conn, kind="rule", headline="Cache warmup", body="before the traffic arrives")["memory_id"]
    first = search(conn, query, min_relevance=0)
    assert ids(first) == [a, b] and first[0]["relevance"] == pytest.approx(first[1]["relevance"])
    scalar(conn, "SELECT brain.rate(%s, 'up')", (b,))
    assert ids(search(conn, query, min_relevance=0)) == [b, a]
    scalar(conn, "SELECT brain.rate(%s, 'down')", (b,))
    scalar(conn, "SELECT brain.rate(%s, 'down')", (b,))
    assert ids(search(conn, query, min_relevance=0)) == [a, b]
    scalar(conn, "SELECT brain.pin(%s)", (b,))
    assert ids(search(conn, query, min_relevance=0)) == [b, a]


def test_overlay_origin_ranks_above_derived_material(conn) -> None:
    query = "what do we know about the release"
    a = remember(conn, kind="rule", headline="Release checklist", body="release release")["memory_id"]
    b = remember(conn, kind="rule", headline="Notes", body="release", origin="overlay")["memory_id"]
    assert ids(search(conn, query, min_relevance=0)) == [b, a]


def test_fact_decay_weighs_old_facts_down(conn) -> None:
    query = "what do we know about the deploy window"
    b = remember(conn, kind="fact", headline="Window for a deploy", body="tuesdays")["memory_id"]
    a = remember(conn, kind="fact", headline="Deploy window", body="on tuesdays")["memory_id"]
    assert ids(search(conn, query, min_relevance=0)) == [a, b], "as relevant: the newer first"
    owner_execute(
        conn, "UPDATE brain.memory SET created_at = now() - interval '14 days' WHERE memory_id = %s", (a,)
    )
    assert ids(search(conn, query, min_relevance=0)) == [b, a]
    weight = scalar(
        conn,
        "SELECT brain.rank_weight('fact', 'explicit', false, 0.5, 0, 0, "
        "now() - interval '14 days', 7, now())",
    )
    assert weight == pytest.approx(0.5 + 0.5 * 0.25)


def test_filters(conn) -> None:
    rule = remember(
        conn, kind="rule", headline="Deploy rule", category="procedural", project="web", tags=["ci", "deploy"]
    )["memory_id"]
    fact = remember(conn, kind="fact", headline="Deploy fact", body="@alice owns deploy", project="api")[
        "memory_id"
    ]
    glob = remember(conn, kind="task", headline="Deploy task", tags=["deploy"])["memory_id"]
    assert set(ids(search(conn, "deploy"))) == {rule, fact, glob}
    assert ids(search(conn, "deploy", kinds=["rule"])) == [rule]
    assert ids(search(conn, "deploy", categories=["procedural"])) == [rule]
    assert set(ids(search(conn, "deploy", project="web"))) == {rule, glob}
    assert set(ids(search(conn, "deploy", tags=["deploy"]))) == {rule, glob}
    assert ids(search(conn, "deploy", tags=["deploy", "ci"])) == [rule]
    assert ids(search(conn, "deploy", people=["alice"])) == [fact]
    owner_execute(conn, "UPDATE brain.memory SET created_at = '2026-01-01' WHERE memory_id = %s", (rule,))
    assert ids(search(conn, "deploy", created_before=dt.datetime(2026, 2, 1, tzinfo=dt.UTC))) == [rule]
    assert rule not in ids(search(conn, "deploy", created_after=dt.datetime(2026, 2, 1, tzinfo=dt.UTC)))


def test_superseded_archived_and_expired_are_excluded_by_default(conn) -> None:
    old = remember(conn, kind="fact", headline="Port is 8080 for the api")["memory_id"]
    new = one(conn, "SELECT * FROM brain.supersede(%s, 'Port is 9090 for the api', 'moved')", (old,))
    archived = remember(conn, kind="incident", headline="Port clash on the api host")["memory_id"]
    owner_execute(
        conn,
        "UPDATE brain.memory SET state = 'archived', archived_at = now() WHERE memory_id = %s",
        (archived,),
    )
    expiring = remember(
        conn,
        kind="fact",
        headline="Temporary api port 7070",
        expires_at=dt.datetime.now(dt.UTC) + dt.timedelta(days=1),
    )["memory_id"]

    assert set(ids(search(conn, "api port"))) == {new["memory_id"], expiring}
    with_old = search(conn, "api port", include_superseded=True)
    (old_hit,) = [r for r in with_old if r["id"] == old]
    assert (old_hit["state"], old_hit["superseded_by"], old_hit["current_id"]) == (
        "superseded",
        new["memory_id"],
        new["memory_id"],
    )
    assert archived in ids(search(conn, "api port", include_archived=True))

    later = dt.datetime.now(dt.UTC) + dt.timedelta(days=2)
    assert expiring not in ids(search(conn, "api port", now=later))
    month = dt.datetime.now(dt.UTC) + dt.timedelta(days=30)
    assert ids(search(conn, "api port", now=month)) == [new["memory_id"]], (
        "dormant after 30 days, and still found: decay ranks, it never hides"
    )


def test_as_of_returns_what_was_believed_then(conn) -> None:
    old = remember(conn, kind="fact", headline="Staging database is db-1")["memory_id"]
    new = one(conn, "SELECT * FROM brain.supersede(%s, 'Staging database is db-2', 'migrated')", (old,))[
        "memory_id"
    ]
    owner_execute(conn, "UPDATE brain.memory SET created_at = '2026-01-01' WHERE memory_id = %s", (old,))
    owner_execute(conn, "UPDATE brain.memory SET superseded_at = '2026-03-01' WHERE memory_id = %s", (old,))
    owner_execute(conn, "UPDATE brain.memory SET created_at = '2026-03-01' WHERE memory_id = %s", (new,))
    at = dict(tzinfo=dt.UTC)
    assert ids(search(conn, "staging database", as_of=dt.datetime(2026, 2, 1, **at))) == [old]
    assert ids(search(conn, "staging database", as_of=dt.datetime(2026, 4, 1, **at))) == [new]
    assert ids(search(conn, "staging database", as_of=dt.datetime(2025, 12, 1, **at))) == []
    assert ids(search(conn, "staging database")) == [new]


def skill(name: str, keywords: list[str], projects: list[str] | None = None) -> str:
    import json

    return json.dumps({"name": name, "keywords": keywords, "projects": projects or [], "always_on": False})


def test_skills_surface_first_up_to_the_limit(conn) -> None:
    plain = remember(conn, kind="rule", headline="Migrations run in CI", body="migration")["memory_id"]
    skills = [
        remember(conn, kind="rule", headline=f"Skill number {i}", skill_trigger=skill(f"s{i}", ["MIGRAT"]))[
            "memory_id"
        ]
        for i in range(6)
    ]
    found = search(conn, "how to write a migration")
    assert [r["via_skill_trigger"] for r in found[:5]] == ["s0", "s1", "s2", "s3", "s4"]
    assert ids(found[:5]) == skills[:5]
    assert plain in ids(found[5:]) and skills[5] not in ids(found)


def test_skills_respect_project_scope_and_supersede(conn) -> None:
    web = remember(
        conn, kind="rule", headline="Web deploys", skill_trigger=skill("web-deploy", ["deploy"], ["web"])
    )["memory_id"]
    glob = remember(conn, kind="rule", headline="Any deploy", skill_trigger=skill("deploy", ["deploy"]))
    assert [r["via_skill_trigger"] for r in search(conn, "deploy now") if r["via_skill_trigger"]] == [
        "deploy"
    ]
    in_web = [r["via_skill_trigger"] for r in search(conn, "deploy now", project="web")]
    assert in_web[:2] == ["web-deploy", "deploy"]
    one(conn, "SELECT * FROM brain.supersede(%s, 'Any deploy, carefully', 'clarified')", (glob["memory_id"],))
    skills = [r["via_skill_trigger"] for r in search(conn, "deploy now", include_superseded=True)]
    assert skills.count("deploy") == 1, "the superseded version never surfaces as a skill"
    loaded = scalar(conn, "SELECT brain.load_skill('deploy')")
    assert loaded["headline"] == "Any deploy, carefully"
    with raises_br("BR010"):
        scalar(conn, "SELECT brain.load_skill('web-deploy')")
    assert scalar(conn, "SELECT brain.load_skill('web-deploy', 'web')")["id"] == web


def test_skill_names_are_unique_among_active_memories(conn) -> None:
    first = remember(conn, kind="rule", headline="One", skill_trigger=skill("dup", ["x"]))["memory_id"]
    with raises_br("BR009") as caught:
        remember(conn, kind="rule", headline="Two", skill_trigger=skill("dup", ["y"]))
    assert f"Supersede #{first}" in caught.error.diag.message_hint


def test_filters_do_not_starve_the_vector_leg(conn) -> None:
    """200 memories, 5 tagged: the tag filter still returns all 5 through the HNSW index."""
    for i in range(200):
        remember(
            conn,
            kind="fact",
            headline=f"Observation number {i}",
            tags=["rare"] if i % 40 == 0 else [],
            embedding=unit(0.2 + 0.7 * (i / 200), axis=1 + i % 300),
        )
    conn.execute("SET enable_seqscan = off")
    conn.execute("SET enable_bitmapscan = off")
    found = search(conn, "", unit(1.0), tags=["rare"], max_results=10, min_relevance=0)
    assert len(found) == 5 and all(r["vector_rank"] for r in found)


def test_search_argument_errors(conn) -> None:
    with raises_br("BR009"):
        search(conn, "   ")
    with raises_br("BR009"):
        search(conn, "x", max_results=0)
    with raises_br("BR012"):
        search(conn, "x", [1.0, 2.0])


def test_list_recent_and_stats(conn) -> None:
    a = remember(conn, kind="fact", headline="First")["memory_id"]
    b = remember(conn, kind="rule", headline="Second", project="web")["memory_id"]
    assert ids(rows(conn, "SELECT * FROM brain.list_recent()")) == [b, a]
    assert ids(rows(conn, "SELECT * FROM brain.list_recent(kinds => '{fact}')")) == [a]
    stats = scalar(conn, "SELECT brain.stats()")
    assert stats["by_kind"] == {"fact": 1, "rule": 1} and stats["pending_embeddings"] == 2


def test_common_words_leave_the_text_legs_and_rare_words_decide(conn, database) -> None:
    import psycopg

    for i in range(150):
        remember(
            conn, kind="fact", headline=f"Deploy note number {i}", body=f"deploy step {i} for service s{i}"
        )
    rare = remember(conn, kind="fact", headline="Kafka deploy uses zookeeper")["memory_id"]
    with psycopg.connect(database, autocommit=True) as owner:  # only the owner may ANALYZE
        owner.execute("ANALYZE brain.memory")
    assert scalar(conn, "SELECT brain.lexical_query('deploy')") is None, "in 151 of 151 memories"
    assert scalar(conn, "SELECT brain.query_lexemes('deploy')") == "'deploy'"
    assert scalar(conn, "SELECT brain.lexical_query('zookeeper deploy')") == "'zookeep'"
    assert ids(search(conn, "zookeeper deploy")) == [rare]
    assert search(conn, "deploy") == [], "no informative word, no embedding: nothing to rank by"


def test_search_leaves_nothing_in_the_session_and_runs_nothing_of_it(conn) -> None:
    """Search plans its statement on each call and prepares none: a statement the session
    prepared under any name (a pooler's DEALLOCATE ALL, or a caller's own) is neither run nor
    removed by it."""
    wanted = remember(conn, kind="fact", headline="Deploys run from the release branch", embedding=unit(1.0))
    conn.execute("PREPARE brain_search_mine AS SELECT 1")
    for _ in range(3):
        assert ids(search(conn, "release branch", unit(1.0))) == [wanted["memory_id"]]
        assert ids(search(conn, "release branch")) == [wanted["memory_id"]]
    names = [
        r[0] for r in conn.execute("SELECT name FROM pg_prepared_statements WHERE NOT name LIKE '\\_pg3%%'")
    ]
    assert names == ["brain_search_mine"]
    conn.execute("DEALLOCATE ALL")  # what a pooler's DISCARD ALL does between clients
    assert ids(search(conn, "release branch", unit(1.0))) == [wanted["memory_id"]]


def _around_e0(similarity: float, rng: random.Random) -> list[float]:
    """A unit vector at `similarity` to e0, its remainder in a random direction."""
    g = [0.0] + [rng.gauss(0, 1) for _ in range(DIMS - 1)]
    norm = math.sqrt(sum(x * x for x in g))
    rest = math.sqrt(1 - similarity * similarity)
    return [similarity] + [rest * x / norm for x in g[1:]]


def test_a_selective_filter_still_fills_the_page_from_the_vector_leg(conn) -> None:
    # 40 near memories without the tag, 12 farther ones with it, all of one
    # cluster (random directions: a graph an HNSW scan can walk): the leg must walk past the 40.
    rng = random.Random(7)
    for i in range(40):
        remember(
            conn, kind="fact", headline=f"Untagged note {i}", embedding=_around_e0(0.95 - i * 0.001, rng)
        )
    tagged = [
        remember(
            conn,
            kind="fact",
            headline=f"Tagged note {i}",
            tags=["rare"],
            embedding=_around_e0(0.9 - i * 0.001, rng),
        )["memory_id"]
        for i in range(12)
    ]
    found = search(conn, "", unit(1.0), tags=["rare"], max_results=10, min_relevance=0)
    assert ids(found) == tagged[:10]
    found = search(conn, "", unit(1.0), project="", max_results=10)
    assert len(found) == 10, "no selective filter: the statement that walks the index"


def _hnsw_scans(conn) -> int:
    """Scans of the space's HNSW index in the current transaction."""
    return scalar(
        conn,
        "SELECT coalesce(sum(pg_stat_get_xact_numscans(c.oid)), 0) FROM pg_class c"
        " WHERE c.relnamespace = 'brain'::regnamespace AND c.relname LIKE 'embedding\\_hnsw\\_%%'",
    )


def test_filtered_search_plan_follows_the_filters_selectivity(conn, database) -> None:
    """1500 readings around e0: a tag on 3 of them is ranked exactly (all 3, most similar first),
    a tag on a tenth of them fills the page, by the exact ranking and by the index walk alike."""
    rng = random.Random(14)
    rare = {100: 0.25, 700: 0.3, 1300: 0.22}
    stored = []
    for i in range(1500):
        # at most 0.8 to e0, so no two readings are related (>= 0.75) to each other
        sim = rare.get(i, 0.2 + 0.6 * rng.random())
        tags = ["rare"] if i in rare else ["tenth"] if i % 10 == 0 else []
        r = remember(
            conn,
            kind="fact",
            headline=f"Reading {i} of sensor {i % 37} on rack {i % 11}",
            tags=tags,
            embedding=_around_e0(sim, rng),
        )
        assert r["action"] == "created"
        stored.append((r["memory_id"], sim, tags))
    # only the owner may ANALYZE (the test role's would be skipped with a warning,
    # leaving the plan to whenever autovacuum got there)
    with psycopg.connect(database, autocommit=True) as owner:
        owner.execute("ANALYZE brain.memory")
        owner.execute("ANALYZE brain.embedding")

    with conn.transaction():
        found = search(conn, "", unit(1.0), tags=["rare"], max_results=10)
        assert _hnsw_scans(conn) == 0, "3 rows: ranked exactly, not by walking the index"
    by_sim = [m for m, _, tags in sorted(stored, key=lambda x: -x[1]) if "rare" in tags]
    assert ids(found) == by_sim
    assert [r["vector_rank"] for r in found] == [1, 2, 3]
    assert [round(r["similarity"], 2) for r in found] == [0.3, 0.25, 0.22]

    tenth = [m for m, _, tags in sorted(stored, key=lambda x: -x[1]) if "tenth" in tags]
    with conn.transaction():
        exact = search(conn, "", unit(1.0), tags=["tenth"], max_results=10)
        assert _hnsw_scans(conn) == 0, "150 rows, under exact_rank_rows: ranked exactly"
    assert ids(exact) == tenth[:10]

    # Past exact_rank_rows, a filter's rows are still ranked exactly while that is cheaper than
    # the walk: fewer than 4 x sqrt(candidates x memories) (brain._exact_rank_kept), here
    # 4 x sqrt(100 x 1500) = 1,549.
    one(conn, "SELECT brain.set_setting('exact_rank_rows', '50')")
    with conn.transaction():
        exact = search(conn, "", unit(1.0), tags=["tenth"], max_results=10)
        assert _hnsw_scans(conn) == 0, "150 rows, over exact_rank_rows, under 1,549: ranked exactly"
    assert ids(exact) == tenth[:10]

    # With 10 candidates that is 4 x sqrt(10 x 1500) = 490: a filter keeping all 1500 walks.
    one(conn, "SELECT brain.set_setting('search_candidates', '10')")
    nearest = [m for m, _, _ in sorted(stored, key=lambda x: -x[1])]
    with conn.transaction():
        walked = search(conn, "", unit(1.0), kinds=["fact"], max_results=10)
        assert _hnsw_scans(conn) > 0, "1500 rows, over 490: the HNSW index is walked"
    assert len(walked) == 10 and all(r["vector_rank"] for r in walked)
    assert len(set(ids(walked)) & set(nearest[:10])) >= 8, "the walk finds the nearest of the kept rows"


def test_a_filter_that_keeps_most_memories_walks_without_counting_them(conn, database) -> None:
    """A search's filters chose the vector leg's shape by counting their rows up to
    brain._exact_rank_kept() (here, with 10 candidates, 4 x sqrt(10 x 3000) = 693): fewer are
    ranked exactly, more walk the index. A filter that keeps most of the workspace walks
    whatever the count says, and counting it read thousands of rows (a kind that keeps 70% of
    100,000 memories: 12,650 rows, 17 ms). A tenth of the bound is counted first (a tag on 1%
    is counted so, whole), then a sample of the table's pages tells the rest: the kind that
    keeps 90% is not counted, a kind on 10% is, and each finds its kept rows. A project is
    counted as a filter (2.8 x sqrt(10 x 3000) = 485: the prompt hook's search of a small
    project ranks its rows exactly), unless the sample shows it keeping at least 0.8 times
    that."""
    ws = scalar(conn, "SELECT brain.current_workspace()")
    with psycopg.connect(database, autocommit=True) as su:
        su.execute("SELECT set_config('brain.workspace', %s, false)", (str(ws),))
        su.execute(
            """INSERT INTO brain.memory (kind, project, tags, headline, normalized)
               SELECT CASE WHEN i % 10 = 0 THEN 'rule' ELSE 'fact' END,
                      CASE WHEN i % 20 = 1 THEN 'tiny' ELSE 'big' END,
                      CASE WHEN i % 100 = 0 THEN ARRAY['rare'] ELSE '{}' END,
                      'Reading ' || i || ' of sensor ' || (i % 37), 'reading ' || i
               FROM generate_series(1, 3000) AS i"""
        )
        su.execute(
            """INSERT INTO brain.embedding (workspace_id, space_id, memory_id, embedding)
               SELECT m.workspace_id, s.space_id, m.memory_id,
                      -- near e0, as the query is (about 0.6 similar), each its own way
                      (ARRAY[0.5] || ARRAY(SELECT (random() - 0.5) / 10 FROM generate_series(2, %s) AS d
                                           WHERE m.memory_id > 0))::public.vector
               FROM brain.memory m JOIN brain.embedding_space s ON s.workspace_id = m.workspace_id
               WHERE s.state = 'active' AND m.workspace_id = %s""",
            (DIMS, ws),
        )
        su.execute("ANALYZE brain.memory")
        su.execute("ANALYZE brain.embedding")
        su.execute(
            "SELECT brain.set_setting('exact_rank_rows', '50'), brain.set_setting('search_candidates', '10')"
        )
        counted = {}
        for name, filters in (
            ("fact", {"kinds": ["fact"]}),
            ("rule", {"kinds": ["rule"]}),
            ("rare", {"tags": ["rare"]}),
            ("big", {"project": "big"}),
            ("tiny", {"project": "tiny"}),
        ):
            named = ", ".join(f"{k} => %({k})s" for k in filters)
            # as the client (the superuser is no member of the workspace), its plans logged
            with logged_plans(su) as plans:
                su.execute(psycopg.sql.SQL("SET ROLE {}").format(psycopg.sql.Identifier(conn.info.user)))
                found = su.execute(
                    f"SELECT m.kind, m.tags, m.project FROM brain.search('', %(v)s, {named},"
                    " max_results => 10, min_relevance => 0) AS s"
                    " JOIN brain.memory m ON m.workspace_id = %(ws)s AND m.memory_id = s.id",
                    {"v": unit(1.0), "ws": ws, **filters},
                ).fetchall()
                su.execute("RESET ROLE")
            # sampled, and counted up to the bound (a tenth of it is counted first, whole for
            # a filter that keeps fewer)
            counted[name] = (
                any("TABLESAMPLE" in p for p in plans),
                any("array_agg(x.memory_id)" in p and "LIMIT $2) AS x" in p for p in plans),
            )
            assert len(found) == 10 and all(
                k in filters.get("kinds", [k])
                and set(filters.get("tags", [])) <= set(t)
                and p == filters.get("project", p)
                for k, t, p in found
            ), (name, found)
    assert counted == {
        "fact": (True, False),
        "rule": (True, True),
        "rare": (False, False),
        "big": (True, False),
        "tiny": (True, True),
    }


def _lexical_leg_rows_removed(plan: str) -> int:
    """The rows the lexical leg's scans of brain.memory read and threw away (auto_explain, analyze)."""
    lines = plan.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "CTE lex")
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("  CTE "))
    return sum(int(n) for n in re.findall(r"Rows Removed by Filter: (\d+)", "\n".join(lines[start:end])))


@pytest.mark.parametrize(
    ("word", "filters"),
    [
        ("xylophone", {"kinds": ["fact"]}),  # only incidents hold it
        ("ember", {"categories": ["note"]}),  # only decisions hold it
        ("ember", {"categories": ["note"], "include_superseded": True}),
        # only old memories hold it
        ("quartz", {"created_after": dt.datetime(2026, 1, 1, tzinfo=dt.UTC)}),
    ],
)
def test_a_filter_none_of_a_words_memories_pass_reads_only_that_words_memories(
    database, word, filters
) -> None:
    """With the lexical leg's LIMIT far below the rows the planner expects to pass, reading the
    memories in some index's order until enough passed looked cheaper than the word's posting
    list: with sequential scans off, the leg read every memory (or every fact) through
    memory_active, memory_created_at or memory_last_accessed instead of the table, where none
    passed. Whatever the filter, the leg reads the memories that hold the word, no others."""
    with psycopg.connect(database, autocommit=True) as su:
        su.execute("SELECT set_config('brain.workspace', '1', false)")
        su.execute(
            """INSERT INTO brain.memory (kind, category, headline, body, normalized, created_at)
               SELECT (ARRAY['fact', 'fact', 'fact', 'incident', 'rule', 'task'])[1 + i % 6],
                      (ARRAY['note', 'note', 'note', 'decision', 'learning', 'reference',
                             'gotcha'])[1 + i % 7],
                      'Pump ' || i || ' of station ' || (i % 17),
                      concat_ws(' ', 'runs at', i % 23, 'bar',
                                CASE WHEN i % 6 = 3 THEN 'xylophone' END,
                                CASE WHEN i % 7 = 3 THEN 'ember' END,
                                CASE WHEN i < 1000 THEN 'quartz' END),
                      'n' || i, timestamptz '2025-01-01' + i * interval '4 hours'
               FROM generate_series(1, 4000) AS i"""
        )
        su.execute("ANALYZE brain.memory")
        holding = su.execute(
            "SELECT count(*) FROM brain.memory WHERE tsv @@ to_tsquery('english', %s)", (word,)
        ).fetchone()[0]
        su.execute("SELECT brain.set_setting('lexical_max_term_share', '0.9')")
        su.execute("SELECT brain.set_setting('lexical_max_rows', '5')")
        named = ", ".join(f"{k} => %({k})s" for k in filters)
        with logged_plans(su, analyze=True) as plans, su.transaction():
            query = f"SELECT * FROM brain.search(%(q)s, {named})"
            found = su.execute(query, {"q": word, **filters}).fetchall()
            # (inside the transaction: a setting made local to it would show here)
            seqscan = su.execute("SHOW enable_seqscan").fetchone()
            assert seqscan == ("on",), "the caller's planner is as it was"
        assert found == []
        (plan,) = [p for p in plans if "WITH RECURSIVE vec AS" in p]
        assert _lexical_leg_rows_removed(plan) <= holding, plan
