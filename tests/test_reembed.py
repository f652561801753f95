"""Moving to another embedding model: fill a new space, resume after interruption, switch, drop."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from pybrain.cli import main
from pybrain.client import Brain
from pybrain.embed import clear_cache, get_embedder
from pybrain.errors import InvalidTransition

SERVICES = ["billing", "search", "auth", "mailer", "scheduler", "gateway", "ledger", "reports"]


@pytest.fixture
def fake_model(server, monkeypatch):
    """An Ollama model 'fake-8' (8 dims) served by the local fake server."""
    server.dims = 8
    monkeypatch.setenv("BRAIN_EMBED_DIMS", "8")
    clear_cache()
    yield get_embedder("ollama:fake-8")
    clear_cache()


@pytest.fixture
def filled(conn) -> list[tuple[int, str]]:
    conn.execute(
        "SELECT brain.use_embedding_space('hash', 'feature-hash-v1', 384, "
        "near_identical => 1.0, related => 1.0)"
    )
    brain = Brain(conn, embedder=get_embedder("hash"))
    out = []
    for name in SERVICES:
        headline = f"The {name} service runs on its own host"
        out.append((brain.remember("fact", headline).memory_id, headline))
    return out


def all_found_by_vector(brain: Brain, memories: list[tuple[int, str]]) -> bool:
    for memory_id, headline in memories:
        hits = brain.search(headline, max_results=3)
        if not any(h["id"] == memory_id and h["vector_rank"] == 1 for h in hits):
            return False
    return True


def test_reembed_interrupted_and_resumed_keeps_everything_searchable(conn, filled, fake_model) -> None:
    old = Brain(conn, embedder=get_embedder("hash"))
    space = old.use_embedding_space(fake_model)
    assert (space.name, space.state) == ("ollama:fake-8", "building")

    assert old.reembed_batch(fake_model, batch=3) == 3  # then the process is interrupted
    progress = old.embedding_progress("ollama:fake-8")
    assert (progress["embedded"], progress["pending"]) == (3, 5)
    assert all_found_by_vector(old, filled), "search still uses the complete old space"
    with pytest.raises(InvalidTransition, match="still misses 5 embeddings"):
        old.activate_space("ollama:fake-8")

    while old.reembed_batch(fake_model, batch=3):  # resumed
        pass
    switched = old.activate_space("ollama:fake-8")
    assert (switched["state"], switched["previous"]) == ("active", "hash:feature-hash-v1")

    new = Brain(conn)  # embeds with whatever the active space is
    assert new.embedder.space == "ollama:fake-8"
    assert all_found_by_vector(new, filled)
    dropped = new.drop_space("hash:feature-hash-v1")
    assert dropped["embeddings_removed"] == len(SERVICES)
    assert conn.execute("SELECT to_regclass('brain.embedding_hnsw_1')").fetchone()[0] is None
    with pytest.raises(InvalidTransition):
        new.drop_space("ollama:fake-8")


def test_writes_during_a_reembed_go_to_the_active_space_and_join_the_new_one(
    conn, filled, fake_model
) -> None:
    brain = Brain(conn, embedder=get_embedder("hash"))
    brain.use_embedding_space(fake_model)
    while brain.reembed_batch(fake_model):
        pass
    late = brain.remember("fact", "The archive service was added late")
    assert late.embedding_pending is False
    assert brain.embedding_progress("ollama:fake-8")["pending"] == 1
    assert brain.reembed_batch(fake_model) == 1
    assert brain.activate_space("ollama:fake-8")["pending"] == 0


def test_reembed_command(cli_env, filled, fake_model) -> None:
    r = CliRunner().invoke(
        main,
        ["reembed", "--to", "ollama:fake-8", "--batch", "5", "--drop-old", "--json"],
        catch_exceptions=False,
    )
    out = json.loads(r.stdout)
    assert out["progress"]["embedded"] == len(SERVICES) and out["activated"]["state"] == "active"
    assert out["dropped"] == {"space": "hash:feature-hash-v1", "embeddings_removed": len(SERVICES)}
