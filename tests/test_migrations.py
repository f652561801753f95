"""Migrations: named and numbered consistently, frozen once released, safe twice and at once."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import psycopg
import pytest
from conftest import with_database
from schema_dump import dump

from pybrain import db
from pybrain.errors import MigrationError

# A released migration never changes. Adding a migration means adding its
# checksum here; changing one means this test fails.
RELEASED = {
    "001-core-schema.sql": "64f80757457340bac3c3734a52d076ebfc898f566e05b42ac2bc932c25203189",
    "002-retrieval.sql": "3c4032f9a630d42412f03fc0b77f1bb012ba44f097710f3a4f9815eed820c1e5",
    "003-lifecycle.sql": "1b90076b798011b98d7e404016e3dd18a3de009412ea7429e6093ad17ad245d0",
    "004-sessions.sql": "02b0f8096dd8c81eafcb325e16b1c3f6aacda12a653b10c4083651f7471d1a00",
    "005-observability.sql": "6812663ebbac2173f7a86fed886b24e0b6ca35402d592850a3ff27d790384d09",
    "006-reference-indexes.sql": "af2d2eede45076c2d4f41fd7c67b1c357c129cb403be0d07499f15da67ee7082",
}


@pytest.mark.parametrize("kind", ["migrations", "functions"])
def test_files_are_numbered_consecutively(kind: str) -> None:
    names = [p.name for p in db.sql_files(kind)]
    assert names, f"sql/{kind} is empty"
    for i, name in enumerate(names, start=1):
        assert db.SQL_FILE.match(name), f"{name} is not NNN-kebab-name.sql"
        assert name.startswith(f"{i:03d}-"), f"{name} should be number {i:03d}"
    assert (db.sql_dir() / kind / "README.md").exists(), f"sql/{kind} needs a README stating its rule"


def test_released_migrations_are_frozen() -> None:
    files = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in db.sql_files("migrations")}
    assert files == RELEASED


@pytest.fixture
def empty_database(admin_url: str):
    name = "brain_empty_migrate"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield with_database(admin_url, name)
    finally:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_migrate_twice_and_concurrently_is_safe(empty_database: str) -> None:
    errors: list[BaseException] = []
    reports: list[db.MigrateReport] = []
    barrier = threading.Barrier(4)

    def run() -> None:
        try:
            with psycopg.connect(empty_database, autocommit=True) as conn:
                barrier.wait()
                reports.append(db.migrate(conn))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    applied = sorted(name for r in reports for name in r.applied)
    assert applied == sorted(RELEASED), "each migration ran exactly once"
    with psycopg.connect(empty_database, autocommit=True) as conn:
        again = db.migrate(conn)
        assert again.applied == []
        assert again.functions == len(db.sql_files("functions"))
        recorded = dict(conn.execute("SELECT name, sha256 FROM brain.migration").fetchall())
    assert recorded == RELEASED


def test_a_changed_migration_stops_migrate(empty_database: str) -> None:
    with psycopg.connect(empty_database, autocommit=True) as conn:
        db.migrate(conn)
        conn.execute("UPDATE brain.migration SET sha256 = 'edited' WHERE name = '001-core-schema.sql'")
        with pytest.raises(MigrationError, match="changed after it was applied"):
            db.migrate(conn)


def test_migrations_give_the_documented_schema(empty_database: str) -> None:
    with psycopg.connect(empty_database, autocommit=True) as conn:
        db.migrate(conn)
        version = conn.info.server_version
    if version // 10000 != 18:
        pytest.skip("docs/schema.sql is dumped from PostgreSQL 18")
    documented = (Path(__file__).parent.parent / "docs" / "schema.sql").read_text()
    assert dump(empty_database) == documented, "run `make schema` and review the diff"
