"""No client can LOCK a table of schema brain beyond what its own statements take.

PostgreSQL lets a role LOCK a table in every mode when it holds UPDATE, DELETE, TRUNCATE or
MAINTAIN on the table (LockTableAclCheck; SELECT allows ACCESS SHARE, INSERT up to ROW
EXCLUSIVE; column privileges are not consulted). Application roles held UPDATE and DELETE on the
memory tables, so any member could take ACCESS EXCLUSIVE on brain.memory in an idle transaction
and stop every workspace. Migration 034 grants UPDATE column by column and takes DELETE away
(the API's deletions run as the owner, sql/functions/004d-write-deletes.sql).
"""

from __future__ import annotations

import psycopg
import pytest
from helpers import raises_br, remember, scalar
from psycopg import sql

MODES = [
    "ACCESS SHARE",
    "ROW SHARE",
    "ROW EXCLUSIVE",
    "SHARE UPDATE EXCLUSIVE",
    "SHARE",
    "SHARE ROW EXCLUSIVE",
    "EXCLUSIVE",
    "ACCESS EXCLUSIVE",
]
# What a SELECT, a SELECT ... FOR UPDATE and an INSERT, UPDATE or DELETE take anyway.
STATEMENT_MODES = {"ACCESS SHARE", "ROW SHARE", "ROW EXCLUSIVE"}

READER, WRITER, SERVE = "brain_lock_reader", "brain_lock_writer", "brain_lock_serve"


@pytest.fixture
def client_roles(admin: psycopg.Connection):
    """Every client role: brain_user, brain_server, each login role in brain_user (the test role,
    an admin; a reader and a writer made by brain.create_role, as `brain role` does) and one in
    brain_server (as `brain serve` makes its login)."""
    ws = int(scalar(admin, "SELECT brain.create_workspace('locks') ->> 'workspace'"))
    for name, access in ((READER, "read"), (WRITER, "write")):
        admin.execute(f"DROP ROLE IF EXISTS {name}")
        admin.execute("SELECT brain.create_role(%s, %s, %s)", (name, ws, access))
    admin.execute(f"DROP ROLE IF EXISTS {SERVE}")
    admin.execute(f"CREATE ROLE {SERVE} LOGIN IN ROLE brain_server")
    roles = [
        r
        for (r,) in admin.execute(
            "SELECT rolname FROM pg_roles"
            " WHERE (pg_has_role(oid, 'brain_user', 'MEMBER') OR pg_has_role(oid, 'brain_server', 'MEMBER'))"
            "   AND NOT rolsuper AND rolname <> 'brain_owner' ORDER BY 1"
        ).fetchall()
    ]
    try:
        yield roles
    finally:
        for name in (READER, WRITER, SERVE):
            admin.execute(f"DROP OWNED BY {name}")
            admin.execute(f"DROP ROLE {name}")


def _relations(admin: psycopg.Connection) -> list[str]:
    return [
        r
        for (r,) in admin.execute(
            "SELECT c.relname FROM pg_class c WHERE c.relnamespace = 'brain'::regnamespace"
            " AND c.relkind IN ('r', 'p', 'v', 'm', 'f') ORDER BY 1"
        ).fetchall()
    ]


def _granted(admin: psycopg.Connection, role: str | None, relation: str, mode: str) -> bool:
    """Whether role (None: the superuser) gets relation locked in mode, NOWAIT, in a
    transaction rolled back."""
    statement = sql.SQL("LOCK TABLE brain.{} IN {} MODE NOWAIT").format(
        sql.Identifier(relation), sql.SQL(mode)
    )
    admin.execute("BEGIN")
    try:
        if role is not None:
            admin.execute(sql.SQL("SET LOCAL ROLE {}").format(sql.Identifier(role)))
        admin.execute(statement)
        return True
    except psycopg.errors.InsufficientPrivilege:
        return False
    finally:
        admin.execute("ROLLBACK")


def test_no_client_role_locks_a_table_beyond_what_statements_take(admin, client_roles, capsys) -> None:
    relations = _relations(admin)
    assert {"memory", "embedding", "session", "request_answer"} <= set(relations)
    assert {"brain_user", "brain_server", READER, WRITER, SERVE} <= set(client_roles)
    # the probe sees a lock that is granted: the superuser takes every mode on every table
    assert all(_granted(admin, None, r, mode) for r in ("memory", "audit") for mode in MODES)
    tried, granted, beyond = 0, {}, []
    for role in client_roles:
        for relation in relations:
            for mode in MODES:
                tried += 1
                if _granted(admin, role, relation, mode):
                    granted[mode] = granted.get(mode, 0) + 1
                    if mode not in STATEMENT_MODES:
                        beyond.append(f"{role} {mode} on brain.{relation}")
    with capsys.disabled():
        print(
            f"\nLOCK TABLE ... NOWAIT by {len(client_roles)} client roles ({', '.join(client_roles)}) on"
            f" {len(relations)} relations of schema brain in {len(MODES)} modes: {tried} tried,"
            f" {sum(granted.values())} granted ({', '.join(f'{m}: {n}' for m, n in granted.items())}),"
            f" {len(beyond)} beyond ROW EXCLUSIVE"
        )
        for line in beyond[:20]:
            print("  ", line)
    assert beyond == []
    # a writer still takes what its statements take
    assert granted.get("ROW EXCLUSIVE", 0) > 0


def test_no_client_role_holds_what_allows_every_lock_mode(admin, client_roles) -> None:
    """UPDATE on a whole table, DELETE, TRUNCATE or MAINTAIN, by any client role (inherited or
    not) on any relation of schema brain."""
    held = admin.execute(
        "SELECT r.rolname, c.relname, p.privilege FROM pg_roles r CROSS JOIN pg_class c"
        " CROSS JOIN unnest(ARRAY['UPDATE', 'DELETE', 'TRUNCATE', 'MAINTAIN']) AS p(privilege)"
        " WHERE r.rolname = ANY (%s) AND c.relnamespace = 'brain'::regnamespace"
        "   AND c.relkind IN ('r', 'p', 'v', 'm', 'f')"
        "   AND has_table_privilege(r.oid, c.oid, p.privilege)",
        (client_roles,),
    ).fetchall()
    assert held == []


def test_a_client_deletes_through_the_api_only(conn, admin) -> None:
    """The API's deletions run as the owner, for the caller's workspace, and only under a public
    function of schema brain: a direct call of a deleting helper is refused, as is a DELETE."""
    mid = remember(conn, kind="fact", headline="The canary runs on host seven")["memory_id"]
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("DELETE FROM brain.memory WHERE memory_id = %s", (mid,))
    for call, args in (
        ("SELECT brain._delete_memories(%s)", ([mid],)),
        ("SELECT brain._delete_embeddings(%s)", ([mid],)),
        ("SELECT brain._delete_embedding_failures(1, %s)", ([mid],)),
        ("SELECT brain._delete_request_answers(now() + interval '1 year')", None),
        ("SELECT brain._delete_setting('min_relevance')", None),
        ("SELECT brain._delete_stale_marks(%s, %s)", (mid, mid)),
    ):
        with raises_br("BR020"):
            conn.execute(call, args)
    assert scalar(admin, "SELECT count(*) FROM brain.memory WHERE memory_id = %s", (mid,)) == 1
    # through the API: forgotten, then pruned
    conn.execute("SELECT brain.forget(%s, 'wrong host')", (mid,))
    admin.execute(
        "UPDATE brain.memory SET forgotten_at = now() - interval '60 days' WHERE memory_id = %s", (mid,)
    )
    pruned = conn.execute("SELECT id, action FROM brain.prune(dry_run => false)").fetchall()
    assert pruned == [(mid, "deleted")]
    assert scalar(admin, "SELECT count(*) FROM brain.memory WHERE memory_id = %s", (mid,)) == 0
