"""The schema can be distributed by workspace (Citus), checked on a migrated database's catalog.

Citus's rules for a distributed table: every primary key, unique constraint
and unique index includes the distribution column; a foreign key between two
distributed tables includes it on both sides, in the same position (so both
rows live on the same shard); a reference table (copied to every node) may be
referenced by distributed tables but may not reference them; an identity
column of a distributed table is bigint. docs/scaling.md lists the tables and
what else a Citus deployment needs.
"""

from __future__ import annotations

import psycopg

DISTRIBUTION_COLUMN = "workspace_id"
# Replicated to every node: the tenancy tree above the workspaces.
REFERENCE = {"account", "organization", "workspace"}
# The migration ledger: the coordinator's own bookkeeping, never queried per workspace.
LOCAL = {"migration"}


def _tables(cur: psycopg.Cursor) -> dict[str, int]:
    return dict(
        cur.execute(
            "SELECT c.relname, c.oid::int FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = 'brain' AND c.relkind IN ('r', 'p') AND NOT c.relispartition"
        ).fetchall()
    )


def _columns(cur: psycopg.Cursor, relid: int, attnums: list[int]) -> list[str]:
    names = dict(
        cur.execute(
            "SELECT attnum, attname FROM pg_attribute WHERE attrelid = %s AND attnum > 0", (relid,)
        ).fetchall()
    )
    return [names.get(n, "(expression)") for n in attnums]


def test_every_table_is_classified(database: str) -> None:
    """A new table is either distributed by workspace (it has the column) or named here as reference/local."""
    with psycopg.connect(database) as conn, conn.cursor() as cur:
        tables = _tables(cur)
        without = {
            name
            for name, oid in tables.items()
            if not cur.execute(
                "SELECT 1 FROM pg_attribute WHERE attrelid = %s AND attname = %s AND NOT attisdropped",
                (oid, DISTRIBUTION_COLUMN),
            ).fetchone()
        }
    assert without == (REFERENCE | LOCAL) - {"workspace"}, "tables without workspace_id"
    assert "memory" in tables and "embedding" in tables  # the catalog read is the real one
    assert set(tables) >= REFERENCE | LOCAL


def unique_key_violations(cur: psycopg.Cursor) -> tuple[list[str], int]:
    """Unique indexes (primary keys, unique constraints, unique indexes, partial ones too) of
    distributed tables that leave out workspace_id; and how many were checked."""
    tables = _tables(cur)
    checked, wrong = 0, []
    for name, oid in sorted(tables.items()):
        if name in REFERENCE | LOCAL:
            continue
        rows = cur.execute(
            "SELECT i.indexrelid::regclass::text, i.indkey::int2[]::int[] FROM pg_index i"
            " WHERE i.indrelid = %s AND i.indisunique",
            (oid,),
        ).fetchall()
        if not rows:
            wrong.append(f"brain.{name} has no primary key")
        for index, attnums in rows:
            cols = _columns(cur, oid, attnums)
            checked += 1
            if DISTRIBUTION_COLUMN not in cols:
                wrong.append(f"{index} on brain.{name} ({', '.join(cols)})")
    return wrong, checked


def foreign_key_violations(cur: psycopg.Cursor) -> tuple[list[str], int]:
    """Foreign keys that would cross shards; and how many join two distributed tables."""
    by_oid = {oid: name for name, oid in _tables(cur).items()}
    fks = cur.execute(
        "SELECT conname, conrelid::int, confrelid::int, conkey::int[], confkey::int[] FROM pg_constraint"
        " WHERE contype = 'f' AND connamespace = 'brain'::regnamespace"
    ).fetchall()
    wrong = []
    between_distributed = 0
    for name, rel, frel, keys, fkeys in fks:
        src, dst = by_oid[rel], by_oid[frel]
        cols, fcols = _columns(cur, rel, keys), _columns(cur, frel, fkeys)
        if src in REFERENCE | LOCAL:
            if dst not in REFERENCE:
                wrong.append(f"{name}: reference table {src} references {dst}")
        elif dst in LOCAL:
            wrong.append(f"{name}: {src} references the local table {dst}")
        elif dst not in REFERENCE:  # distributed -> reference is allowed
            between_distributed += 1
            if (DISTRIBUTION_COLUMN, DISTRIBUTION_COLUMN) not in zip(cols, fcols, strict=True):
                wrong.append(f"{name}: {src}({', '.join(cols)}) -> {dst}({', '.join(fcols)})")
    return wrong, between_distributed


def test_unique_keys_include_the_workspace(database: str) -> None:
    with psycopg.connect(database) as conn, conn.cursor() as cur:
        wrong, checked = unique_key_violations(cur)
        distributed = len(_tables(cur)) - len(REFERENCE | LOCAL)
    assert not wrong, "unique keys without workspace_id: " + "; ".join(wrong)
    assert checked >= distributed > 15


def test_foreign_keys_stay_on_one_shard(database: str) -> None:
    """Between distributed tables a foreign key pairs workspace_id with workspace_id; reference
    tables reference only reference tables."""
    with psycopg.connect(database) as conn, conn.cursor() as cur:
        wrong, between_distributed = foreign_key_violations(cur)
    assert not wrong, "foreign keys that cross shards: " + "; ".join(wrong)
    assert between_distributed >= 10  # memory's kind tables, embeddings, sessions...


def test_the_checker_finds_keys_that_would_cross_shards(database: str) -> None:
    """What the checks above reject: a unique key or a foreign key that leaves out workspace_id."""
    with psycopg.connect(database) as conn, conn.cursor() as cur:
        cur.execute(
            "CREATE TABLE brain.citus_probe (workspace_id bigint NOT NULL REFERENCES brain.workspace,"
            " probe_id bigint NOT NULL, memory_id bigint, PRIMARY KEY (workspace_id, probe_id))"
        )
        assert unique_key_violations(cur)[0] == []
        cur.execute("CREATE UNIQUE INDEX citus_probe_memory ON brain.citus_probe (memory_id)")
        cur.execute(
            "ALTER TABLE brain.citus_probe ADD CONSTRAINT citus_probe_fk"
            " FOREIGN KEY (probe_id, memory_id) REFERENCES brain.memory (workspace_id, memory_id)"
        )
        cur.execute("ALTER TABLE brain.account ADD COLUMN probe_workspace bigint, ADD COLUMN probe_id bigint")
        cur.execute(
            "ALTER TABLE brain.account ADD CONSTRAINT account_probe_fk"
            " FOREIGN KEY (probe_workspace, probe_id) REFERENCES brain.citus_probe (workspace_id, probe_id)"
        )
        assert unique_key_violations(cur)[0] == ["brain.citus_probe_memory on brain.citus_probe (memory_id)"]
        assert sorted(foreign_key_violations(cur)[0]) == [
            "account_probe_fk: reference table account references citus_probe",
            "citus_probe_fk: citus_probe(probe_id, memory_id) -> memory(workspace_id, memory_id)",
        ]
        conn.rollback()


def test_identity_columns_of_distributed_tables_are_bigint(database: str) -> None:
    with psycopg.connect(database) as conn, conn.cursor() as cur:
        rows = cur.execute(
            "SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a"
            " JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = 'brain' AND a.attidentity <> '' AND c.relkind IN ('r', 'p')"
        ).fetchall()
    distributed = [r for r in rows if r[0] not in REFERENCE | LOCAL]
    assert distributed, "the distributed tables number their rows with identity columns"
    assert [r for r in distributed if r[2] != "bigint"] == []
