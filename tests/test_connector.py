"""The connector gives every transaction its scope, and is the only code that does;
the typed results name what the SQL functions return."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_type_hints

import psycopg
import pytest
from conftest import TEST_ROLE, with_database
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool
from test_tokens import ensure_role

from pybrain import results
from pybrain.client import Brain
from pybrain.connector import ConnectionConnector, PoolConnector, Scope
from pybrain.embed import get_embedder
from pybrain.errors import AccessDenied
from pybrain.serve import auth

PYBRAIN = Path(__file__).resolve().parent.parent / "pybrain"
SERVE_ROLE = "brain_serve_test"


def test_only_the_connector_sets_a_transactions_role_and_workspace() -> None:
    pattern = re.compile(r"SET\s+(LOCAL\s+)?ROLE|set_config\('brain\.(workspace|max_access|actor|session)'")
    found = sorted(
        str(path.relative_to(PYBRAIN))
        for path in PYBRAIN.rglob("*.py")
        if pattern.search(path.read_text(encoding="utf-8"))
    )
    assert found == ["connector.py"]


def _settings(cur: psycopg.Cursor) -> dict:
    cur.execute(
        "SELECT current_user AS who, current_setting('brain.workspace', true) AS workspace,"
        " current_setting('brain.actor', true) AS actor, current_setting('brain.session', true) AS session,"
        " current_setting('brain.max_access', true) AS max_access"
    )
    return cur.fetchone()


def _as_tester(actor: str, session: str, max_access: str) -> dict:
    """The settings of a transaction run as the test role in workspace 1."""
    return {"who": TEST_ROLE, "workspace": "1", "actor": actor, "session": session, "max_access": max_access}


def test_a_brain_of_its_own_connection_sets_its_workspace_actor_and_session(conn) -> None:
    brain = Brain(conn, workspace=1, embedder=get_embedder("hash"), actor="importer")
    brain.session = 7
    assert isinstance(brain.connector, ConnectionConnector) and brain.conn is conn
    # A ceiling set for the session (or the role) is left as it is: a Brain without a principal sets none.
    conn.execute("SELECT set_config('brain.max_access', 'read', false)")
    with brain.transaction() as cur:
        assert _settings(cur) == _as_tester(actor="importer", session="7", max_access="read")
    conn.execute("RESET brain.max_access")
    assert conn.execute("SELECT current_setting('brain.actor', true)").fetchone()[0] in ("", None)


@pytest.fixture
def serve_url(database: str) -> str:
    with psycopg.connect(database, autocommit=True) as admin:
        ensure_role(admin, SERVE_ROLE, in_role="brain_server")
    return with_database(database, conninfo_to_dict(database)["dbname"], user=SERVE_ROLE, password="pw")


def make_token(conn: psycopg.Connection) -> None:
    """A token of the test role: its role is then granted to brain_server."""
    conn.execute("SELECT brain.create_token(role => %s, name => 'connector')", (TEST_ROLE,))


def test_a_pooled_brain_runs_each_call_as_its_principal(conn, serve_url) -> None:
    make_token(conn)
    reader = auth.Principal(workspace=1, role=TEST_ROLE, access="read", token_id=5, name="reader")
    with ConnectionPool(serve_url, min_size=1, max_size=2, kwargs={"autocommit": True}) as pool:
        brain = Brain(connector=PoolConnector(pool), principal=reader, actor="reporting")
        assert brain.scope() == Scope(
            workspace=1, actor="reporting", role=TEST_ROLE, access="read", token_id=5
        )
        with brain.transaction() as cur:
            assert _settings(cur) == _as_tester(actor="reporting", session="", max_access="read")
        with pytest.raises(AccessDenied):
            brain.remember("fact", "Readers cannot write")
        assert brain.value("workspace_access") == "read"
        # closing the Brain leaves the pool to its owner
        brain.close()
        assert not pool.closed
        with pool.connection() as c:
            assert c.execute("SELECT current_user").fetchone()[0] == SERVE_ROLE


def test_the_held_connection_serves_every_call_of_a_request(conn, serve_url) -> None:
    make_token(conn)
    local = auth.Principal(workspace=1, role=TEST_ROLE, access=None)
    with (
        ConnectionPool(serve_url, min_size=1, max_size=1, kwargs={"autocommit": True}) as pool,
        PoolConnector(pool).held() as held,
    ):
        brain = Brain(connector=held, principal=local)
        pid = held.conn.info.backend_pid
        assert brain.value("workspace_access") == "admin"
        with brain.transaction() as cur:
            # a principal without a ceiling clears it rather than inheriting one
            assert _settings(cur)["max_access"] == ""
            cur.execute("SELECT pg_backend_pid() AS pid")
            assert cur.fetchone()["pid"] == pid
        assert brain.conn.info.backend_pid == pid


def test_an_export_snapshot_is_a_read_only_repeatable_read_in_the_scope(conn) -> None:
    brain = Brain(conn, workspace=1, embedder=get_embedder("hash"))
    with brain.transaction(isolation=psycopg.IsolationLevel.REPEATABLE_READ, read_only=True) as cur:
        cur.execute(
            "SELECT current_setting('transaction_isolation') AS iso,"
            " current_setting('transaction_read_only') AS ro, current_setting('brain.workspace') AS ws"
        )
        assert cur.fetchone() == {"iso": "repeatable read", "ro": "on", "ws": "1"}
    assert (conn.isolation_level, conn.read_only) == (None, None)
    with brain.transaction() as cur:
        cur.execute("SELECT current_setting('transaction_read_only') AS ro")
        assert cur.fetchone()["ro"] == "off"


def _attributes(conn: psycopg.Connection, type_name: str) -> list[str]:
    return [
        r[0]
        for r in conn.execute(
            "SELECT a.attname FROM pg_type t JOIN pg_attribute a ON a.attrelid = t.typrelid"
            " WHERE t.oid = %s::regtype AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
            (type_name,),
        )
    ]


def _keys(typed: type) -> set[str]:
    return set(get_type_hints(typed))


def test_the_typed_results_name_what_the_functions_return(brain: Brain, conn) -> None:
    assert list(get_type_hints(results.SearchResult)) == _attributes(conn, "brain.search_result")
    assert list(get_type_hints(results.MemoryBrief)) == _attributes(conn, "brain.memory_brief")
    old = brain.remember("fact", "The billing export takes 41 minutes", project="shop").memory_id
    new = brain.supersede(old, "The billing export takes 12 minutes", reason="parallel scan").memory_id
    brain.remember("rule", "Deploy billing only after the canary passes", severity="PATTERN")
    hits = brain.search("billing export", project="shop")
    assert hits and all(set(h) == _keys(results.SearchResult) for h in hits)
    recent = brain.list_recent()
    assert recent and all(set(r) == _keys(results.MemoryBrief) for r in recent)
    for memory_id in (old, new):
        assert _keys(results.Memory) <= set(brain.recall(memory_id))
    history = brain.history(new)
    assert set(history) == _keys(results.History)
    assert all(set(v) == _keys(results.HistoryVersion) for v in history["chain"])
    assert all(set(e) == _keys(results.HistoryEvent) for e in history["events"])
    boot = brain.boot_session("pytest", project="shop", task="billing export")
    assert set(boot) == _keys(results.BootPayload)
    columns = [
        r[0]
        for r in conn.execute(
            "SELECT unnest(proargnames[pronargs + 1:]) FROM pg_proc WHERE oid = 'brain.list_skills'::regproc"
        )
    ]
    assert list(get_type_hints(results.Skill)) == columns
