"""The Python client over real SQL: embeddings, error mapping, the queue."""

from __future__ import annotations

import math
import socket

import pytest
from helpers import scalar

from pybrain.client import Brain
from pybrain.db import Float8Matrix
from pybrain.embed import get_embedder
from pybrain.embed.http import HttpSettings
from pybrain.embed.ollama import OllamaEmbedder
from pybrain.errors import (
    DatabaseUnavailable,
    DuplicateMemory,
    InvalidEmbedding,
    InvalidText,
    MemoryNotFound,
    SecretDetected,
)

BASE = (
    "The nightly backup job copies the primary database to cold storage "
    "in the second region before four in the morning"
)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_remember_embeds_and_deduplicates_with_the_hash_embedder(brain: Brain) -> None:
    first = brain.remember("fact", "Nightly backup to cold storage", body=BASE)
    assert first.action == "created" and first.embedding_pending is False
    again = brain.remember("fact", "Nightly backup to cold storage", body=BASE + " daily")
    assert (again.action, again.memory_id) == ("updated", first.memory_id)
    assert again.similarity >= 0.92


def test_related_text_raises_duplicate_memory_with_detail_and_hint(brain: Brain) -> None:
    first = brain.remember("fact", "Nightly backup to cold storage", body=BASE)
    related = (
        BASE.replace("nightly", "weekly")
        .replace("cold", "archive")
        .replace("second", "third")
        .replace("four", "six")
    )
    with pytest.raises(DuplicateMemory) as caught:
        brain.remember("fact", "Weekly backup to archive storage", body=related)
    err = caught.value
    assert err.code == "BR008"
    assert err.detail["duplicate_of"] == first.memory_id
    assert 0.75 <= err.detail["similarity"] < 0.92
    assert "supersede" in err.hint


def test_secret_is_refused_before_the_embedder_sees_it(conn) -> None:
    class Recording:
        provider, model, dims, space = "hash", "feature-hash-v1", 384, "hash:feature-hash-v1"

        def __init__(self) -> None:
            self.seen: list[str] = []

        def embed_one(self, text: str) -> list[float]:
            self.seen.append(text)
            return get_embedder("hash").embed_one(text)

    spy = Recording()
    brain = Brain(conn, embedder=spy)  # type: ignore[arg-type]
    with pytest.raises(SecretDetected):
        brain.remember("fact", "Deploy key", body="AKIAIOSFODNN7EXAMPLE")
    assert spy.seen == []
    brain.remember("fact", "Deploy key lives in the vault")
    assert spy.seen == ["Deploy key lives in the vault"]


def test_embedder_down_queues_the_write_and_the_worker_completes_it(conn) -> None:
    down = OllamaEmbedder("all-minilm", settings=HttpSettings(attempts=1, retry_delay=0))
    down.base_url = f"http://127.0.0.1:{closed_port()}"
    result = Brain(conn, embedder=down).remember("fact", "Written while Ollama is down")
    assert result.action == "created" and result.embedding_pending is True
    assert "connection failed" in result.embedder_error

    worker = Brain(conn, embedder=get_embedder("hash"))
    assert [r.memory_id for r in worker.embed_pending()] == [result.memory_id]
    assert worker.embed_pending() == []
    assert scalar(conn, "SELECT count(*) FROM brain.embedding") == 1


def test_nul_bytes_are_a_clear_error(brain: Brain) -> None:
    with pytest.raises(InvalidText, match="NUL"):
        brain.remember("fact", "Has a NUL", body="before\x00after")
    assert scalar(brain.conn, "SELECT count(*) FROM brain.memory") == 0


def test_missing_memory_maps_to_its_class(brain: Brain) -> None:
    with pytest.raises(MemoryNotFound) as caught:
        brain.recall(424242)
    assert caught.value.detail == {"id": 424242}


def test_supersede_and_recall_through_the_client(brain: Brain) -> None:
    old = brain.remember("fact", "Staging database is db-1")
    new = brain.supersede(old.memory_id, "Staging database moved to db-2", "migration finished")
    assert new.action == "created"
    recalled = brain.recall(old.memory_id)
    assert recalled["current_id"] == new.memory_id and "SUPERSEDED" in recalled["banner"]
    assert brain.unsupersede(old.memory_id) == old.memory_id
    assert brain.forget(old.memory_id, "obsolete") == old.memory_id


def test_unreachable_database_is_database_unavailable(tmp_path) -> None:
    from pybrain.db import connect

    with pytest.raises(DatabaseUnavailable):
        connect(f"postgresql://nobody@/brain?host={tmp_path}&connect_timeout=2")


def test_embedding_batches_travel_as_binary_float8_arrays(conn) -> None:
    rows = [[0.1, -2.5, 1e-300], [3.0, 0.0, -0.0], [float("inf"), float("nan"), 7.25]]
    got = conn.execute("SELECT %s::float8[]", (Float8Matrix(rows),)).fetchone()[0]
    assert got[:2] == rows[:2] and got[2][0] == float("inf") and math.isnan(got[2][1])
    dims = conn.execute("SELECT array_dims(%s::float8[])", (Float8Matrix(rows),)).fetchone()[0]
    assert dims == "[1:3][1:3]"
    with pytest.raises(ValueError):  # the client refuses rows of different lengths before this
        conn.execute("SELECT %s::float8[]", (Float8Matrix([[1.0, 2.0], [3.0]]),))


def test_observe_sends_vectors_the_database_checks(brain: Brain) -> None:
    texts = ["first event of the import", "second event of the import"]
    vectors = brain.embedder.embed(texts)
    out = brain.observe(texts, embeddings=vectors)
    assert [r["action"] for r in out] == ["created", "created"]
    stored = scalar(
        brain.conn, "SELECT embedding::text FROM brain.embedding WHERE memory_id = %s", (out[1]["memory_id"],)
    )
    assert [float(x) for x in stored.strip("[]").split(",")] == pytest.approx(vectors[1], abs=1e-6)
    with pytest.raises(InvalidEmbedding):
        brain.observe(["a third event"], embeddings=[[float("nan")] * len(vectors[0])])
    with pytest.raises(InvalidEmbedding):
        brain.observe(texts, embeddings=[vectors[0], vectors[1][:10]])
