"""The current fact first (issue 40, item 4).

A month of captured turns holds every belief a project ever had: "Node 20", then
"Node 22", then a fact written as "Node 24". What a prompt brings and what
search returns put the current explicit fact above the older turns and
superseded memories that it contradicts, mark those as older, give every line
its age, rank a question below the reply that answers it, show scores that
never rise down the list, and find what the question of a prompt of several
sentences asks. The turns are stored as the capture hooks store them
(brain.observe_transcript), embedded by the default embedder where the ranking
depends on meaning.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import psycopg.rows
import pytest
from helpers import owner_execute, remember

from pybrain.client import Brain

TRANSCRIPTS = [
    # (days ago, transcript, [(prompt, reply)])
    (
        30,
        "a1b2c3d4-0000-4000-8000-000000000001",
        [
            (
                "Which Node version does the shop frontend build with?",
                "It builds with Node 20 (node:20-alpine in the Dockerfile).",
            ),
            (
                "Fix the flaky checkout test.",
                "Done: the test now waits for the cart API mock before clicking Pay.",
            ),
        ],
    ),
    (
        12,
        "a1b2c3d4-0000-4000-8000-000000000002",
        [
            ("Which Node version is the shop frontend on now?", "Node 22."),
            ("And the Docker base image?", "Node 22 (node:22-alpine)."),
        ],
    ),
]
QUESTION = "Which Node version does the shop frontend build with?"


def observe(conn: psycopg.Connection, embedder: Any, days_ago: int, transcript: str, pairs: list) -> None:
    """A transcript's turns as the capture hooks store them, dated days_ago."""
    at = dt.datetime.now(dt.UTC) - dt.timedelta(days=days_ago)
    turns = []
    for n, (prompt, reply) in enumerate(pairs):
        for k, (role, text) in enumerate((("user", prompt), ("assistant", reply))):
            when = (at + dt.timedelta(minutes=2 * n + k)).isoformat()
            turns.append({"ref": f"{transcript}/{n}-{role}", "role": role, "text": text, "at": when})
    brain = Brain(conn, embedder=embedder)
    brain.observe_transcript(turns, source_system="claude-code", project="shop", source_agent="claude-code")
    owner_execute(
        conn,
        "UPDATE brain.memory SET created_at = %s WHERE starts_with(source_ref, %s)",
        (at, f"{transcript}/"),
    )


def write(conn: psycopg.Connection, embedder: Any, headline: str, days_ago: int, **kw: Any) -> int:
    brain = Brain(conn, embedder=embedder)
    r = brain.remember("fact", headline, **{"project": "shop", **kw})
    assert r.action == "created", r
    owner_execute(
        conn,
        "UPDATE brain.memory SET created_at = now() - make_interval(days => %s) WHERE memory_id = %s",
        (days_ago, r.memory_id),
    )
    assert r.memory_id is not None
    return r.memory_id


def context_lines(conn: psycopg.Connection, embedder: Any, prompt: str) -> list[str]:
    vector = embedder.embed_one(prompt)
    out = conn.execute(
        "SELECT brain.prompt_context(%s, query_embedding => %s, embedding_space => %s, project => 'shop')",
        (prompt, vector, embedder.space),
    ).fetchone()[0]
    return [line for line in (out["text"] or "").splitlines() if line.startswith("- #")]


def hits(conn: psycopg.Connection, embedder: Any | None, query: str, **kw: Any) -> list[dict[str, Any]]:
    vector = embedder.embed_one(query) if embedder else None
    args = {"query": query, "query_embedding": vector, "project": "shop", **kw}
    if embedder:
        args["embedding_space"] = embedder.space
    names = ", ".join(f"{k} => %({k})s" for k in args)
    with conn.cursor(row_factory=psycopg.rows.dict_row) as cur:
        return cur.execute(f"SELECT * FROM brain.search({names})", args).fetchall()


def line_id(line: str) -> int:
    return int(re.match(r"- #(\d+) ", line).group(1))


@pytest.fixture
def active_space(conn: psycopg.Connection, local: Any) -> None:
    """The default embedder's space, made and active."""
    Brain(conn, embedder=local).use_embedding_space()
    Brain(conn, embedder=local).activate_space(local.space)


@pytest.fixture
def month(conn: psycopg.Connection, local: Any, active_space: None) -> dict[str, int]:
    """Thirty days of one project: turns saying Node 20, then 22; facts 20 → 22 (superseded),
    then a fact written two days ago: Node 24."""
    observe(conn, local, *TRANSCRIPTS[0])
    first = write(conn, local, "The shop frontend builds with Node 20", 29, on_related="store")
    observe(conn, local, *TRANSCRIPTS[1])
    second = Brain(conn, embedder=local).supersede(first, "The shop frontend builds with Node 22", "upgraded")
    owner_execute(
        conn,
        "UPDATE brain.memory SET created_at = now() - interval '11 days' WHERE memory_id = %s",
        (second.memory_id,),
    )
    current = write(
        conn, local, "The shop frontend builds with Node 24 since the December upgrade", 2, on_related="store"
    )
    staging = write(conn, local, "Staging database is shop-stg-db-2 on port 6432", 5)
    return {"first": first, "second": second.memory_id, "current": current, "staging": staging}


pytestmark = pytest.mark.local_model


def test_the_current_fact_comes_before_the_turns_it_replaces(conn, local, month) -> None:
    lines = context_lines(conn, local, QUESTION)
    print("\n".join(lines))
    assert lines, "the question brings its memories"
    assert line_id(lines[0]) == month["current"], "the fact written last comes first"
    older = [line for line in lines[1:] if re.search(r"Node 2[02]\b", line)]
    assert older, "the older answers are still shown, below it"
    for line in older:
        assert f"(older: #{month['current']} is newer and may replace it" in line, line
    for line in lines:
        assert re.match(r"- #\d+ \w+, \d+(s|m|h|d|w|mo|y) ago: ", line), f"every line says its age: {line}"
    assert any(", 30d ago: " in line or ", 4w ago: " in line for line in lines), lines


def test_search_ranks_the_current_fact_first_and_marks_the_older(conn, local, month) -> None:
    found = hits(conn, local, "which node version does the frontend build with")
    ids = [h["id"] for h in found]
    assert ids[0] == month["current"], [(h["id"], h["headline"]) for h in found]
    for h in found[1:]:
        if re.search(r"Node 2[02]\b", h["headline"]) and h["neighbour_of"] is None:
            assert h["newer_related"] == month["current"], h["headline"]
    # With the superseded ones: each below the fact that replaced it.
    found = hits(conn, local, "which node version does the frontend build with", include_superseded=True)
    place = {h["id"]: n for n, h in enumerate(found)}
    assert place[month["first"]] > place[month["current"]]
    assert found[place[month["first"]]]["newer_related"] in (month["second"], month["current"])


def test_a_question_ranks_below_the_reply_that_answers_it(conn, local, month) -> None:
    found = hits(conn, local, "which node version does the frontend build with")
    place = {h["id"]: n for n, h in enumerate(found)}
    questions = [h for h in found if h["headline"].startswith("User: ") and h["headline"].endswith("?")]
    assert questions, [h["headline"] for h in found]
    for q in questions:
        answer = q["neighbour_of"]
        assert answer is not None and place[answer] < place[q["id"]], q["headline"]
        assert found[place[answer]]["headline"].startswith("Assistant: ")


def test_the_figures_brain_search_shows_follow_its_order(brain_cli, monkeypatch, month) -> None:
    """The figure each hit of `brain search` shows never rises down the list: it is the
    ranking's (an assistant's turn, a question beside its answer, an older memory moved
    below the current one: each shows no more than the hit above it)."""
    monkeypatch.setenv("BRAIN_EMBEDDER", "local")
    for query in (
        QUESTION,
        "shop frontend Node",
        "node:20-alpine in the Dockerfile",
        "checkout test",
        "Docker base image",
    ):
        out = brain_cli("search", query, "--project", "shop").output
        figures = [float(x) for x in re.findall(r" · (?:score|relevance) (\d\.\d\d) · ", out)]
        assert figures, out
        assert figures == sorted(figures, reverse=True), out


def test_a_prompt_that_says_something_before_it_asks(conn, local, month) -> None:
    asked = "Which staging database should the replay point at?"
    said = "Use the staging Stripe account for the replay test. " + asked
    for prompt in (asked, said):
        lines = context_lines(conn, local, prompt)
        assert lines and line_id(lines[0]) == month["staging"], (prompt, lines)
    # and the floor still answers nothing to what no memory speaks of, said first or not
    for prompt in (
        "What is the wingspan of the Andean condor?",
        "I was reading about birds last night. What is the wingspan of the Andean condor?",
    ):
        assert context_lines(conn, local, prompt) == [], prompt


@pytest.mark.usefixtures("active_space")
def test_a_captured_turn_never_refuses_or_takes_a_fact(conn, local) -> None:
    """A write near a captured question (a record) is created: the turn is not an authored
    memory for the write's on_related policy, nor replaced by it. (Their similarity under
    the default embedder is 0.76, past the related threshold 0.75.)"""
    observe(
        conn,
        local,
        1,
        "b1b2c3d4-0000-4000-8000-000000000009",
        [("Which Node version does the shop frontend build with?", "Node 20, I think.")],
    )
    r = Brain(conn, embedder=local).remember("fact", "The shop frontend builds with Node 20", project="shop")
    assert r.action == "created", r
    assert r.related is None, "a captured turn is no memory the write may replace (brain.related_memory)"
    turns = conn.execute(
        "SELECT count(*) FROM brain.memory WHERE origin = 'observed' AND state = 'active'"
    ).fetchone()[0]
    assert turns == 2


def test_the_prompt_hook_shows_ages_and_the_current_fact(conn, cli_env, tmp_path) -> None:
    """Through the hook command itself (the hash embedder): every line carries its age."""
    remember(conn, kind="fact", headline="Deploys to production need two approvals", project="shop")
    brain = Path(sys.executable).parent / "brain"
    payload = {
        "session_id": "c0c0c0c0-0000-4000-8000-000000000001",
        "transcript_path": str(tmp_path / "none.jsonl"),
        "cwd": str(tmp_path),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "How many approvals do production deploys need?",
    }
    out = subprocess.run(
        [str(brain), "hook", "prompt", "--project", "shop"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env={**os.environ, **cli_env},
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    context = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    lines = [line for line in context.splitlines() if line.startswith("- #")]
    assert lines and all(re.match(r"- #\d+ fact, \d+s ago: ", line) for line in lines), context


def test_the_first_results_still_do_not_depend_on_max_results(conn, local, month) -> None:
    """The current fact moves older hits below it, and a reply takes its question's place,
    within the ranking's first 20 hits whatever max_results: the first k stay the same."""
    for query in (QUESTION, "shop frontend Node", "Docker base image", "staging database port"):
        whole = [h["id"] for h in hits(conn, local, query, max_results=30, min_relevance=0)]
        for k in (1, 2, 3, 5, 8):
            first = [h["id"] for h in hits(conn, local, query, max_results=k, min_relevance=0)]
            assert first == whole[:k], (query, k)


def test_a_correction_said_in_a_session_comes_before_the_fact_it_corrects(conn, local, month) -> None:
    """The team said "we moved staging pgbouncer to 5433" in a session; the written fact says
    6432. The turn stating the new value ranks above the fact, which is marked older, in
    search and in the prompt hook; the fact itself is not rewritten."""
    observe(
        conn,
        local,
        1,
        "c1b2c3d4-0000-4000-8000-000000000011",
        [
            (
                "We moved staging pgbouncer to port 5433 today.",
                "Noted: the staging database now listens on 5433.",
            )
        ],
    )
    asked = "Which port does the staging database listen on now?"
    found = hits(conn, local, asked)
    place = {h["id"]: n for n, h in enumerate(found)}
    said = [h for h in found if "5433" in h["headline"]]
    assert said and month["staging"] in place, [(h["id"], h["headline"]) for h in found]
    assert min(place[h["id"]] for h in said) < place[month["staging"]]
    fact = found[place[month["staging"]]]
    assert fact["newer_related"] in {h["id"] for h in said}, fact
    lines = context_lines(conn, local, asked)
    (fact_line,) = [line for line in lines if line_id(line) == month["staging"]]
    assert "6432" in fact_line and f"(older: #{fact['newer_related']} is newer" in fact_line, lines
    assert lines.index(fact_line) > 0 and "5433" in lines[0], lines
    assert conn.execute(
        "SELECT state, headline FROM brain.memory WHERE memory_id = %s", (month["staging"],)
    ).fetchone() == ("active", "Staging database is shop-stg-db-2 on port 6432")


def test_a_correction_said_in_a_session_marks_the_older_turn_it_corrects(conn, local, month) -> None:
    """A port said in one session ("…listens on port 7140…") and moved in a later one ("We
    moved the osprey scheduler to port 20022."): the newer turn comes first and the older
    turn is marked older, in search and in the prompt hook. A turn about another service of
    the same project ("the osprey cache" beside "the osprey search indexer") is not."""
    observe(
        conn,
        local,
        9,
        "c1b2c3d4-0000-4000-8000-000000000021",
        [
            (
                "Which port does the osprey scheduler listen on?",
                "The osprey scheduler listens on port 7140 since the 9th.",
            ),
            ("And the osprey cache?", "The osprey cache listens on port 7774 since the 27th."),
        ],
    )
    observe(
        conn,
        local,
        1,
        "c1b2c3d4-0000-4000-8000-000000000022",
        [
            (
                "We moved the osprey scheduler to port 20022.",
                "Noted: the osprey scheduler listens on port 20022 now.",
            ),
            (
                "Which port does the osprey search indexer listen on?",
                "The osprey search indexer listens on port 6484 since the 25th.",
            ),
        ],
    )
    turn = {
        text: memory_id
        for memory_id, text in conn.execute(
            "SELECT memory_id, coalesce(nullif(body, ''), headline) FROM brain.memory"
            " WHERE starts_with(source_ref, 'c1b2c3d4-0000-4000-8000-00000000002')"
        ).fetchall()
    }
    old = next(i for text, i in turn.items() if "port 7140" in text)
    new = {i for text, i in turn.items() if "20022" in text}
    cache = next(i for text, i in turn.items() if "port 7774" in text)
    asked = "Which port does the osprey scheduler listen on now?"
    found = hits(conn, local, asked)
    place = {h["id"]: n for n, h in enumerate(found)}
    shown = [(h["id"], h["headline"], h["newer_related"]) for h in found]
    assert old in place and new & place.keys(), shown
    assert min(place[i] for i in new & place.keys()) < place[old], shown
    assert found[place[old]]["newer_related"] in new, shown
    found = hits(conn, local, "Which port does the osprey cache listen on?", min_relevance=0)
    assert all(h["newer_related"] is None for h in found if h["id"] == cache), shown
    lines = context_lines(conn, local, asked)
    (old_line,) = [line for line in lines if "7140" in line]
    assert "(older: #" in old_line, lines
    assert lines.index(old_line) > min(n for n, line in enumerate(lines) if "20022" in line), lines


@pytest.mark.parametrize("fact_project", ["shop", ""], ids=["the-project's-fact", "a-global-fact"])
@pytest.mark.usefixtures("active_space")
def test_a_fact_written_after_a_spoken_correction_marks_the_correction(conn, local, fact_project) -> None:
    """A correction said in a session ("We moved the card stub to port 4343 yesterday.")
    names the thing with the words of a change; a fact written two days later gives it
    another value ("The card stub listens on port 4444"). The words the change is said with
    name nothing in the older statement either: once "moved" is set aside, the fact holds
    every word the correction names the stub by, so the correction is marked older, the fact
    the newer statement. A turn about another stub is not. A global fact (what `brain
    remember` writes unless told a project) is a newer statement for every project's turns."""
    observe(
        conn,
        local,
        3,
        "c1b2c3d4-0000-4000-8000-000000000041",
        [
            ("We moved the card stub to port 4343 yesterday.", "Okay."),
            ("We moved the fraud checker to port 4848 yesterday.", "Okay."),
        ],
    )
    fact = write(conn, local, "The card stub listens on port 4444", 1, project=fact_project)
    found = hits(conn, local, "Which port does the card stub listen on?")
    shown = [(h["id"], h["headline"], h["newer_related"]) for h in found]
    (said,) = [h for h in found if "4343" in h["headline"]]
    assert said["newer_related"] == fact, shown
    assert all(h["newer_related"] is None for h in found if "4848" in h["headline"]), shown


@pytest.mark.parametrize("fact_project", ["shop", ""], ids=["the-project's-fact", "a-global-fact"])
@pytest.mark.usefixtures("active_space")
def test_a_correction_that_names_less_of_the_thing_still_marks_the_fact(conn, local, fact_project) -> None:
    """The fact names the thing at length ("The payment step's card stub listens on port
    4242"); the correction said a day later names it shorter, with the words of a change
    ("We moved the card stub to port 4343 yesterday." and "Noted: the card stub listens on
    port 4343 now."). Neither holds every naming word of the other, yet the newer restates
    the older: once "moved" and "noted" are set aside, each word the correction names the
    thing by is in the fact. The newer turn comes first and the fact is marked older, in
    search and in the prompt hook. A fact about another stub of the same step, which the
    correction names nothing of, is not marked. A global fact (`brain remember` files one so
    unless told a project) is corrected so in the project whose session said it, and only
    there."""
    fact = write(conn, local, "The payment step's card stub listens on port 4242", 6, project=fact_project)
    other = write(
        conn, local, "The payment step's fraud checker listens on port 4747", 6, project=fact_project
    )
    observe(
        conn,
        local,
        1,
        "c1b2c3d4-0000-4000-8000-000000000031",
        [
            (
                "We moved the card stub to port 4343 yesterday.",
                "Noted: the card stub listens on port 4343 now.",
            )
        ],
    )
    asked = "Which port does the card stub listen on?"
    found = hits(conn, local, asked)
    place = {h["id"]: n for n, h in enumerate(found)}
    shown = [(h["id"], h["headline"], h["newer_related"]) for h in found]
    said = {h["id"] for h in found if "4343" in h["headline"]}
    assert said and fact in place, shown
    assert min(place[i] for i in said) < place[fact], shown
    assert found[place[fact]]["newer_related"] in said, shown
    assert all(h["newer_related"] is None for h in found if h["id"] == other), shown
    lines = context_lines(conn, local, asked)
    (fact_line,) = [line for line in lines if line_id(line) == fact]
    assert "(older: #" in fact_line, lines
    assert lines.index(fact_line) > min(n for n, line in enumerate(lines) if "4343" in line), lines
    if fact_project == "":
        elsewhere = hits(conn, local, asked, project="billing")
        assert [(h["id"], h["newer_related"]) for h in elsewhere if h["id"] == fact] == [(fact, None)], (
            elsewhere
        )
