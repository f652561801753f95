"""The draft a write builds (issue 42): brain.memory_draft and its Python shape.

pybrain.draft mirrors the composite types of migration 028 field by field; each
producer of the flat API (remember, supersede, capture_context,
record_trajectory) fills one draft and hands it to brain._write, the only
function that takes one.
"""

from __future__ import annotations

import datetime as dt

import psycopg
import pytest

from pybrain import draft


@pytest.mark.parametrize("name", sorted(draft.TYPES))
def test_the_python_shape_is_the_database_type(conn: psycopg.Connection, name: str) -> None:
    rows = conn.execute(
        "SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a"
        " WHERE a.attrelid = %s::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
        (f"brain.{name}",),
    ).fetchall()
    assert draft.shape(draft.TYPES[name]) == rows


def test_a_draft_comes_back_as_the_python_shape(conn: psycopg.Connection) -> None:
    draft.register(conn)
    (got,) = conn.execute(
        "SELECT brain._draft_details(brain._draft('task', 'Rotate the staging keys', project => 'shop'),"
        " NULL, NULL, 'blocked', 2, '2026-12-01T09:00:00Z', NULL, NULL, NULL, NULL, '{}', NULL)"
    ).fetchone()
    assert got == draft.MemoryDraft(
        kind="task",
        headline="Rotate the staging keys",
        project="shop",
        task=draft.TaskDetail("blocked", 2, dt.datetime(2026, 12, 1, 9, tzinfo=dt.UTC)),
    )


def test_a_python_draft_is_written_as_one_value(conn: psycopg.Connection) -> None:
    """The Python shape goes to the database as the composite it mirrors, whole."""
    draft.register(conn)
    d = draft.MemoryDraft(
        kind="incident",
        headline="A migration locked the orders table",
        tags=["db"],
        incident=draft.IncidentDetail(what_was_wrong="ran it by day", related_files=["db/migrate.sql"]),
    )
    (text,) = conn.execute("SELECT (%s::brain.memory_draft).incident::text", (d,)).fetchone()
    assert text == '("ran it by day",,,,{db/migrate.sql},)'


def test_only_the_write_core_takes_a_draft(conn: psycopg.Connection) -> None:
    """brain._write takes the draft and at most three more arguments; the constructors return
    one; no other function of schema brain takes one."""
    rows = conn.execute(
        "SELECT p.proname, p.pronargs FROM pg_proc p WHERE p.pronamespace = 'brain'::regnamespace"
        " AND 'brain.memory_draft'::regtype = ANY (p.proargtypes::oid[]) ORDER BY 1"
    ).fetchall()
    assert rows == [("_draft_details", 12), ("_write", 4)]
