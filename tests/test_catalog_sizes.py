"""No workspace's size shows in what the catalog tells a client (issue 54, item 3).

A space belongs to one workspace, and its vectors have a partial HNSW index of their own: the
index's pg_class.reltuples and relpages, pg_relation_size(), its scans in pg_stat_user_indexes,
and the planner's estimate for `space_id = n` each told any role how many vectors another
workspace holds. Each view a client can read is asked about two workspaces of different sizes,
as a member of the smaller one; a view "tells" when its answers for the two differ.
"""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from conftest import with_database
from helpers import remember, scalar
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict
from test_index import index_all

NEIGHBOUR = "brain_size_neighbour"
BIG = 120
SMALL = 6


@pytest.fixture
def neighbour_url(admin: psycopg.Connection, database: str) -> str:
    """A member of a workspace of its own, with a space and a few vectors."""
    if not admin.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (NEIGHBOUR,)).fetchone():
        admin.execute(f"CREATE ROLE {NEIGHBOUR} LOGIN PASSWORD 'neighbour' IN ROLE brain_user")
    ws = int(scalar(admin, "SELECT brain.create_workspace('neighbour') ->> 'workspace'"))
    scalar(admin, "SELECT brain.grant_workspace(%s, %s, 'write')", (NEIGHBOUR, ws))
    return with_database(database, conninfo_to_dict(database)["dbname"], user=NEIGHBOUR, password="neighbour")


def answer(conn: psycopg.Connection, query: Any, params: Any = None) -> str:
    """What a query tells the client: its rows, or that it was refused."""
    try:
        with conn.transaction():
            return repr(conn.execute(query, params).fetchall())
    except psycopg.errors.InsufficientPrivilege:
        return "refused"


def plan_rows(conn: psycopg.Connection, query: Any) -> float:
    (plan,) = conn.execute(sql.SQL("EXPLAIN (FORMAT JSON) {}").format(query)).fetchone()
    return plan[0]["Plan"]["Plan Rows"]


def test_no_catalog_view_tells_a_workspaces_size(brain, conn, admin, neighbour_url, capsys) -> None:
    for i in range(BIG):
        brain.remember("fact", f"Shard {i} of the nightly export finished at {i % 24}:00")
    index_all(conn)
    victim_space = scalar(conn, "SELECT (brain.active_embedding_space()).space_id")
    with psycopg.connect(neighbour_url, autocommit=True) as c:
        own_space = scalar(
            c, "SELECT space_id FROM brain.use_embedding_space('hash', 'feature-hash-v1', 384)"
        )
        for i in range(SMALL):
            remember(c, kind="fact", headline=f"Neighbour note {i} about the lunch rota", embedding=None)
    admin.execute(
        "SELECT set_config('brain.workspace', %s, false)",
        (str(scalar(admin, "SELECT max(workspace_id) FROM brain.workspace")),),
    )
    index_all(admin)
    admin.execute("ANALYZE")
    index_of = {
        space: scalar(
            admin,
            "SELECT indexrelid::regclass::text FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
            " WHERE c.relname LIKE 'embedding\\_hnsw\\_' || %s || '%%' ORDER BY c.relname DESC LIMIT 1",
            (space,),
        )
        for space in (victim_space, own_space)
    }
    assert all(index_of.values()), index_of
    victim_ws = 1
    views = {
        "pg_class sizes of the space's index": lambda space, ws: (
            "SELECT reltuples, relpages FROM pg_class WHERE oid = %s::regclass",
            (index_of[space],),
        ),
        "pg_class.*": lambda space, ws: (
            "SELECT * FROM pg_class WHERE oid = %s::regclass",
            (index_of[space],),
        ),
        "pg_relation_size": lambda space, ws: ("SELECT pg_relation_size(%s::regclass)", (index_of[space],)),
        "pg_total_relation_size": lambda space, ws: (
            "SELECT pg_total_relation_size(%s::regclass)",
            (index_of[space],),
        ),
        "pg_stat_user_indexes": lambda space, ws: (
            "SELECT idx_scan, idx_tup_read FROM pg_stat_user_indexes WHERE indexrelid = %s::regclass",
            (index_of[space],),
        ),
        "pg_statio_user_indexes": lambda space, ws: (
            "SELECT idx_blks_read, idx_blks_hit FROM pg_statio_user_indexes WHERE indexrelid = %s::regclass",
            (index_of[space],),
        ),
        "pg_stats": lambda space, ws: (
            "SELECT attname, n_distinct, most_common_vals::text FROM pg_stats"
            " WHERE schemaname = 'brain' AND tablename = 'embedding' ORDER BY 1",
            None,
        ),
        "pg_statistic_ext_data": lambda space, ws: ("SELECT count(*) FROM pg_statistic_ext_data", None),
        # a member sees its own spaces' indexes here; of another workspace's, what it sees of none
        "storage_state": lambda space, ws: (
            "SELECT i ->> 'bytes' FROM jsonb_array_elements(brain.storage_state() -> 'vector_indexes') AS i"
            " WHERE i ->> 'name' = %s",
            (index_of[space].removeprefix("brain.") if space == victim_space else "embedding_hnsw_0",),
        ),
    }
    explained = {
        "EXPLAIN embedding WHERE space_id": lambda space, ws: sql.SQL(
            "SELECT 1 FROM brain.embedding WHERE space_id = {}"
        ).format(space),
        "EXPLAIN embedding WHERE workspace_id": lambda space, ws: sql.SQL(
            "SELECT 1 FROM brain.embedding WHERE workspace_id = {}"
        ).format(ws),
        "EXPLAIN embedding_failure WHERE space_id": lambda space, ws: sql.SQL(
            "SELECT 1 FROM brain.embedding_failure WHERE space_id = {}"
        ).format(space),
    }
    told = []
    with psycopg.connect(neighbour_url, autocommit=True) as c:
        own_ws = scalar(c, "SELECT brain.current_workspace()")
        for name, make in views.items():
            said = [
                answer(c, *make(space, ws)) for space, ws in ((victim_space, victim_ws), (own_space, own_ws))
            ]
            if said[0] != said[1]:
                told.append(f"{name}: {said[0][:60]} vs {said[1][:60]}")
        for name, make in explained.items():
            said = [
                plan_rows(c, make(space, ws))
                for space, ws in ((victim_space, victim_ws), (own_space, own_ws))
            ]
            if said[0] != said[1]:
                told.append(f"{name}: {said[0]} vs {said[1]} rows")
    with capsys.disabled():
        print(
            f"\ncatalog views asked about a workspace of {BIG} and one of {SMALL} vectors: "
            f"{len(told)} of {len(views) + len(explained)} tell them apart"
        )
        for line in told:
            print("  " + line)
    assert told == []
