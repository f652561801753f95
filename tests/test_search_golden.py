"""The statements brain.search runs, pinned. The one statement of every search
(brain._search_statement: the filter, the lexical, trigram and skill legs, the fusion and
ranking), which brain._search_ranked runs with a plan kept for the session, is compared with
tests/golden/search/statement.golden; the vector leg search runs before it
(brain._search_vector_leg: the space's index and the filters' plan), for each kind of call,
with a file under tests/golden/search/ (CASE.golden). A change to a fragment fails here and
shows as the diff of the golden files it touches; when the change is meant, write them anew
with

    PYBRAIN_GOLDEN=write .venv/bin/python -m pytest tests/test_search_golden.py

and review the diff with git. The request's values never enter a statement (they are its
parameters): what shapes the vector leg is the space and the plan for the filters (kept, the
workspace's size)."""

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

# name: (candidates, kept, n_docs)
Case = tuple[int, int | None, int]
CASES: dict[str, Case] = {
    # a workspace small enough to rank every vector exactly
    "vector-small-workspace": (60, None, 1_500),
    # a large workspace: the HNSW walk, the filters checked per candidate
    "vector-hnsw": (60, None, 100_000),
    # selective filters that keep few memories: those ranked exactly, by key
    "vector-filtered-few": (60, 3, 100_000),
}
ALL = [*sorted(CASES), "statement"]
# brain._search_ranked's parameters, the statement's $1 to $13
PARAMS = (
    "brain.search_request, bigint[], double precision[], bigint, boolean, boolean, integer, integer,"
    " integer, double precision, double precision, double precision, boolean"
)


def statement(conn: psycopg.Connection, case: str | Case) -> str:
    if case == "statement":
        (sql,) = conn.execute("SELECT brain._search_statement()").fetchone()
    else:
        candidates, kept, n_docs = CASES[case] if isinstance(case, str) else case
        (sql,) = conn.execute(
            "SELECT brain._search_vector_leg("
            "jsonb_populate_record(NULL::brain.embedding_space, %s), %s, %s, %s)",
            (json.dumps(SPACE), candidates, kept, n_docs),
        ).fetchone()
    return sql.rstrip() + "\n"


@pytest.mark.parametrize("case", ALL)
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


@pytest.mark.parametrize("case", ALL)
def test_each_pinned_statement_is_valid_sql(conn: psycopg.Connection, case: str) -> None:
    """Each golden statement prepares with its parameters: the fragments join into SQL the
    server accepts, and name only fields the request has."""
    sql = (GOLDEN / f"{case}.golden").read_text()
    conn.execute(
        f"PREPARE golden_check({PARAMS if case == 'statement' else 'brain.search_request'}) AS {sql}"
    )
    conn.execute("DEALLOCATE golden_check")


def test_every_kind_of_vector_leg_is_a_different_statement(conn: psycopg.Connection) -> None:
    """The cases are not one statement under several names: each pins a shape of its own. Filters
    that keep many memories build the vector leg of a search without them (the HNSW walk, the
    filters checked per candidate): their values are in the request."""
    built = {case: statement(conn, case) for case in CASES}
    assert len(set(built.values())) == len(CASES)
    assert statement(conn, (60, 50_000, 100_000)) == built["vector-hnsw"]


def test_search_runs_the_statement_its_fragments_build(admin: psycopg.Connection) -> None:
    """brain._search_ranked, which brain.search calls, runs exactly what brain._search_statement
    builds: the golden file pins what search runs."""
    (body,) = admin.execute(
        "SELECT p.prosrc FROM pg_proc p WHERE p.oid = 'brain._search_ranked'::regproc"
    ).fetchone()
    (built,) = admin.execute("SELECT brain._search_statement()").fetchone()
    assert body == f"BEGIN\nRETURN QUERY {built};\nEND"


def test_search_plans_its_statement_once_for_every_request(admin: psycopg.Connection) -> None:
    """The statement's plan is the generic one, kept for the session (PL/pgSQL's plan of a static
    statement, which no client can name): its conditions name the request's fields, not their
    values, whatever plan_cache_mode the caller set and for searches with and without filters.
    Read from auto_explain, which only the owner's session may load."""
    admin.execute("SELECT set_config('brain.workspace', '1', false)")
    admin.execute("SELECT brain.remember(kind => 'fact', headline => 'The idle timeout is 30 seconds')")
    with logged_plans(admin) as plans:
        admin.execute(f"SET ROLE {TEST_ROLE}")
        try:
            admin.execute("SET plan_cache_mode = force_custom_plan")
            for _ in range(7):
                admin.execute("SELECT count(*) FROM brain.search('idle timeout settings for the pool')")
                admin.execute("SELECT count(*) FROM brain.search('idle timeout', kinds => '{fact}')")
        finally:
            admin.execute("RESET plan_cache_mode")
            admin.execute("RESET ROLE")
    ran = [p for p in plans if "WITH RECURSIVE vec AS" in p]
    assert len(ran) == 14
    for plan in ran:
        # a custom plan would name the query's words here ('idl' & ...)
        assert "Index Cond: (tsv @@ ($1).tsq)" in plan, plan
