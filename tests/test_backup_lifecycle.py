"""Every backup restores: after writes, batches the worker indexes (index rebuilds, with the
replaced index still in place and after it is dropped), a move to another embedding
model, and an upgrade from the previous release. Each backup is restored into an empty
database, whose counts and search results must be the source's."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import psycopg
import pytest
from conftest import TEST_ROLE, new_database, with_database
from psycopg.conninfo import conninfo_to_dict
from test_migrations import older_release

from pybrain import db, ingest
from pybrain.client import Brain
from pybrain.embed import get_embedder
from pybrain.embed.hash import HashEmbedder
from pybrain.transfer import backup

QUERY = "release branch signed tags"
_restores = itertools.count()


class OtherModel(HashEmbedder):
    """Another embedding model (a space of its own) for the move to it."""

    model = "feature-hash-other"


def space_indexes(url: str) -> list[str]:
    with psycopg.connect(url) as c:
        return [
            r[0]
            for r in c.execute(
                "SELECT indexname FROM pg_indexes WHERE schemaname = 'brain' AND tablename = 'embedding'"
                " AND indexname ~ '^embedding_(hnsw|patterns)_' ORDER BY 1"
            )
        ]


def backed_up_and_restored(
    step: str, database: str, admin_url: str, tmp_path: Path, embedder=None
) -> list[str]:
    """Backs the database up, restores it into an empty one, and checks the counts and a
    search there against the source's; the space indexes the backup held."""
    dbname = conninfo_to_dict(database)["dbname"]
    source_user = with_database(database, dbname, user=TEST_ROLE, password="test")
    with psycopg.connect(source_user, autocommit=True) as c:
        expected = [h["id"] for h in Brain(c, embedder=embedder or get_embedder("hash")).search(QUERY)]
    assert expected, step
    indexes = space_indexes(database)
    file = tmp_path / f"{step}.dump"
    made = backup.backup(database, file)
    name = f"brain_restored_{os.getpid()}_{next(_restores)}"
    with new_database(admin_url, name) as target:
        try:
            restored = backup.restore(file, target)
        except backup.RestoreRefused as refused:
            print(f"{step}: indexes {indexes}: refused: {refused} {refused.detail}")
            raise
        assert restored["counts"] == made["counts"], step
        assert space_indexes(target) == indexes, step
        target_user = with_database(target, name, user=TEST_ROLE, password="test")
        with psycopg.connect(target_user, autocommit=True) as c:
            again = Brain(c, embedder=embedder or get_embedder("hash"))
            assert [h["id"] for h in again.search(QUERY)] == expected, step
            assert db.is_current(c)
    embeddings = made["counts"]["embeddings"]
    print(f"{step}: {embeddings} embeddings, indexes {indexes}: restored, same counts and search")
    return indexes


def writes_and_rebuilds(conn: psycopg.Connection, database: str, admin_url: str, tmp_path: Path) -> None:
    brain = Brain(conn, embedder=get_embedder("hash"))
    # Small batches are left out of the index and a rebuild comes early.
    conn.execute("SELECT brain.set_setting('index_defer_rows', '5')")
    brain.remember("rule", "Release branches are cut from main with signed tags")
    brain.remember("fact", "The staging bucket is emptied every Sunday night")
    backed_up_and_restored("writes", database, admin_url, tmp_path)

    brain.observe([f"Build {i} of the release branch passed its signed tags check" for i in range(12)])
    assert brain.index_vectors()["action"] == "rebuilt"
    # The replaced index stays until the next call drops it: a backup now holds both.
    rebuilt = backed_up_and_restored("rebuilt", database, admin_url, tmp_path)
    assert len([i for i in rebuilt if i.startswith("embedding_hnsw_")]) == 2
    while brain.index_vectors()["action"] != "none":
        pass
    assert any(
        "_" in i.removeprefix("embedding_hnsw_")
        for i in backed_up_and_restored("indexed", database, admin_url, tmp_path)
    )

    # An ingest of a folder: its chunks wait outside the index until the worker's rebuild.
    docs = tmp_path / "docs"
    docs.mkdir(exist_ok=True)
    for i in range(3):
        paragraphs = [f"Runbook {i}, part {j}: the release branch needs signed tags." for j in range(20)]
        (docs / f"runbook-{i}.md").write_text("\n\n".join(paragraphs))
    report = ingest.run(brain, ingest.collect([str(docs)], root=tmp_path), project="shop")
    assert not report.problems
    backed_up_and_restored("ingested", database, admin_url, tmp_path)
    while brain.index_vectors()["action"] != "none":
        pass
    backed_up_and_restored("ingest indexed", database, admin_url, tmp_path)


def reembeds(conn: psycopg.Connection, database: str, admin_url: str, tmp_path: Path) -> None:
    # Another embedding model: a second space, filled, active, then the old one dropped.
    other = OtherModel()
    moving = Brain(conn, embedder=other)
    moving.use_embedding_space(other)
    while moving.reembed_batch(other, 16):
        pass
    previous = moving.activate_space(f"{other.provider}:{other.model}")["previous"]
    moving.observe([f"Hotfix {i} went out on the release branch with signed tags" for i in range(8)])
    while moving.index_vectors()["action"] != "none":
        pass
    backed_up_and_restored("new space active", database, admin_url, tmp_path, other)
    moving.drop_space(previous)
    backed_up_and_restored("old space dropped", database, admin_url, tmp_path, other)


def test_every_backup_restores_after_writes_index_rebuilds_and_reembeds(
    conn: psycopg.Connection, database: str, admin_url: str, tmp_path: Path
) -> None:
    writes_and_rebuilds(conn, database, admin_url, tmp_path)
    reembeds(conn, database, admin_url, tmp_path)


def test_every_backup_of_an_upgraded_database_restores(admin_url: str, tmp_path: Path) -> None:
    """A database of the previous release (its migrations, a space and its index as they
    left them), migrated to this one, then written to."""
    name = f"brain_upgraded_{os.getpid()}"
    with new_database(admin_url, name) as database:
        with older_release(database, len(db.sql_files("migrations")) - 1) as old:
            old.execute(
                "INSERT INTO brain.embedding_space (provider, model, dims, state)"
                " VALUES ('hash', 'feature-hash-v1', 384, 'active')"
            )
            old.execute(
                "CREATE INDEX embedding_hnsw_1 ON brain.embedding USING hnsw ((embedding::public.vector(384))"
                " public.vector_cosine_ops) WITH (m = 16, ef_construction = 128)"
                " WHERE space_id = 1 AND ingest_seq <= 0"
            )
            db.migrate(old)
            if not old.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (TEST_ROLE,)).fetchone():
                old.execute(f"CREATE ROLE {TEST_ROLE} LOGIN PASSWORD 'test' IN ROLE brain_user")
            old.execute("SELECT brain.grant_workspace(%s, 1, 'admin')", (TEST_ROLE,))
        user = with_database(database, name, user=TEST_ROLE, password="test")
        with psycopg.connect(user, autocommit=True) as conn:
            writes_and_rebuilds(conn, database, admin_url, tmp_path)


# Indexes named as pybrain names a space's, but not built as pybrain builds them.
LOOKALIKES = {
    "another watermark than its name's": "CREATE INDEX embedding_hnsw_1_7 ON brain.embedding USING hnsw"
    " ((embedding::public.vector(384)) public.vector_cosine_ops) WITH (m = 16, ef_construction = 128)"
    " WHERE space_id = 1 AND ingest_seq <= 8",
    "a name pybrain never gives": "CREATE INDEX embedding_hnsw_1_0 ON brain.embedding USING hnsw"
    " ((embedding::public.vector(384)) public.vector_cosine_ops) WITH (m = 16, ef_construction = 128)"
    " WHERE space_id = 1 AND ingest_seq <= 0",
    "other build parameters": "CREATE INDEX embedding_hnsw_1_9 ON brain.embedding USING hnsw"
    " ((embedding::public.vector(384)) public.vector_cosine_ops) WITH (m = 4, ef_construction = 128)"
    " WHERE space_id = 1 AND ingest_seq <= 9",
    "a predicate of its own": "CREATE INDEX embedding_patterns_3 ON brain.embedding USING hnsw"
    " ((embedding::public.vector(384)) public.vector_cosine_ops) WITH (m = 16, ef_construction = 128)"
    " WHERE space_id = 3 AND pattern_rule AND pg_catalog.length(memory_id::text) > 0",
    "another access method": "CREATE INDEX embedding_hnsw_2 ON brain.embedding (memory_id)"
    " WHERE space_id = 2 AND ingest_seq <= 0",
}


def test_indexes_named_like_a_spaces_but_built_otherwise_are_refused(
    brain: Brain, database: str, admin_url: str, tmp_path: Path
) -> None:
    brain.remember("fact", "The staging bucket is emptied every Sunday night")
    got_through = []
    for n, (what, statement) in enumerate(LOOKALIKES.items()):
        name = statement.split()[2]
        with psycopg.connect(database, autocommit=True) as admin:
            admin.execute(statement)
        file = tmp_path / f"lookalike{n}.dump"
        backup.backup(database, file)  # (an honest manifest: only the schema check stands in the way)
        with psycopg.connect(database, autocommit=True) as admin:
            admin.execute(f"DROP INDEX brain.{name}")
        with new_database(admin_url, f"brain_lookalike_{os.getpid()}_{n}") as target:
            try:
                backup.restore(file, target)
                got_through.append(what)
                outcome = "RESTORED"
            except backup.RestoreRefused as refused:
                outcome = f"refused ({refused})"[:200]
        print(f"tried an index {name}, {what}: {outcome}")
    assert got_through == []


if __name__ == "__main__":
    pytest.main([__file__, "-q", "-s"])
