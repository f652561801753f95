"""What a user stores stays findable: decay ranks and never hides, a fold never
erases a distinguishable fact, and the related gate has a way through."""

from __future__ import annotations

import datetime as dt
import math

import anyio
import psycopg
import pytest
from helpers import call_rows, owner_execute, raises_br, remember, rows, scalar, unit
from test_index import index_all
from test_mcp import agent, call
from test_observe import observe

from pybrain.embed import get_embedder

LOG = "event {i} pod-{pod} step {step} completed"


def log_lines(n: int) -> list[str]:
    return [LOG.format(i=i, pod=i % 7, step=i * 13) for i in range(n)]


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / math.sqrt(
        sum(x * x for x in a) * sum(y * y for y in b)
    )


def search_ids(conn, query: str, **kwargs) -> list[int]:
    return [r["id"] for r in call_rows(conn, "search", query=query, **kwargs)]


# --- distinguishing terms ---------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("Prod runs PostgreSQL 17", ["17", "postgresql"]),
        ("event 150 pod-3 step 1950 completed", ["150", "1950", "pod-3"]),
        ("Set idle_timeout in v2.3.1 on api.example.com", ["api.example.com", "idle_timeout", "v2.3.1"]),
        ("Ask Alice before the release, then tell Bob.", ["alice", "bob"]),
        ("Nightly backup to cold storage", []),
        ("Thanks! That helps a lot.", []),
        ("Release on 2026-12-01 at 09:30", ["09:30", "2026-12-01"]),
    ],
)
def test_distinguishing_terms(conn, text: str, terms: list[str]) -> None:
    assert scalar(conn, "SELECT brain.distinguishing_terms(%s)", (text,)) == terms


# --- a fold never erases a distinguishable fact ----------------------------------


def test_300_log_lines_that_differ_in_numbers_stay_300_findable_memories(brain_cli, conn) -> None:
    lines = log_lines(300)
    # MiniLM puts such lines at cosine 0.95 and above; the hash embedder at about
    # 0.57, so this space's near-identical threshold is set below that.
    conn.execute("UPDATE brain.embedding_space SET near_identical = 0.5, related = 0.5")
    a, b = get_embedder("hash").embed([lines[150], lines[151]])
    assert cosine(a, b) >= 0.5, "the lines are near-identical by cosine: only their numbers tell them apart"

    r = brain_cli("observe", *lines)
    assert r.exit_code == 0, r.output
    out = r.output.splitlines()
    assert out[-1] == "300 rows: 300 created", "the counts add up, and nothing is provisional any more"
    assert not any("pending" in line for line in out)
    assert scalar(conn, "SELECT count(*) FROM brain.memory WHERE state = 'active'") == 300
    assert scalar(conn, "SELECT count(*) FROM brain.memory_fold") == 0
    ids = {r["headline"]: r["memory_id"] for r in rows(conn, "SELECT memory_id, headline FROM brain.memory")}
    missed = [
        i
        for i, line in enumerate(lines)
        if search_ids(conn, f"event {i} step {i * 13}", max_results=3)[:1] != [ids[line]]
    ]
    print(f"300 log lines: {300 - len(missed)} found first by their numbers")
    assert missed == []


def test_the_same_lines_as_one_document_keep_every_line(brain, conn) -> None:
    lines = log_lines(300)
    document = "\n".join(lines)
    out = brain.observe([document], origin="artifact", source_refs=["logs/worker.log"])
    chunks = [r for r in out if r["action"] != "rejected"]
    assert len(chunks) > 1 and all(r["action"] == "created" for r in chunks)
    for _ in brain.index_waiting():
        pass
    final = brain.write_outcomes([r["memory_id"] for r in chunks])
    assert [o["outcome"] for o in final] == ["active"] * len(chunks), "no chunk folds into another"
    stored = "\n".join(
        r["body"]
        for r in rows(conn, "SELECT body FROM brain.memory WHERE state = 'active' ORDER BY memory_id")
    )
    bodies = {
        r["memory_id"]: r["body"]
        for r in rows(conn, "SELECT memory_id, body FROM brain.memory WHERE state = 'active'")
    }
    ranks = []
    for i, line in enumerate(lines):
        assert line in stored
        hits = search_ids(conn, f"{i} {i * 13}", max_results=10)
        ranks.append(next((n for n, hit in enumerate(hits, 1) if line in bodies[hit]), None))
    print(
        f"one document of 300 lines in {len(chunks)} chunks: found at rank 1 {ranks.count(1)}, top 10 "
        f"{sum(r is not None for r in ranks)} of 300"
    )
    assert None not in ranks, "every line's chunk is found by the line's numbers"


def test_a_fold_keeps_the_folded_items_metadata_and_provenance(conn) -> None:
    def turn(text: str, similarity: float, n: int) -> list[dict]:
        """A user's turn of chat 1, observed with its vector, reference and metadata."""
        return observe(
            conn,
            [text],
            embeddings=[unit(similarity)],
            source_refs=[f"chat/1/turn-{n}"],
            metadata=[psycopg.types.json.Jsonb({"speaker": "user", "turn": n})],
            source_system="chat",
        )

    # Turns that name their source are records of it: near-identical ones stay apart, each
    # with its own text, metadata and provenance (issue 40: captured turns are never rewritten).
    first = turn("user: the deploy is done", 1.0, 4)[0]
    (second,) = turn("user: the deploy is done, thanks", 0.97, 9)
    assert second["action"] == "created" and second["memory_id"] != first["memory_id"]
    kept = rows(
        conn,
        "SELECT headline, metadata, source_ref FROM brain.memory WHERE state = 'active' ORDER BY memory_id",
    )
    assert kept == [
        {
            "headline": "user: the deploy is done",
            "metadata": {"speaker": "user", "turn": 4},
            "source_ref": "chat/1/turn-4",
        },
        {
            "headline": "user: the deploy is done, thanks",
            "metadata": {"speaker": "user", "turn": 9},
            "source_ref": "chat/1/turn-9",
        },
    ], "text, metadata and provenance describe the same item"


def test_near_identical_folding_can_be_switched_off_per_write_and_per_space(conn) -> None:
    observe(conn, ["worker restarted after the config reload"], embeddings=[unit(1.0)])
    (kept_apart,) = observe(
        conn, ["worker restarted after the config reload, again"], embeddings=[unit(0.97)], fold=False
    )
    assert kept_apart["action"] == "created"
    conn.execute("UPDATE brain.embedding_space SET fold_observed = false")
    (space_off,) = observe(conn, ["worker restarted after the config reload!"], embeddings=[unit(0.98)])
    assert space_off["action"] == "created"
    conn.execute("UPDATE brain.embedding_space SET fold_observed = true")
    (folded,) = observe(conn, ["worker restarted after the config reload."], embeddings=[unit(0.99)])
    assert folded["action"] in ("updated", "skipped")
    assert scalar(conn, "SELECT count(*) FROM brain.memory WHERE state = 'active'") == 3


def test_a_deferred_batch_reports_provisional_rows_and_their_final_outcome(conn) -> None:
    conn.execute("SELECT brain.set_setting('index_defer_rows', '3')")
    (kept,) = observe(conn, ["cache warmed on node-4"], embeddings=[unit(1.0)])
    out = observe(
        conn,
        ["cache warmed on node-4 again", "cache warmed on node-5", "queue drained"],
        embeddings=[unit(0.97), unit(0.97, axis=2), unit(0.0, axis=3)],
    )
    assert [(r["action"], r["provisional"]) for r in out] == [("created", True)] * 3
    index_all(conn)
    final = rows(
        conn,
        "SELECT memory_id, outcome, current_id, provisional FROM brain.write_outcomes(%s)",
        ([r["memory_id"] for r in out],),
    )
    assert [(o["outcome"], o["current_id"], o["provisional"]) for o in final] == [
        ("folded", kept["memory_id"], False),
        ("active", out[1]["memory_id"], False),
        ("active", out[2]["memory_id"], False),
    ], "node-5 is another node: not folded, whatever the cosine"
    recalled = scalar(conn, "SELECT brain.recall(%s)", (kept["memory_id"],))
    assert recalled["headline"] == "cache warmed on node-4", "an observation's text is never rewritten"
    assert [(f["headline"], f["displaced"]) for f in recalled["folds"]] == [
        ("cache warmed on node-4 again", False)
    ]
    assert (
        scalar(conn, "SELECT replaced_by FROM brain.memory WHERE memory_id = %s", (out[0]["memory_id"],))
        == (kept["memory_id"])
    )


# --- the related gate has a way through ------------------------------------------


def test_facts_that_differ_in_a_version_or_name_are_not_refused_as_related(conn) -> None:
    staging = remember(conn, kind="fact", headline="Staging runs PostgreSQL 16", embedding=unit(1.0))
    prod = remember(conn, kind="fact", headline="Prod runs PostgreSQL 17", embedding=unit(0.758))
    assert (prod["action"], prod["duplicate_of"]) == ("created", None)
    with raises_br("BR008") as err:
        remember(conn, kind="fact", headline="The staging cluster runs PostgreSQL 16", embedding=unit(0.8))
    assert f"brain supersede {staging['memory_id']}" in err.error.diag.message_hint
    assert "on_related => 'store'" in err.error.diag.message_hint
    assert "on_related => 'supersede'" in err.error.diag.message_hint
    assert scalar(conn, "SELECT count(*) FROM brain.memory") == 2, "a refused write stores nothing"


def test_on_related_store_and_supersede(conn) -> None:
    old = remember(conn, kind="fact", headline="Backups run nightly to cold storage", embedding=unit(1.0))

    def related(headline: str, vector: list[float], **how: str) -> dict:
        """A fact close to the old one by its vector, written as `how` says (on_related, reason)."""
        return remember(conn, kind="fact", headline=headline, embedding=vector, **how)

    stored = related("Backups also run weekly to archive storage", unit(0.8, axis=2), on_related="store")
    assert (stored["action"], stored["duplicate_of"]) == ("created", old["memory_id"])
    audit = scalar(
        conn,
        "SELECT detail FROM brain.audit WHERE memory_id = %s AND action = 'insert'",
        (stored["memory_id"],),
    )
    assert (audit["related"], audit["on_related"]) == (old["memory_id"], "store")

    replaced = related(
        "Backups run nightly to cold storage and are verified",
        unit(0.85, axis=1),
        on_related="supersede",
        reason="the backup schedule was tightened",
    )
    assert replaced["action"] == "created"
    states = dict(conn.execute("SELECT memory_id, state FROM brain.memory").fetchall())
    superseded = replaced["duplicate_of"]
    assert states[superseded] == "superseded" and states[replaced["memory_id"]] == "active"
    assert (
        scalar(conn, "SELECT supersede_reason FROM brain.memory WHERE memory_id = %s", (superseded,))
        == "the backup schedule was tightened"
    )
    with raises_br("BR009"):
        related("Backups are verified", unit(0.8), on_related="merge")


def test_supersede_takes_the_policy_too(conn) -> None:
    a = remember(conn, kind="fact", headline="Queue runs on Redis", embedding=unit(1.0))
    b = remember(conn, kind="fact", headline="Cache lives in the CDN", embedding=unit(0.0, axis=2))
    with raises_br("BR008"):
        conn.execute(
            "SELECT * FROM brain.supersede(%s, 'Cache runs on Redis too', 'moved the cache',"
            " embedding => %s)",
            (b["memory_id"], unit(0.8)),
        )
    r = rows(
        conn,
        "SELECT * FROM brain.supersede(%s, 'Cache runs on Redis too', 'moved the cache', embedding => %s,"
        " on_related => 'store')",
        (b["memory_id"], unit(0.8)),
    )[0]
    assert (r["action"], r["duplicate_of"]) == ("created", a["memory_id"])


def test_cli_and_mcp_take_the_policy(brain_cli, cli_env, conn) -> None:
    conn.execute("UPDATE brain.embedding_space SET related = 0.3, near_identical = 0.99")
    body = "The nightly backup job copies the primary database to cold storage before four"
    assert brain_cli("remember", "fact", "Nightly backup to cold storage", body).exit_code == 0
    refused = brain_cli("remember", "fact", "Nightly backup to cold storage, verified", body)
    assert refused.exit_code == 1 and "--on-related store" in refused.stderr
    r = brain_cli(
        "remember", "fact", "Nightly backup to cold storage, verified", body, "--on-related", "store"
    )
    assert r.exit_code == 0 and r.output.startswith("created #2 fact") and "related to #1" in r.output

    async def run() -> None:
        async with agent(cli_env) as s:
            out = await call(
                s,
                "remember",
                kind="fact",
                headline="Nightly backup to cold storage, checked",
                body=body,
                on_related="supersede",
                reason="checked by the new job",
            )
            assert (out["action"], out["duplicate_of"]) in (("created", 1), ("created", 2))

    anyio.run(run)
    assert scalar(conn, "SELECT count(*) FROM brain.memory WHERE state = 'superseded'") == 1


# --- decay ranks; it never hides -------------------------------------------------

TURNS = [
    "user: can you check why the nightly export to the warehouse failed?",
    "assistant: the export job ran out of memory on the 3 GB orders table",
    "user: raise the job's memory limit to 8 GB and retry",
    "assistant: done, the export finished in 14 minutes",
    "user: what time does the warehouse refresh its dashboards?",
    "assistant: the dashboards refresh at 06:00 UTC every day",
    "user: remind me to rotate the warehouse credentials next week",
    "assistant: noted, the credentials were last rotated on 2026-10-02",
]


def test_observed_turns_stay_findable_months_later(brain, conn) -> None:
    out = brain.observe(TURNS, source_system="chat")
    assert all(r["action"] == "created" for r in out)
    assert scalar(conn, "SELECT count(*) FROM brain.memory WHERE dormant_after IS NOT NULL") == 0
    queries = ["nightly export failed", "memory limit 8 GB", "dashboards refresh time", "credentials rotated"]
    now = dt.datetime.now(dt.UTC)

    def results(days: int) -> list[list[int]]:
        later = now + dt.timedelta(days=days)
        return [[r["id"] for r in brain.search(q, max_results=5, now=later)] for q in queries]

    fresh = results(0)
    assert all(fresh), "every query finds something"
    for days in (24, 90, 365, 3 * 365):
        assert results(days) == fresh, f"the same results {days} days later"


def test_episodic_decay_makes_records_decay_and_still_never_hides_them(brain, conn) -> None:
    brain.observe(TURNS[:2], source_system="chat")
    conn.execute("SELECT brain.set_setting('episodic_decay', 'true')")
    assert scalar(conn, "SELECT count(*) FROM brain.memory WHERE dormant_after IS NULL") == 0
    later = dt.datetime.now(dt.UTC) + dt.timedelta(days=60)
    assert scalar(conn, "SELECT brain.stats()")["dormant_facts"] == 0
    hits = brain.search("nightly export failed", now=later)
    assert hits and hits[0]["headline"].startswith("user: can you check why the nightly export")


def test_a_dormant_fact_ranks_below_a_fresh_one_but_is_found(conn) -> None:
    old = remember(conn, kind="fact", headline="Deploy window is Tuesday 10:00", embedding=unit(1.0))
    owner_execute(
        conn,
        "UPDATE brain.memory SET created_at = now() - interval '40 days',"
        " dormant_after = now() - interval '17 days' WHERE memory_id = %s",
        (old["memory_id"],),
    )
    new = remember(conn, kind="fact", headline="Deploy window moved to Thursday 14:00", embedding=unit(0.5))
    found = search_ids(conn, "deploy window")
    assert found == [new["memory_id"], old["memory_id"]]
    assert search_ids(conn, "Tuesday 10:00")[:1] == [old["memory_id"]], "the only answer comes first"


# --- on_related => 'supersede' does what it says --------------------------------


def test_on_related_supersede_replaces_a_fact_that_differs_in_a_value(conn) -> None:
    old = remember(conn, kind="fact", headline="The API service runs on Python 3.11", embedding=unit(1.0))
    new = remember(
        conn,
        kind="fact",
        headline="The API service runs on Python 3.12",
        embedding=unit(0.95),
        on_related="supersede",
        reason="upgraded in the December release",
    )
    assert (new["action"], new["duplicate_of"]) == ("created", old["memory_id"])
    state, reason, superseded_by = rows(
        conn,
        "SELECT state, supersede_reason, superseded_by FROM brain.memory WHERE memory_id = %s",
        (old["memory_id"],),
    )[0].values()
    assert (state, reason, superseded_by) == (
        "superseded",
        "upgraded in the December release",
        new["memory_id"],
    )
    # store and refuse keep treating the value as another fact
    other = remember(
        conn,
        kind="fact",
        headline="The API service runs on Python 3.13",
        embedding=unit(0.95),
        on_related="store",
    )
    assert other["duplicate_of"] is None


def test_on_related_supersede_names_why_nothing_was_superseded(conn) -> None:
    turn = remember(
        conn,
        kind="fact",
        headline="user: staging pgbouncer listens on 6432",
        origin="observed",
        embedding=unit(1.0),
    )
    far = remember(conn, kind="fact", headline="Deploys run nightly", embedding=unit(0.0, axis=3))
    with raises_br("BR010") as err:
        remember(
            conn,
            kind="fact",
            headline="Staging pgbouncer listens on 5433",
            embedding=unit(0.95),
            on_related="supersede",
            reason="moved",
        )
    message, detail = err.error.diag.message_primary, err.error.diag.message_detail
    assert "captured" in message and f"#{turn['memory_id']}" in message, message
    assert f"brain supersede {turn['memory_id']}" in err.error.diag.message_hint
    assert '"candidate"' in detail
    with raises_br("BR010") as err:
        remember(
            conn,
            kind="fact",
            headline="Nothing else is near this",
            embedding=unit(0.3, axis=4),
            on_related="supersede",
        )
    assert "below" in err.error.diag.message_primary and "0.75" in err.error.diag.message_primary
    assert scalar(conn, "SELECT count(*) FROM brain.memory") == 2, "a refused write stores nothing"
    assert far["memory_id"]


def test_cli_supersedes_the_fact_of_another_version_and_says_why_when_it_cannot(brain_cli, conn) -> None:
    conn.execute("UPDATE brain.embedding_space SET related = 0.3, near_identical = 0.99")
    assert brain_cli("remember", "fact", "The API service runs on Python 3.11").exit_code == 0
    r = brain_cli(
        "remember",
        "fact",
        "The API service runs on Python 3.12",
        "--on-related",
        "supersede",
        "--reason",
        "upgraded in December",
    )
    assert r.exit_code == 0, r.stderr
    assert "superseded the related #1" in r.output and "upgraded in December" in r.output, r.output
    assert scalar(conn, "SELECT state FROM brain.memory WHERE memory_id = 1") == "superseded"
    refused = brain_cli(
        "remember",
        "fact",
        "Lunch is at noon on Fridays",
        "--on-related",
        "supersede",
        "--project",
        "elsewhere",
    )
    assert (
        refused.exit_code == 1
        and "Nothing to supersede: no active fact in project elsewhere" in refused.stderr
    )
    assert "--on-related store" in refused.stderr
