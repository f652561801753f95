"""Retrieval that finds the evidence: the BM25 lexical leg and its statistics, identifiers as
typed, a candidate pool that does not depend on max_results, calibrated relevance and its
floor, per-space calibration, contextual indexing and neighbourhood (docs/ranking.md)."""

from __future__ import annotations

import threading

import psycopg
import pytest
from helpers import call_rows, one, raises_br, remember, rows, scalar, unit
from psycopg.types.json import Jsonb


def search(conn, query: str, embedding: list[float] | None = None, **options) -> list[dict]:
    return call_rows(conn, "search", query=query, query_embedding=embedding, **options)


def ids(results: list[dict]) -> list[int]:
    return [r["id"] for r in results]


def observe(conn, texts: list[str], **arrays) -> list[dict]:
    return call_rows(conn, "observe_batch", texts=texts, **arrays)


LOG_LINES = [
    f"event=checkpoint step={i} shard=s{i % 7} latency_ms={100 + (i * 37) % 900}"
    f" retries={i % 4} host=web-{i % 5}"
    for i in range(300)
]


def test_rare_words_are_not_swamped_by_words_every_memory_holds(conn) -> None:
    """300 log lines that differ only in their numbers: the line's numbers find it first,
    whether or not the query also holds the words every line has."""
    created = observe(conn, LOG_LINES)
    by_line = {r["item"]: r["memory_id"] for r in created}
    for i in (3, 77, 150, 299):
        latency = 100 + (i * 37) % 900
        bare = f"step={i} latency_ms={latency}"
        noisy = f"event checkpoint step shard latency retries host step={i} latency_ms={latency}"
        for query in (bare, noisy):
            assert ids(search(conn, query, min_relevance=0))[0] == by_line[i + 1], query
    terms = {
        t["lexeme"]: t for t in rows(conn, "SELECT * FROM brain.lexical_terms('event checkpoint step 77')")
    }
    assert terms["checkpoint"]["docs"] == 300 and not terms["checkpoint"]["searched"]
    assert terms["77"]["searched"] and terms["77"]["idf"] > 10 * terms["checkpoint"]["idf"]


def test_identifiers_versions_and_code_tokens_match_as_typed(conn) -> None:
    timeout = remember(
        conn,
        kind="fact",
        headline="Pool setting",
        body="The pooler closes clients after idle_timeout seconds.",
    )["memory_id"]
    idle = remember(conn, kind="fact", headline="Idle workers", body="Workers idle out after a timeout.")[
        "memory_id"
    ]
    version = remember(conn, kind="fact", headline="Agent release", body="Agents on v2.3.1 leak sockets.")[
        "memory_id"
    ]
    remember(conn, kind="fact", headline="Agent release notes", body="Agents on v2.3.0 are fine.")
    ssl = remember(
        conn, kind="incident", headline="Handshake failed", body="curl: ERR_SSL_PROTOCOL_ERROR on api"
    )["memory_id"]
    remember(
        conn,
        kind="fact",
        headline="Error budget",
        body="An ERR page costs a point; SSL renewals are monthly.",
    )
    assert ids(search(conn, "idle_timeout"))[:1] == [timeout]
    assert ids(search(conn, "idle_timeout", min_relevance=0))[:2] == [timeout, idle], "the parts still match"
    assert ids(search(conn, "v2.3.1")) == [version]
    assert ids(search(conn, "ERR_SSL"))[:1] == [ssl]
    assert "err_ssl" in scalar(conn, "SELECT brain.code_tokens('ERR_SSL_PROTOCOL_ERROR')")


def test_the_first_results_do_not_depend_on_max_results(conn) -> None:
    for i in range(150):
        remember(
            conn,
            kind="fact",
            headline=f"Deploy note {i} for service s{i % 13}",
            body=f"deploy step {i % 9} region r{i % 4}",
            embedding=unit(0.3 + 0.6 * ((i * 7919) % 150) / 150, axis=1 + i % 300),
        )
    for query, vector in (
        ("deploy step 4 region r2", unit(1.0)),
        ("service s7 deploy", None),
        ("", unit(1.0)),
    ):
        ten = search(conn, query, vector, max_results=10, min_relevance=0)
        hundred = search(conn, query, vector, max_results=100, min_relevance=0)
        assert len(ten) == 10 and len(hundred) > 10
        assert ids(ten) == ids(hundred)[:10], query


def test_each_hit_carries_its_source_reference_metadata_and_thread(conn) -> None:
    observe(
        conn,
        ["user: the staging database is called pg-stage-2", "assistant: noted, pg-stage-2 for staging"],
        source_system="claude-code",
        source_refs=["session-9#1", "session-9#2"],
        metadata=[Jsonb({"role": "user"}), Jsonb({"role": "assistant"})],
        threads=["session-9", "session-9"],
    )
    hit = search(conn, "staging database name")[0]
    assert hit["source_system"] == "claude-code" and hit["source_ref"] == "session-9#1"
    assert hit["metadata"] == {"role": "user"} and (hit["thread"], hit["position"]) == ("session-9", 1)


def test_a_query_about_nothing_stored_returns_nothing_by_default(conn) -> None:
    for text in (
        "Prod runs PostgreSQL 17 on db-primary-01",
        "Deploys go out on Tuesdays after the change review",
        "The billing service retries failed charges three times",
        "Alice owns the on-call rotation for the API team",
    ):
        remember(conn, kind="fact", headline=text)
    assert search(conn, "favourite recipe for banana bread") == []
    assert search(conn, "favourite recipe for banana bread", min_relevance=0) == [], "no word in common"
    found = search(conn, "who owns the on-call rotation")
    assert [r["headline"] for r in found][:1] == ["Alice owns the on-call rotation for the API team"]
    floor = scalar(conn, "SELECT brain.setting('min_relevance')::float")
    assert all(floor <= r["relevance"] <= 1 for r in found)
    with raises_br("BR009"):
        search(conn, "rotation", min_relevance=1.5)
    with raises_br("BR009"):
        search(conn, "rotation", neighbours=11)


def test_relevance_is_calibrated_per_embedding_space(conn) -> None:
    """Each model has its own similarity scale: the space carries its calibration, a known
    model gets its calibrated values, and search judges a vector match by the active space's."""
    minilm = one(conn, "SELECT * FROM brain.use_embedding_space('local', 'all-MiniLM-L6-v2', 384)")
    known = one(conn, "SELECT * FROM brain._known_calibration('local', 'all-MiniLM-L6-v2')")
    assert (minilm["relevance_center"], minilm["relevance_slope"]) == (
        pytest.approx(known["relevance_center"]),
        pytest.approx(known["relevance_slope"]),
    )
    assert (minilm["near_identical"], minilm["related"]) == (
        pytest.approx(known["near_identical"]),
        pytest.approx(known["related"]),
    )
    hashed = one(conn, "SELECT * FROM brain.embedding_space WHERE provider = 'hash'")
    memory = remember(conn, kind="fact", headline="Backups run nightly", embedding=unit(0.6))["memory_id"]
    (hit,) = search(conn, "", unit(1.0), min_relevance=0)
    assert hit["id"] == memory
    expected = scalar(
        conn,
        "SELECT brain.relevance(0.6, NULL, ARRAY[%s, %s, 0, 1, 0, 1, 1])",
        (hashed["relevance_center"], hashed["relevance_slope"]),
    )
    assert hit["relevance"] == pytest.approx(expected, abs=1e-4)
    # A stricter calibration of the same space: the same match is judged less relevant.
    conn.execute(
        "UPDATE brain.embedding_space SET relevance_center = 0.8 WHERE space_id = %s", (hashed["space_id"],)
    )
    (again,) = search(conn, "", unit(1.0), min_relevance=0)
    assert again["relevance"] < hit["relevance"]
    assert search(conn, "", unit(1.0), min_relevance=0.5) == [], "0.73 before, 0.12 now"


def test_observed_turns_carry_their_context_and_both_sides_count(conn) -> None:
    turns = [
        "user: I adopted a cat last week",
        "assistant: Congratulations! What did you name her?",
        "user: Pixel, after the old phone",
        "assistant: Pixel is a lovely name.",
        "user: Now, can you help me plan a trip to Lisbon?",
    ]
    meta = [Jsonb({"role": t.split(":")[0], "date": "2023/05/20"}) for t in turns]
    out = observe(conn, turns, metadata=meta, threads=["s1"] * 5, positions=[0, 1, 2, 3, 4])
    memory = {r["item"]: r["memory_id"] for r in out}
    third = one(
        conn,
        "SELECT context, thread, position, headline FROM brain.memory WHERE memory_id = %s",
        (memory[3],),
    )
    assert third["thread"] == "s1" and third["position"] == 2
    assert third["context"].startswith("user 2023/05/20")
    assert (
        "before: assistant: Congratulations!" in third["context"]
        and "after: assistant: Pixel" in third["context"]
    )
    assert "cat" not in third["headline"].lower(), "context is indexed, not part of the text"
    # "cat" is in turn 1's text, and in the context of turn 2 (its neighbour): the text ranks first.
    found = search(conn, "cat", min_relevance=0)
    assert ids(found)[:2] == [memory[1], memory[2]] and found[0]["relevance"] > found[1]["relevance"]
    # A secret in a given context refuses its item, as one in metadata does.
    refused = observe(conn, ["user: hello"], contexts=["key AKIAIOSFODNN7EXAMPLE in the context"])
    assert refused[0]["action"] == "rejected" and refused[0]["error_code"] == "BR007"
    with raises_br("BR009"):
        observe(conn, ["a", "b"], threads=["s2"])


SUBJECTS = [
    "the weather on the coast",
    "pruning the apple trees",
    "a recipe for lentil soup",
    "the train strike on Monday",
    "repainting the fence",
    "the cellar door code 4417",
    "a birthday present for Ana",
    "the broken bicycle chain",
    "tickets for the jazz concert",
    "moving the piano upstairs",
]


def test_a_hit_brings_its_neighbours_within_the_result_budget(conn) -> None:
    # (turns that differ: near-identical turns of one thread would stand as one, their best)
    turns = [f"user: turn {i} about {subject}" for i, subject in enumerate(SUBJECTS)]
    out = observe(conn, turns, threads=["chat"] * 10)
    memory = {r["item"]: r["memory_id"] for r in out}
    # The turns beside it hold the words in their context only: found, less relevant.
    alone = search(conn, "cellar door code", min_relevance=0)
    assert ids(alone)[0] == memory[6] and set(ids(alone)[1:]) == {memory[5], memory[7]}
    floor = (alone[0]["relevance"] + max(r["relevance"] for r in alone[1:])) / 2
    assert alone[0]["relevance"] > floor > max(r["relevance"] for r in alone[1:])
    found = search(conn, "cellar door code", min_relevance=floor, neighbours=1)
    assert ids(found) == [memory[6], memory[5], memory[7]]
    assert [r["neighbour_of"] for r in found] == [None, memory[6], memory[6]]
    assert found[1]["relevance"] is None
    assert len(search(conn, "cellar door code", neighbours=3, max_results=2)) == 2, "within max_results"
    # The chunks of one long document are a thread in chunk order.
    doc = "\n\n".join(
        f"## Part {i}\n\n" + " ".join(f"sentence {j} of part {i} says something new." for j in range(40))
        for i in range(4)
    )
    chunks = observe(conn, [doc], origin="artifact")
    assert len(chunks) > 2
    threads = rows(
        conn,
        "SELECT thread, position, context FROM brain.memory WHERE memory_id = ANY(%s) ORDER BY position",
        ([r["memory_id"] for r in chunks],),
    )
    assert len({t["thread"] for t in threads}) == 1 and [t["position"] for t in threads] == list(
        range(1, len(chunks) + 1)
    )
    assert all(t["context"] and "Part" in t["context"] for t in threads), "the heading path is context"


def test_the_corpus_counts_follow_every_write_and_writers_do_not_wait(conn, db_url) -> None:
    def counts() -> tuple[int, int]:
        r = one(conn, "SELECT sum(docs)::int AS docs, sum(lexemes)::int AS lexemes FROM brain.lexical_corpus")
        return r["docs"] or 0, r["lexemes"] or 0

    before = counts()
    a = remember(conn, kind="fact", headline="Gateway timeouts come from the old proxy")["memory_id"]
    docs, lexemes = counts()
    length = scalar(conn, "SELECT lexical_len FROM brain.memory WHERE memory_id = %s", (a,))
    assert (docs, lexemes) == (before[0] + 1, before[1] + length) and length >= 4
    observe(conn, ["one observed line", "two observed lines"])
    assert counts()[0] == before[0] + 3
    assert scalar(conn, "SELECT sum(docs) FROM brain.lexical_corpus") == scalar(
        conn, "SELECT count(*) FROM brain.memory"
    )
    # A writer holding its slot open does not make a second writer wait.
    with psycopg.connect(db_url) as first:
        first.execute("SELECT brain.remember(kind => 'fact', headline => 'First writer holds its slot')")
        done = threading.Event()

        def second() -> None:
            with psycopg.connect(db_url, autocommit=True) as other:
                other.execute("SET lock_timeout = '2s'")
                other.execute("SELECT brain.remember(kind => 'fact', headline => 'Second writer goes on')")
            done.set()

        t = threading.Thread(target=second)
        t.start()
        t.join(10)
        assert done.is_set(), "the second writer waited for the first"
        first.commit()
    assert counts()[0] == before[0] + 5
    assert scalar(conn, "SELECT count(*) FROM brain.lexical_corpus") == 2, (
        "a second slot for the second writer"
    )


def test_a_word_past_the_counting_cap_is_estimated_from_the_workspaces_sample(conn) -> None:
    """The lexical leg counts each word up to lexical_max_rows; past that, the workspace's sampled
    word frequencies (brain.analyze_lexemes)."""
    observe(conn, LOG_LINES)
    conn.execute("SELECT brain.set_setting('lexical_max_rows', '100'::jsonb)")
    sampled = scalar(conn, "SELECT brain.analyze_lexemes()")
    assert sampled["sampled"] == sampled["memories"] > 200
    terms = {t["lexeme"]: t for t in rows(conn, "SELECT * FROM brain.lexical_terms('checkpoint step=77')")}
    assert 250 <= terms["checkpoint"]["docs"] <= 300 and not terms["checkpoint"]["searched"]
    assert terms["77"]["searched"] and terms["77"]["docs"] < 100
    # a word the sample lists as held by more than twice the cap is not counted at all
    # (counting visits a memory per row counted); a rare one is
    fetched = "SELECT pg_stat_get_xact_tuples_fetched('brain.memory'::regclass)"
    for word, counted in (("checkpoint", False), ("77", True)):
        with conn.transaction():
            before = scalar(conn, fetched)
            rows(conn, "SELECT * FROM brain.lexical_terms(%s)", (word,))
            assert (scalar(conn, fetched) > before) == counted, word
    # under twice the cap no word can be skipped: each is counted, and the sample is
    # read afterwards for the words past the cap only
    conn.execute("SELECT brain.set_setting('lexical_max_rows', '200'::jsonb)")
    terms = {t["lexeme"]: t for t in rows(conn, "SELECT * FROM brain.lexical_terms('checkpoint step=77')")}
    assert 250 <= terms["checkpoint"]["docs"] <= 300 and terms["77"]["docs"] < 100
    conn.execute("SELECT brain.set_setting('lexical_max_rows', '100'::jsonb)")
    assert ids(search(conn, "checkpoint step=77 latency_ms=249", min_relevance=0))[0] == scalar(
        conn,
        "SELECT memory_id FROM brain.memory WHERE body LIKE '%%step=77 %%' OR headline LIKE '%%step=77 %%'",
    )


def test_no_workspace_learns_how_often_another_workspaces_words_occur(conn, database) -> None:
    """The lexical leg's frequencies are the workspace's own. Workspace 2 holds "quokka" in 300
    memories, workspace 1 in none: after the table's statistics and both samples are taken, the
    word has no weight in workspace 1 (it used to come back held by ~0.8 of its memories,
    read off the whole table's statistics), and the common words of workspace 1 keep theirs."""
    observe(conn, LOG_LINES)
    conn.execute("SELECT brain.set_setting('lexical_max_rows', '20'::jsonb)")
    with psycopg.connect(database, autocommit=True) as owner:
        (other,) = owner.execute(
            "INSERT INTO brain.workspace (organization_id, name) VALUES (1, 'other') RETURNING workspace_id"
        ).fetchone()
        owner.execute("SELECT set_config('brain.workspace', %s, false)", (str(other),))
        owner.execute(
            "INSERT INTO brain.memory (kind, headline, normalized)"
            " SELECT 'fact', 'quokka sighting number ' || i, 'quokka ' || i FROM generate_series(1, 900) AS i"
        )
        owner.execute("SELECT brain.analyze_lexemes()")
        owner.execute("ANALYZE brain.memory")
        listed = owner.execute(
            "SELECT 'quokka' = ANY (most_common_elems::text::text[]) FROM pg_stats"
            " WHERE schemaname = 'brain' AND tablename = 'memory' AND attname = 'tsv'"
        ).fetchone()
        assert listed == (True,), "the table's statistics list the other workspace's word"
    conn.execute("SELECT brain.analyze_lexemes()")
    terms = {t["lexeme"]: t for t in rows(conn, "SELECT * FROM brain.lexical_terms('quokka checkpoint')")}
    assert "quokka" not in terms, terms
    assert terms["checkpoint"]["docs"] >= 250
    assert scalar(conn, "SELECT count(*) FROM brain._lexeme_shares(1, ARRAY['quokka']) WHERE listed") == 0
    assert scalar(conn, "SELECT count(*) FROM brain.lexeme_stat WHERE lexeme = 'quokka'") == 0
    assert search(conn, "quokka", min_relevance=0) == []


def test_search_max_per_thread_lets_other_threads_in(conn) -> None:
    """One conversation says a thing five times, another once and less plainly: with
    search_max_per_thread 2, the other conversation's turn comes third instead of sixth."""
    scalar(conn, "SELECT brain.set_setting('search_thread_decay', '1')")  # the cap alone
    loud = observe(
        conn,
        [
            "user: the boiler service is booked with Harrow Heating for Monday",
            "user: Harrow Heating says the boiler service takes two hours",
            "user: I paid Harrow Heating a deposit for the boiler service",
            "user: the boiler service by Harrow Heating needs the loft cleared",
            "user: Harrow Heating confirmed the boiler service by email",
        ],
        threads=["loud"] * 5,
    )
    quiet = observe(
        conn,
        ["user: Harrow Heating called about the boiler", "assistant: weekend plans then"],
        threads=["quiet", "quiet"],
    )
    quiet_id = quiet[0]["memory_id"]
    loud_ids = [r["memory_id"] for r in loud]
    assert len(set(loud_ids)) == 5
    plain = ids(search(conn, "boiler service booked Harrow Heating", min_relevance=0, max_results=6))
    assert plain[:5] == [i for i in plain[:5] if i in loud_ids] and plain.index(quiet_id) == 5
    plain_all = ids(search(conn, "boiler service booked Harrow Heating", min_relevance=0, max_results=20))
    scalar(conn, "SELECT brain.set_setting('search_max_per_thread', '2')")
    capped = ids(search(conn, "boiler service booked Harrow Heating", min_relevance=0, max_results=6))
    assert capped.index(quiet_id) == 2 and capped[:2] == plain[:2]
    capped_all = ids(search(conn, "boiler service booked Harrow Heating", min_relevance=0, max_results=20))
    assert sorted(capped_all) == sorted(plain_all) and capped_all != plain_all, "moved down, never dropped"
    scalar(conn, "SELECT brain.set_setting('search_max_per_thread', '0')")
    assert ids(search(conn, "boiler service booked Harrow Heating", min_relevance=0, max_results=6)) == plain


LOUD_THREAD = [
    "user: the boiler service is booked with Harrow Heating for Monday",
    "user: Harrow Heating says the boiler service takes two hours",
    "user: I paid Harrow Heating a deposit for the boiler service",
    "user: the boiler service by Harrow Heating needs the loft cleared",
    "user: Harrow Heating confirmed the boiler service by email",
]
QUERY = "boiler service booked Harrow Heating"


def test_a_threads_further_hits_weigh_less_so_other_threads_come_up(conn) -> None:
    """search_thread_decay (0.6): a thread's hit ranks by its score x 0.6^c, c counting each
    better hit of its thread by 1 / its distance in turns. The quiet conversation's one turn,
    sixth when every hit ranks by its own score (decay 1), never goes down; nothing is dropped.
    (Before c weighed distance, it came up to third here: the loud turns restate one another
    but each sits next to only one or two of them.)"""
    loud = [r["memory_id"] for r in observe(conn, LOUD_THREAD, threads=["loud"] * 5)]
    quiet = observe(
        conn,
        ["user: Harrow Heating called about the boiler", "user: weekend plans then"],
        threads=["quiet", "quiet"],
    )[0]["memory_id"]
    decayed = ids(search(conn, QUERY, min_relevance=0, max_results=20))
    scalar(conn, "SELECT brain.set_setting('search_thread_decay', '1')")
    plain = ids(search(conn, QUERY, min_relevance=0, max_results=20))
    print("decay 0.6:", decayed.index(quiet) + 1, "decay 1:", plain.index(quiet) + 1)
    assert plain[:5] == [i for i in plain if i in loud] and plain.index(quiet) == 5
    assert decayed[0] == plain[0] and decayed.index(quiet) <= plain.index(quiet)
    assert sorted(decayed) == sorted(plain), "moved, never dropped"
    with raises_br("BR009"):
        scalar(conn, "SELECT brain.set_setting('search_thread_decay', '1.5')")


def test_a_threads_hit_next_to_a_better_one_weighs_less_than_one_far_from_it(conn) -> None:
    """The next turn of the same exchange restates it and weighs 0.6 (c = 1); a turn of the same
    conversation fifty turns on is another part of it and weighs almost its own score (c = 1/50)."""
    got = observe(
        conn,
        [
            "user: boiler service booked, Harrow Heating",
            "user: the boiler service is booked with Harrow Heating, as I said",
            "user: the boiler service is booked with Harrow Heating, and the loft is cleared by then",
        ],
        threads=["t", "t", "t"],
        positions=[1, 2, 51],
    )
    best, near, far = (r["memory_id"] for r in got)
    decayed = ids(search(conn, QUERY, min_relevance=0))
    scalar(conn, "SELECT brain.set_setting('search_thread_decay', '1')")
    plain = ids(search(conn, QUERY, min_relevance=0))
    print("decay 0.6:", decayed, "decay 1:", plain, "best, near, far:", best, near, far)
    assert plain == [best, near, far], "by their own scores"
    assert decayed == [best, far, near]


def test_the_parts_of_one_long_text_stand_as_one_hit(conn) -> None:
    """A long turn stored as several chunks (one source_ref and position) that all match
    the query: its best chunk stands for it, and another turn comes before its other
    chunks; with max_results 100 every chunk is still there, after."""
    section = (
        "The retry budget of the ingest worker is spent when a batch fails three times in a row; "
        "then the worker parks the batch, raises an action item and moves on to the next batch. "
    )
    long_turn = "assistant: " + " ".join(f"Step {i}. {section}" for i in range(12))
    other = "user: what happens when the retry budget is spent?"
    got = observe(
        conn,
        [long_turn, other],
        threads=["t1", "t2"],
        positions=[1, 1],
        metadata=[Jsonb({"role": "assistant"}), Jsonb({"role": "user"})],
    )
    parts = [r["memory_id"] for r in got if r["item"] == 1]
    other_id = next(r["memory_id"] for r in got if r["item"] == 2)
    assert len(set(parts)) >= 3, got
    scalar(conn, "SELECT brain.set_setting('search_thread_decay', '1')")
    scalar(conn, "SELECT brain.set_setting('assistant_turn_weight', '1')")
    found = ids(search(conn, "ingest worker retry budget parks the batch", min_relevance=0, max_results=100))
    first_part = min(found.index(p) for p in parts)
    print("order:", ["other" if i == other_id else f"part {parts.index(i) + 1}" for i in found])
    assert found.index(other_id) == first_part + 1, "the other turn comes before the long turn's second chunk"
    assert sorted(set(found) & set(parts)) == sorted(parts), "every chunk is still returned"


def test_memories_that_only_share_a_source_are_not_parts_of_one_text(conn) -> None:
    """Two facts written from one postmortem (one source_ref, no chunks) rank each by its own
    score: the second is not sent after other memories as a part of the first."""
    common = dict(kind="fact", source_ref="postmortems/2026-11-02.md")
    first = remember(
        conn, headline="Ingest worker retry budget", body="the ingest worker retry budget is three", **common
    )
    second = remember(
        conn,
        headline="Ingest worker parking",
        body="the ingest worker parks a batch past its retry budget",
        **common,
    )
    other = remember(
        conn, kind="fact", headline="Queue sizing", body="the ingest queue holds one retry budget"
    )
    found = ids(search(conn, "ingest worker retry budget", min_relevance=0))
    print(
        "order:", found, "same source:", first["memory_id"], second["memory_id"], "other:", other["memory_id"]
    )
    assert found.index(second["memory_id"]) < found.index(other["memory_id"])


def test_what_an_assistant_said_ranks_below_what_a_person_said(conn) -> None:
    """Two observed turns that say the same thing, one by the user and one by the
    assistant: the user's comes first (assistant_turn_weight 0.25), their relevance is the
    same figure either way, and an authored memory is not weighed by any speaker."""
    got = observe(
        conn,
        [
            "user: so the staging database moved to port 6543 last week, right",
            "assistant: the staging database moved to port 6543 last week",
        ],
        metadata=[Jsonb({"role": "user"}), Jsonb({"role": "assistant"})],
        threads=["a", "b"],
    )
    said_by = {r["item"]: r["memory_id"] for r in got}
    results = search(conn, "staging database port 6543", min_relevance=0)
    order = ids(results)
    print([(r["id"], r["score"], r["relevance"]) for r in results])
    assert order.index(said_by[1]) < order.index(said_by[2])
    weighted = {r["id"]: r for r in results}
    scalar(conn, "SELECT brain.set_setting('assistant_turn_weight', '1')")
    plain = {r["id"]: r for r in search(conn, "staging database port 6543", min_relevance=0)}
    assert next(iter(plain)) == said_by[2], "the assistant's turn is the closer match"
    a = said_by[2]
    assert weighted[a]["relevance"] == plain[a]["relevance"]
    assert weighted[a]["score"] == pytest.approx(0.25 * plain[a]["score"])
    fact = remember(
        conn,
        kind="fact",
        headline="Staging port",
        body="the staging database port is 6543",
        metadata=Jsonb({"role": "assistant"}),
    )
    scalar(conn, "SELECT brain.set_setting('assistant_turn_weight', '0.25')")
    before = {r["id"]: r["score"] for r in search(conn, "staging database port 6543", min_relevance=0)}
    scalar(conn, "SELECT brain.set_setting('assistant_turn_weight', '1')")
    after = {r["id"]: r["score"] for r in search(conn, "staging database port 6543", min_relevance=0)}
    assert before[fact["memory_id"]] == pytest.approx(after[fact["memory_id"]])
