"""The statement brain.search runs, pinned: for each kind of call, the SQL that
brain._search_statement builds from its fragments (the filter, the vector, lexical,
trigram and skill legs, the fusion and ranking) is compared with a file under
tests/golden/search/ (CASE.golden). A change to a fragment fails here and shows as the diff of the
golden files it touches; when the change is meant, write them anew with

    PYBRAIN_GOLDEN=write .venv/bin/python -m pytest tests/test_search_golden.py

and review the diff with git. The request's values never enter the statement (they
are its one parameter, $1): what shapes it is which legs run, the space, the plan for
the filters (kept, the workspace's size) and the workspace's settings."""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path

import psycopg
import pytest
from conftest import TEST_ROLE
from helpers import logged_plans

GOLDEN = Path(__file__).parent / "golden" / "search"
WRITE = os.environ.get("PYBRAIN_GOLDEN") == "write"

# An embedding space as brain._resolve_space gives it (the statement names its id,
# dimensions, index watermark and related similarity).
SPACE = {"workspace_id": 1, "space_id": 7, "dims": 384, "indexed_through": 1000, "related": 0.75}
EMBEDDING = "[" + ",".join(["0.05"] * 384) + "]"
WORDS = "'idl' | 'timeout'"

# name: (request fields that say which legs run, fuzzy, skills, kept, n_docs)
Case = tuple[dict[str, object], bool, bool, int | None, int]
CASES: dict[str, Case] = {
    # text only, a short query: the lexical and trigram legs, shared plan
    "text-short": ({"tsq": WORDS}, True, False, None, 100_000),
    # text only, a long query or one whose common words were left out: the lexical leg alone
    "text-long": ({"tsq": WORDS}, False, False, None, 100_000),
    # text and vector in a workspace small enough to rank every vector exactly
    "hybrid-small-workspace": ({"tsq": WORDS, "embedding": EMBEDDING}, False, False, None, 1_500),
    # text and vector in a large workspace: the HNSW walk
    "hybrid": ({"tsq": WORDS, "embedding": EMBEDDING}, False, False, None, 100_000),
    # selective filters that keep few memories: those ranked exactly, by key
    "hybrid-filtered-few": (
        {"tsq": WORDS, "embedding": EMBEDDING, "kinds": ["rule"], "kept_ids": [3, 5, 8]},
        False,
        False,
        3,
        100_000,
    ),
    # a query embedding and no word to look for (stop words only, or no text)
    "vector-only": ({"embedding": EMBEDDING}, False, False, None, 100_000),
    # a workspace with skills: their trigger keywords are matched too
    "text-with-skills": ({"tsq": WORDS}, True, True, None, 100_000),
}


def statement(conn: psycopg.Connection, case: str | Case) -> str:
    fields, fuzzy, skills, kept, n_docs = CASES[case] if isinstance(case, str) else case
    request = {"query": "idle timeout", "workspace_id": 1, **fields}
    (sql,) = conn.execute(
        "SELECT brain._search_statement(jsonb_populate_record(NULL::brain.search_request, %s),"
        " jsonb_populate_record(NULL::brain.embedding_space, %s), brain._settings(), %s, %s, %s, %s)",
        (json.dumps(request), json.dumps(SPACE), fuzzy, skills, kept, n_docs),
    ).fetchone()
    return sql.rstrip() + "\n"


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_statement_of_each_kind_of_search_is_pinned(conn: psycopg.Connection, case: str) -> None:
    built = statement(conn, case)
    path = GOLDEN / f"{case}.golden"
    if WRITE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(built)
    assert path.exists(), f"{path} is missing: write it with PYBRAIN_GOLDEN=write"
    pinned = path.read_text()
    if built != pinned:
        diff = "".join(
            difflib.unified_diff(
                pinned.splitlines(keepends=True), built.splitlines(keepends=True), str(path), "built now", n=2
            )
        )
        pytest.fail(f"search's statement for {case!r} changed (PYBRAIN_GOLDEN=write to accept):\n{diff}")


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_pinned_statement_is_valid_sql(conn: psycopg.Connection, case: str) -> None:
    """Each golden statement prepares with the request as its one parameter: the fragments
    join into SQL the server accepts, and name only fields the request has."""
    sql = (GOLDEN / f"{case}.golden").read_text()
    conn.execute(f"PREPARE golden_check(brain.search_request) AS {sql}")
    conn.execute("DEALLOCATE golden_check")


def test_every_kind_of_call_builds_a_different_statement(conn: psycopg.Connection) -> None:
    """The cases are not one statement under several names: each pins a shape of its own. Filters
    that keep many memories build the statement of a search without them (the HNSW walk, the
    filters checked per candidate): their values are in the request, and the statement is planned
    for them on each call."""
    built = {case: statement(conn, case) for case in CASES}
    assert len(set(built.values())) == len(CASES)
    many: Case = ({"tsq": WORDS, "embedding": EMBEDDING, "kinds": ["fact"]}, False, False, 50_000, 100_000)
    assert statement(conn, many) == built["hybrid"]


def test_search_runs_the_statement_its_fragments_build(admin: psycopg.Connection) -> None:
    """brain.search runs exactly what brain._search_statement builds (a text search in a new
    workspace), as the test role: the golden files pin what search runs. Read from auto_explain,
    which only the owner's session may load."""
    admin.execute("SELECT set_config('brain.workspace', '1', false)")
    admin.execute("SELECT brain.remember(kind => 'fact', headline => 'The idle timeout is 30 seconds')")
    with logged_plans(admin) as plans:
        admin.execute(f"SET ROLE {TEST_ROLE}")
        try:
            admin.execute("SELECT count(*) FROM brain.search('idle timeout settings for the pool')")
        finally:
            admin.execute("RESET ROLE")
    (built,) = admin.execute(
        "SELECT brain._search_statement(jsonb_populate_record(NULL::brain.search_request,"
        " jsonb_build_object('tsq', brain.lexical_query('idle timeout settings for the pool'))),"
        " NULL::brain.embedding_space, brain._settings(), false, false, NULL,"
        " (SELECT sum(c.docs)::bigint FROM brain.lexical_corpus c))"
    ).fetchone()
    ran = [p for p in plans if "WITH RECURSIVE vec AS" in p]
    assert len(ran) == 1
    assert f"Query Text: {built}\n" in ran[0]
