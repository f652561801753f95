"""A member of one workspace cannot hold up another's work through a lock (issue 54, item 2).

The advisory locks that let one maintenance run, one switch of embedding space, one lexeme
analysis and one indexer of a space run at a time in a workspace were keyed by the workspace's
id (or the space's): any client could take the same key in an idle transaction and keep another
workspace's brain.maintain() waiting until its statement timeout. Their keys are now drawn from
the workspace's secret channel (brain._lock_key), which a role computes for its own workspace
only. So are the keys of a workspace's writes of one kind and project (brain._scope_key: the
scope's lock, the first writers' and the commits') and of a skill's name, which were drawn from
the workspace's id and the kind, project or name, all of which another workspace can guess.
"""

from __future__ import annotations

import psycopg
import pytest
from conftest import with_database
from helpers import DIMS, raises_br, remember, scalar
from psycopg.conninfo import conninfo_to_dict

INTRUDER = "brain_lock_intruder"

# What each guarded piece of work took before, keyed by the workspace's id (space's id).
OLD_KEYS = {
    "maintain": "SELECT pg_advisory_lock(hashtext('brain.maintain'), %(ws)s::integer)",
    "space switch": "SELECT pg_advisory_lock(hashtext('brain.embedding_space'), %(ws)s::integer)",
    "lexeme analysis": "SELECT pg_advisory_lock(hashtext('brain.analyze_lexemes'), %(ws)s::integer)",
    "indexer": "SELECT pg_advisory_lock(hashtext('brain.index_vectors'), %(space)s::integer)",
    # a fact of no project: brain._scope_key(ws, 'fact', '')
    **{
        f"write ({what})": f"SELECT pg_advisory_lock(hashtext('{key}'), hashtext(%(ws)s::text || '/fact/'))"
        for what, key in (
            ("scope", "brain.write"),
            ("first writers", "brain.write.few"),
            ("commit", "brain.write.commit"),
        )
    },
    "skill": "SELECT pg_advisory_lock(hashtext('brain.skill'), hashtext(%(ws)s::text || '/deploy-steps'))",
}

# The victim's work, each with a lock_timeout: waiting for a lock fails it.
WORK = {
    "maintain": "SELECT brain.maintain()",
    "space switch": "SELECT brain.use_embedding_space('hash', 'feature-hash-v1', 384)",
    "lexeme analysis": "SELECT brain.analyze_lexemes()",
    "indexer": "SELECT brain.index_vectors()",
    "write": "SELECT brain.remember('fact', 'The deploy window opens at nine',"
    f" embedding => ARRAY[1]::float8[] || array_fill(0::float8, ARRAY[{DIMS - 1}]))",
    "skill": "SELECT brain.remember('rule', 'Deploy in three steps',"
    ' skill_trigger => \'{"name": "deploy-steps"}\')',
}


@pytest.fixture
def intruder_url(admin: psycopg.Connection, database: str) -> str:
    """A read-only member of a workspace of its own."""
    if not admin.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (INTRUDER,)).fetchone():
        admin.execute(f"CREATE ROLE {INTRUDER} LOGIN PASSWORD 'intruder' IN ROLE brain_user")
    ws = int(scalar(admin, "SELECT brain.create_workspace('intruder') ->> 'workspace'"))
    scalar(admin, "SELECT brain.grant_workspace(%s, %s, 'read')", (INTRUDER, ws))
    return with_database(database, conninfo_to_dict(database)["dbname"], user=INTRUDER, password="intruder")


def test_a_lock_held_in_one_workspace_does_not_stop_anothers_work(conn, intruder_url, capsys) -> None:
    remember(conn, kind="fact", headline="The nightly backup runs at two")
    victim_ws = scalar(conn, "SELECT brain.current_workspace()")
    space = scalar(conn, "SELECT (brain.active_embedding_space()).space_id")
    held = []
    with psycopg.connect(intruder_url, autocommit=True) as intruder:
        # what the intruder could compute: the old keys, and a key for another workspace
        with raises_br("BR020"):
            scalar(intruder, "SELECT brain._lock_key(%s, 'brain.maintain')", (victim_ws,))
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            intruder.execute("SELECT channel FROM brain.workspace_channel")
        intruder.execute("BEGIN")  # an idle transaction holding every key it can
        own = scalar(intruder, "SELECT brain.current_workspace()")
        for name in ("brain.maintain", "brain.embedding_space", "brain.analyze_lexemes", "brain.write"):
            intruder.execute("SELECT pg_advisory_lock(brain._lock_key(%s, %s))", (own, name))
        for query in OLD_KEYS.values():
            intruder.execute(query, {"ws": victim_ws, "space": space})
        conn.execute("SET lock_timeout = '2s'")
        try:
            for what, query in WORK.items():
                try:
                    conn.execute(query)
                except psycopg.errors.LockNotAvailable:
                    held.append(what)
        finally:
            conn.execute("RESET lock_timeout")
            intruder.execute("ROLLBACK")
    with capsys.disabled():
        print(f"\nwork of another workspace held up by the intruder's locks: {held or 'none'} of {len(WORK)}")
    assert held == []
