"""What a client pays: the role users have, under row-level security, gets the plans the
superuser gets (issue: a search for a word nobody stored read the whole workspace).

Operators that are not LEAKPROOF (full text's @@, pg_trgm's) may not run before a row-level
security policy's condition, so under the policy the planner could not walk a word's posting
list: every lexical and trigram search read each memory of the workspace, and a search for a
word no memory holds cost the most. Each test runs its call as the test role (SET ROLE from
the owner's session, which alone may LOAD auto_explain) and reads the plans of every
statement the call ran."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest
from conftest import TEST_ROLE
from helpers import DIMS, logged_plans, raises_br, scalar

MEMORIES = 10000


@pytest.fixture
def owner(database: str):
    """The owner's session, with a workspace of MEMORIES memories; a few hold rare words."""
    with psycopg.connect(database, autocommit=True) as su:
        su.execute("SELECT set_config('brain.workspace', '1', false)")
        su.execute(
            """INSERT INTO brain.memory (kind, headline, body, normalized)
               SELECT (ARRAY['fact', 'incident', 'rule'])[1 + i %% 3],
                      'Pump ' || i || ' of station ' || (i %% 17)
                      || CASE WHEN i %% 1000 = 7 THEN ' xylophone' ELSE '' END,
                      'runs at ' || (i %% 23) || ' bar', 'n' || i
               FROM generate_series(1, %s) AS i""",
            (MEMORIES,),
        )
        su.execute("ANALYZE brain.memory")
        yield su


@contextmanager
def as_client(owner: psycopg.Connection) -> Iterator[list[str]]:
    """The plans of what runs meanwhile as the test role (auto_explain is loaded and set by the
    owner, which alone may)."""
    with logged_plans(owner, analyze=True) as plans:
        owner.execute(f"SET ROLE {TEST_ROLE}")
        try:
            yield plans
        finally:
            owner.execute("RESET ROLE")


def _read_and_dropped(plan: str, node: str) -> int:
    """The rows a plan's part (from the line `node` to the next of its depth) read and threw away."""
    lines = plan.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == node)
    depth = len(lines[start]) - len(lines[start].lstrip())
    end = next(
        (i for i in range(start + 1, len(lines)) if len(lines[i]) - len(lines[i].lstrip()) <= depth),
        len(lines),
    )
    return sum(int(n) for n in re.findall(r"Rows Removed by Filter: (\d+)", "\n".join(lines[start:end])))


def _statements(plans: list[str], marker: str) -> list[str]:
    found = [p for p in plans if marker in p]
    assert found, f"no statement holding {marker!r} ran"
    return found


@pytest.mark.parametrize("word", ["xylophone", "zeppelinword"])
def test_a_client_search_walks_the_words_posting_list(owner, word) -> None:
    """The lexical leg and the count of each word's memories find them through the text
    index, whether the word is held by ten memories or by none; no statement of the search
    reads the workspace's memories one by one."""
    with as_client(owner) as plans:
        found = owner.execute("SELECT id FROM brain.search(%s, min_relevance => 0)", (word,)).fetchall()
    assert len(found) == (MEMORIES // 1000 if word == "xylophone" else 0)
    for plan in plans:
        assert "Seq Scan on memory" not in plan, plan
    counted = _statements(plans, "m.tsv @@ w.q")
    assert all("memory_tsv" in p for p in counted), counted
    (statement,) = _statements(plans, "WITH RECURSIVE vec AS")
    assert _read_and_dropped(statement, "CTE lex") == 0, statement


def test_a_short_client_search_finds_headlines_through_their_trigrams(owner) -> None:
    """The trigram leg (a short query the words found little for) reads the headline
    trigram index, not every headline of the workspace."""
    with as_client(owner) as plans:
        found = owner.execute("SELECT headline FROM brain.search('xylophon', min_relevance => 0)").fetchall()
    assert found and all("xylophone" in h for (h,) in found)
    (statement,) = _statements(plans, "WITH RECURSIVE vec AS")
    assert "Seq Scan on memory" not in statement, statement
    # the generic plan, kept for the session: the request's field, not its value (the operator
    # named by its schema: the statement's search_path holds pg_catalog and pg_temp only)
    assert "Index Cond: (headline OPERATOR(public.%>) ($1).query)" in statement, statement


def _rows_of(plan: str, node_start: str) -> int:
    """The rows the first plan line starting with node_start (stripped, from the arrow) gave,
    of the nodes that ran (a leg that does not run is in the plan, never executed)."""
    for line in plan.splitlines():
        if line.strip().lstrip("-> ").startswith(node_start) and "(never executed)" not in line:
            return int(float(re.search(r"actual time=[0-9.]+\.\.[0-9.]+ rows=([0-9.]+)", line).group(1)))
    raise AssertionError(f"no {node_start!r} in\n{plan}")


def test_a_fragment_every_headline_matches_reads_a_bounded_set(owner) -> None:
    """A fragment or typo of a common word ("pum" of "Pump", held by every headline here) is
    ranked among at most three times search_candidates headlines, not all that match: before,
    the leg read and scored every one of them (a fragment took 350-900 ms at 100k)."""
    candidates = scalar(owner, "SELECT (brain.setting('search_candidates'))::integer")
    with as_client(owner) as plans:
        found = owner.execute("SELECT headline FROM brain.search('pum', min_relevance => 0)").fetchall()
    assert found and all(h.startswith("Pump") for (h,) in found)
    (statement,) = _statements(plans, "WITH RECURSIVE vec AS")
    assert "Seq Scan on memory" not in statement, statement
    assert _rows_of(statement, "Bitmap Heap Scan on memory") <= 3 * candidates, statement


@pytest.mark.parametrize("query", ["the and of", "???", "-- / --"])
def test_a_query_with_no_word_to_match_reads_no_trigrams(owner, query) -> None:
    """Stop words alone or no letter and digit: nothing for trigrams to match (without
    trigrams pg_trgm would read its whole index), so the leg does not run."""
    with as_client(owner) as plans:
        owner.execute("SELECT headline FROM brain.search(%s, min_relevance => 0)", (query,)).fetchall()
    (statement,) = _statements(plans, "WITH RECURSIVE vec AS")
    # the leg is in the plan (one for every search), cut before it reads the index
    read = [ln for ln in statement.splitlines() if "headline_trgm" in ln and "(never executed)" not in ln]
    assert read == [] and "Seq Scan on memory" not in statement, statement


def test_a_client_write_checks_at_commit_by_key(owner) -> None:
    """The check a write makes when its transaction commits looks its memories up by key
    (an IN over casts of jsonb keys was not LEAKPROOF, and read the workspace)."""
    vector = [1.0] + [0.0] * (DIMS - 1)
    with as_client(owner) as plans:
        owner.execute(
            "SELECT brain.remember(kind => 'fact', headline => 'Station 4 pump runs dry at night',"
            " embedding => %s)",
            (vector,),
        )
    (check,) = _statements(plans, "jsonb_object_keys(checks)")
    assert "Seq Scan on memory" not in check, check
    assert "memory_pkey" in check, check


def test_search_keeps_to_the_role_a_session_set(owner, database) -> None:
    """The search runs as the owner of schema brain; a session that SET ROLE to a role with no
    access to the workspace is refused, as every other function refuses it."""
    owner.execute("CREATE ROLE brain_outsider NOLOGIN IN ROLE brain_user")
    try:
        owner.execute("SET ROLE brain_outsider")
        with raises_br("BR020"):
            owner.execute("SELECT * FROM brain.search('xylophone')").fetchall()
        owner.execute("RESET ROLE")
        assert scalar(owner, "SELECT count(*) FROM brain.search('xylophone')") == MEMORIES // 1000
    finally:
        owner.execute("RESET ROLE")
        owner.execute("DROP ROLE brain_outsider")


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT count(*) FROM brain.memory m WHERE m.body LIKE 'runs at 1%'",
        "UPDATE brain.memory m SET importance = importance WHERE m.memory_id < 0",
    ],
)
def test_a_policy_looks_up_the_workspace_once_a_statement(owner, statement) -> None:
    """Row-level security's condition names the caller's workspace through an InitPlan, run once a
    statement: a condition that called brain.current_workspace() in a filter called it for every row
    it read (each tuple of an HNSW walk, each row of a write's neighbour lookup)."""
    with as_client(owner) as plans:
        owner.execute(statement)
    (plan,) = _statements(plans, "brain.memory m")
    per_row = [
        ln for ln in plan.splitlines() if ("Filter:" in ln or "Cond:" in ln) and "current_workspace(" in ln
    ]
    assert per_row == [], plan
    assert re.search(r"workspace_id = \(InitPlan \d+\)\.col1", plan), plan
