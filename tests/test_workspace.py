"""Tenancy: a member chooses among its workspaces with one setting, and row-level security enforces it."""

from __future__ import annotations

import psycopg
import pytest
from helpers import raises_br, remember, scalar, unit


@pytest.fixture
def second_workspace(database: str) -> int:
    with psycopg.connect(database, autocommit=True) as admin:
        ws = scalar(admin, "SELECT brain.create_workspace('team-b') ->> 'workspace'")
        scalar(admin, "SELECT brain.grant_workspace('brain_tester', %s, 'write')", (int(ws),))
        return int(ws)


def in_workspace(conn, workspace: int):
    conn.execute("SELECT set_config('brain.workspace', %s, false)", (str(workspace),))


def test_memories_are_invisible_across_workspaces(conn, second_workspace) -> None:
    in_workspace(conn, 1)  # a member of two workspaces chooses one
    mine = remember(conn, kind="fact", headline="Team A uses Postgres")["memory_id"]
    in_workspace(conn, second_workspace)
    assert scalar(conn, "SELECT count(*) FROM brain.memory") == 0
    with raises_br("BR010"):
        scalar(conn, "SELECT brain.recall(%s)", (mine,))
    theirs = remember(conn, kind="fact", headline="Team A uses Postgres")
    assert theirs["action"] == "created", "exact dedup is per workspace"
    in_workspace(conn, 1)
    assert scalar(conn, "SELECT count(*) FROM brain.memory") == 1


def test_row_level_security_refuses_writes_into_another_workspace(conn, second_workspace) -> None:
    in_workspace(conn, 1)
    # (the write guard refuses a client's own INSERT first: BR020; row-level security would too)
    with pytest.raises(psycopg.Error) as refused:
        conn.execute(
            "INSERT INTO brain.memory (workspace_id, kind, headline, normalized) "
            "VALUES (%s, 'fact', 'sneaky', 'sneaky')",
            (second_workspace,),
        )
    assert refused.value.sqlstate in ("BR020", "42501")


def test_embedding_spaces_belong_to_a_workspace(conn, second_workspace) -> None:
    in_workspace(conn, second_workspace)
    with raises_br("BR012") as caught:
        remember(conn, kind="fact", headline="Vector", embedding=unit())
    assert "brain init" in caught.error.diag.message_hint
    scalar(conn, "SELECT space_id FROM brain.use_embedding_space('hash', 'feature-hash-v1', 384)")
    assert remember(conn, kind="fact", headline="Vector", embedding=unit())["action"] == "created"


def test_the_test_role_is_not_a_superuser(conn) -> None:
    assert scalar(conn, "SELECT rolsuper FROM pg_roles WHERE rolname = current_user") is False
