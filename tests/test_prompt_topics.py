"""The prompt hook's lines keep to the question's topic (issue 52, item 1).

Three projects of one workspace state the ports of their services. A question
about one service gets its line, not the lines of the project's other services
that share every other word ("osprey", "port", "listen"): a short line another
hit names better is left out, and so is one whose subject only another project
states beside the rest it holds. A frame word that another project states alone
("version") leaves the answer be, and an older line of the same thing stays,
marked. Through brain.prompt_context with the hash embedder, as the hook calls it.
"""

from __future__ import annotations

import re
from typing import Any

import psycopg
import pytest
from helpers import owner_execute, scalar

from pybrain.client import Brain
from pybrain.embed import get_embedder

FACTS = {
    "osprey": [
        "The osprey cache listens on port 7774",
        "The osprey scheduler listens on port 7140",
        "The osprey search indexer listens on port 6484",
    ],
    "kestrel": ["The kestrel gateway listens on port 5005"],
    "shop": ["The shop frontend builds with Node 24"],
    "docs": ["We should bump the version string in the footer"],
}


@pytest.fixture
def store(conn: psycopg.Connection) -> dict[str, int]:
    brain = Brain(conn, embedder=get_embedder("hash"))
    brain.use_embedding_space()
    ids = {}
    for project, facts in FACTS.items():
        for fact in facts:
            ids[fact] = brain.remember("fact", fact, project=project, on_related="store").memory_id
    return ids


def lines(conn: psycopg.Connection, prompt: str, project: str) -> list[str]:
    embedder = get_embedder("hash")
    out: dict[str, Any] = scalar(
        conn,
        "SELECT brain.prompt_context(%s, query_embedding => %s, embedding_space => %s, project => %s)",
        (prompt, embedder.embed_one(prompt), embedder.space, project),
    )
    shown = [x for x in (out["text"] or "").splitlines() if x.startswith("- #")]
    print(f"\n{prompt} ({project}):\n" + "\n".join(shown))
    return shown


def ids_of(shown: list[str]) -> set[int]:
    return {int(re.match(r"- #(\d+) ", x).group(1)) for x in shown}


def scheduler_moved(brain: Brain) -> None:
    """A session of project osprey that moved the scheduler, captured as its turns."""
    turns = [
        {"ref": "t9/0-user", "role": "user", "text": "We moved the osprey scheduler to port 20022."},
        {
            "ref": "t9/0-assistant",
            "role": "assistant",
            "text": "Noted: the osprey scheduler listens on port 20022 now.",
        },
    ]
    brain.observe_transcript(turns, source_system="claude-code", project="osprey", source_agent="claude-code")


def test_a_question_about_one_service_gets_its_line_only(conn, store) -> None:
    shown = lines(conn, "Which port does the osprey scheduler listen on now?", "osprey")
    assert ids_of(shown) == {store["The osprey scheduler listens on port 7140"]}, shown


def test_a_service_only_another_project_states_gets_no_line_of_this_one(conn, store) -> None:
    shown = lines(conn, "Which port does the osprey gateway listen on now?", "osprey")
    assert not ids_of(shown) & {store[f] for f in FACTS["osprey"]}, shown


def test_a_frame_word_another_project_states_leaves_the_answer(conn, store) -> None:
    shown = lines(conn, "Which Node version does the shop frontend build with?", "shop")
    assert store["The shop frontend builds with Node 24"] in ids_of(shown), shown


def test_an_older_line_of_the_same_thing_stays_marked(conn, store) -> None:
    brain = Brain(conn, embedder=get_embedder("hash"))
    old = store["The osprey scheduler listens on port 7140"]
    scheduler_moved(brain)
    shown = lines(conn, "Which port does the osprey scheduler listen on now?", "osprey")
    (line,) = [x for x in shown if "7140" in x]
    assert line.startswith(f"- #{old} ") and "(older: #" in line, shown
    assert shown.index(line) > min(n for n, x in enumerate(shown) if "20022" in x), shown
    assert not [x for x in shown if re.search(r"cache|indexer", x)], shown


def test_a_correction_said_in_a_prompt_gets_its_thing_not_the_other_moves(conn, store) -> None:
    # The project's other move shares the prompt's "moved", which the indexer's own
    # statement lacks: the words a statement says a change with name nothing of what
    # changed (brain._change_words), so the indexer's line names the prompt better.
    brain = Brain(conn, embedder=get_embedder("hash"))
    scheduler_moved(brain)
    shown = lines(conn, "We moved the osprey search indexer to port 20035.", "osprey")
    assert store["The osprey search indexer listens on port 6484"] in ids_of(shown), shown
    assert not [x for x in shown if re.search(r"scheduler|cache", x)], shown
    # asked, a change word still names what the question is about
    shown = lines(conn, "Did we move the osprey scheduler?", "osprey")
    assert [x for x in shown if "20022" in x], shown
    # a thing no memory of the project names yet: none of the project's other values
    shown = lines(conn, "We moved the osprey gateway to port 20025.", "osprey")
    assert not ids_of(shown) & {store[f] for f in FACTS["osprey"]}, shown
    assert not [x for x in shown if "20022" in x], shown
    # a statement that says no change is not judged so: the runner's memory bears on it
    runner = brain.remember("fact", "Runner 4 has 2 GB of memory", project="osprey")
    shown = lines(conn, "The osprey search indexer build failed with exit code 137 on runner 4.", "osprey")
    assert runner.memory_id in ids_of(shown), shown
    # a line that states no value is not judged by what the prompt names
    rule = brain.remember(
        "rule", "Restart the osprey search indexer after its port changes", project="osprey"
    )
    shown = lines(conn, "We moved the osprey search indexer to port 20035.", "osprey")
    assert rule.memory_id in ids_of(shown), shown


def test_the_prompt_is_read_through_the_indexes_not_the_whole_workspace(conn, store) -> None:
    """The hook's statements about the prompt's words (which memory states each, in this
    project or another) and its join of search's results to their memories read by index:
    under row-level security a caller's statement cannot use the full-text index (`@@` is not
    leakproof) and read every memory of the workspace for each word no memory states (10 ms a
    word at 10,000 memories, 190 ms a prompt at 100,000); and a plan that took search for a
    thousand rows read the workspace to join them. Counted as the rows the prompt's
    statements read of brain.memory, in a workspace of 3,000 (without a query vector: ranking
    a workspace this small by vector reads every row, by design)."""
    owner_execute(
        conn,
        "INSERT INTO brain.memory (kind, project, headline, normalized)"
        " SELECT 'rule', 'osprey', x.t, lower(x.t) FROM generate_series(1, 3000) AS i,"
        " LATERAL (SELECT format('Nightly job %s of team %s exports the ledger', i, i % 7) AS t) AS x",
    )
    owner_execute(conn, "ANALYZE brain.memory")
    read = (
        "SELECT coalesce(sum(seq_tup_read), 0) + coalesce(sum(idx_tup_fetch), 0)"
        " FROM pg_stat_xact_user_tables WHERE schemaname = 'brain' AND relname = 'memory'"
    )
    conn.execute("BEGIN")
    before = scalar(conn, read)
    scalar(
        conn,
        "SELECT brain.prompt_context(%s, project => 'osprey')",
        ("Which port does the zebrafish relay use?",),
    )
    rows = scalar(conn, read) - before
    conn.execute("COMMIT")
    assert rows < 500, rows
