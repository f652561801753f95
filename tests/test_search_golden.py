"""The statements brain.search runs, pinned. The one statement of every search
(brain._search_statement: the filter, the lexical, trigram and skill legs, the fusion and
ranking), which brain._search_ranked runs with a plan kept for the session, is compared with
tests/golden/search/statement.golden; the vector leg search runs before it, a function of its
own for each shape (brain._search_vector_leg: selective filters' few rows, a small workspace,
the walk of a space's index), with a file under tests/golden/search/ (CASE.golden). A change to
a fragment fails here and shows as the diff of the golden files it touches; when the change is
meant, write them anew with

    PYBRAIN_GOLDEN=write .venv/bin/python -m pytest tests/test_search_golden.py

and review the diff with git. The request's values never enter a statement (they are its
parameters): what shapes the vector leg is the filters' selectivity (kept), the workspace's size
and, for the walk, the space's index (its id, dimensions and watermark)."""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path

import psycopg
import pytest
from conftest import TEST_ROLE
from helpers import logged_plans, remember, unit

GOLDEN = Path(__file__).parent / "golden" / "search"
WRITE = os.environ.get("PYBRAIN_GOLDEN") == "write"

# An embedding space as brain._resolve_space gives it (the statement names its id,
# dimensions, index watermark and related similarity).
SPACE = {"workspace_id": 1, "space_id": 7, "dims": 384, "indexed_through": 1000, "related": 0.75}
EMBEDDING = "[" + ",".join(["0.05"] * 384) + "]"
WORDS = "'idl' | 'timeout'"

# name: (kept, n_docs)
Case = tuple[int | None, int]
CASES: dict[str, Case] = {
    # a workspace small enough to rank every vector exactly
    "vector-small-workspace": (None, 1_500),
    # a large workspace: the HNSW walk, the filters checked per candidate
    "vector-hnsw": (None, 100_000),
    # selective filters that keep few memories: those ranked exactly, by key
    "vector-filtered-few": (3, 100_000),
}
# each shape's function and its parameters, the statement's $1 to $3
SHAPES = {
    "vector-small-workspace": ("_search_vector_all", "brain.search_request, bigint, integer"),
    "vector-hnsw": (None, "brain.search_request, integer, boolean"),
    "vector-filtered-few": ("_search_vector_kept", "brain.search_request, bigint, integer"),
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
        kept, n_docs = CASES[case] if isinstance(case, str) else case
        (sql,) = conn.execute(
            "SELECT brain._search_vector_leg("
            " jsonb_populate_record(NULL::brain.embedding_space, %s), %s, %s, 100)",
            (json.dumps(SPACE), kept, n_docs),
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
    conn.execute(f"PREPARE golden_check({PARAMS if case == 'statement' else SHAPES[case][1]}) AS {sql}")
    conn.execute("DEALLOCATE golden_check")


def test_every_kind_of_vector_leg_is_a_different_statement(conn: psycopg.Connection) -> None:
    """The cases are not one statement under several names: each pins a shape of its own. Filters
    that keep many memories build the vector leg of a search without them (the HNSW walk, the
    filters checked per candidate): their values are in the request."""
    built = {case: statement(conn, case) for case in CASES}
    assert len(set(built.values())) == len(CASES)
    assert statement(conn, (50_000, 100_000)) == built["vector-hnsw"]


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


def _function(admin: psycopg.Connection, name: str) -> dict | None:
    row = admin.execute(
        "SELECT p.prosrc, p.proconfig, has_function_privilege('brain_user', p.oid, 'EXECUTE'),"
        " p.proowner::regrole::text FROM pg_proc p"
        " WHERE p.pronamespace = 'brain'::regnamespace AND p.proname = %s",
        (name,),
    ).fetchone()
    return (
        None if row is None else {"body": row[0], "config": row[1], "client_may_run": row[2], "owner": row[3]}
    )


def _space(admin: psycopg.Connection, ws: int) -> tuple[int, int]:
    admin.execute("SELECT set_config('brain.workspace', %s, false)", (str(ws),))
    admin.execute("SELECT brain.use_embedding_space('hash', 'feature-hash-v1', 384)")
    return admin.execute(
        "SELECT space_id, indexed_through FROM brain.embedding_space WHERE workspace_id = %s", (ws,)
    ).fetchone()


def test_each_vector_shape_is_a_function_running_the_statement_its_fragments_build(
    admin: psycopg.Connection,
) -> None:
    """brain._search_vector_kept and brain._search_vector_all run exactly what their fragments
    build (the golden files), and so does the walk of each space's index, a function of the
    space and its watermark that applying the function files writes. Each pins its search_path
    (pg_catalog, pg_temp) and its generic plan, belongs to the schema's owner and is no
    client's to run (brain.search runs them as the owner). A space made after the files were
    applied has none until they are applied again."""
    from pybrain import db

    space, through = _space(admin, 1)
    walk = f"_search_vector_{space}_{through}"
    db.migrate(admin)
    shapes = {
        "_search_vector_kept": "SELECT brain._search_vector_kept_sql()",
        "_search_vector_all": "SELECT brain._search_vector_all_sql()",
        walk: "SELECT brain._search_vector_hnsw_sql(s) FROM brain.embedding_space s"
        f" WHERE s.space_id = {space}",
    }
    for name, fragment in shapes.items():
        f = _function(admin, name)
        assert f is not None, name
        (built,) = admin.execute(fragment).fetchone()
        assert f["body"] == f"BEGIN\nRETURN QUERY {built};\nEND", name
        assert "search_path=pg_catalog, pg_temp" in f["config"], f
        assert "plan_cache_mode=force_generic_plan" in f["config"], f
        assert f["owner"] == "brain_owner" and not f["client_may_run"], f
    (ranked,) = admin.execute(
        "SELECT proconfig FROM pg_proc WHERE oid = 'brain._search_ranked'::regproc"
    ).fetchone()
    assert "search_path=pg_catalog, pg_temp" in ranked


def test_search_walks_the_index_through_its_function_with_one_plan(
    admin: psycopg.Connection, conn: psycopg.Connection
) -> None:
    """A search of a workspace past exact_rank_rows walks the space's HNSW index through the
    space's function (its generic plan, the same on every call: the index by its literals, the
    request's fields as parameters); without the function (a space made after the files were
    applied), the same statement planned on each call with the request's values in place. The
    results are the same either way."""
    from pybrain import db

    space, through = _space(admin, 1)
    walk = f"_search_vector_{space}_{through}"
    for i in range(6):
        remember(
            conn,
            kind="fact",
            headline=f"Pool {i} idles out after {10 * i + 5} seconds",
            embedding=unit(0.95 - i / 20, axis=i + 1),
        )
    conn.execute("SELECT brain.set_setting('exact_rank_rows', '0')")
    admin.execute(f"DROP FUNCTION IF EXISTS brain.{walk}(brain.search_request, integer, boolean)")

    def searched(plans: list[str]) -> list[list[int]]:
        found = []
        admin.execute(f"SET ROLE {TEST_ROLE}")
        try:
            for _ in range(7):
                found.append(
                    [
                        r[0]
                        for r in admin.execute(
                            "SELECT id FROM brain.search('idle pool', %s::float8[], min_relevance => 0)",
                            (unit(1.0),),
                        )
                    ]
                )
        finally:
            admin.execute("RESET ROLE")
        return found

    with logged_plans(admin) as planned:
        before = searched(planned)
    db.migrate(admin)
    assert _function(admin, walk) is not None
    admin.execute("SELECT set_config('brain.workspace', '1', false)")
    with logged_plans(admin) as kept:
        after = searched(kept)
    assert before == after and len(before[0]) == 6
    walks = [
        [line for p in plans for line in p.splitlines() if "Order By: ((embedding)::" in line]
        for plans in (planned, kept)
    ]
    assert len(walks[0]) == len(walks[1]) == 7, walks
    # planned each call: the query's vector in place; kept: the request's field
    assert all("($1).embedding" not in line for line in walks[0]), walks[0][0][:200]
    assert all("($1).embedding" in line for line in walks[1]), walks[1][0][:200]
