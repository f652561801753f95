"""The packaged MiniLM model, loaded for real with the network cut off."""

from __future__ import annotations

import math
import os
import socket
from collections.abc import Iterator
from importlib.util import find_spec
from typing import Any

import pytest

from pybrain.embed import Embedder, clear_cache, get_embedder

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(
        find_spec("sentence_transformers") is None,
        reason="sentence-transformers is not installed: pip install 'pybrain[local]'",
    ),
]

DISK = "The database server ran out of disk space"
DISK_AGAIN = "PostgreSQL failed because the disk was full"
MANGO = "My favourite fruit is a ripe mango"


def _no_network(*args: Any, **kwargs: Any) -> Any:
    raise OSError("network access is disabled in this test")


@pytest.fixture(scope="module")
def local() -> Iterator[Embedder]:
    """The local embedder, loaded while every network connection fails."""
    with pytest.MonkeyPatch.context() as patch:
        # The embedder itself must switch the Hugging Face libraries offline.
        patch.delenv("HF_HUB_OFFLINE", raising=False)
        patch.delenv("TRANSFORMERS_OFFLINE", raising=False)
        patch.setenv("BRAIN_EMBED_SERVER", "off")  # load here, not in a background server
        patch.setattr(socket.socket, "connect", _no_network)
        patch.setattr(socket.socket, "connect_ex", _no_network)
        patch.setattr(socket, "getaddrinfo", _no_network)
        clear_cache()
        embedder = get_embedder("local")
        embedder.embed_one("warm up")
        assert os.environ["HF_HUB_OFFLINE"] == "1"
        assert os.environ["TRANSFORMERS_OFFLINE"] == "1"
        yield embedder
    clear_cache()


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_loads_offline(local: Embedder) -> None:
    import huggingface_hub.constants

    assert huggingface_hub.constants.HF_HUB_OFFLINE
    assert (local.provider, local.model, local.dims) == ("local", "all-MiniLM-L6-v2", 384)
    assert local.space == "local:all-MiniLM-L6-v2"


def test_vectors_are_normalised(local: Embedder) -> None:
    vectors = local.embed([DISK, MANGO, ""])
    assert [len(v) for v in vectors] == [384, 384, 384]
    assert all(math.isclose(sum(x * x for x in v), 1.0, rel_tol=1e-4) for v in vectors)
    assert all(isinstance(x, float) for x in vectors[0])
    assert local.embed([]) == []


def test_related_sentences_score_higher(local: Embedder) -> None:
    disk, disk_again, mango = local.embed([DISK, DISK_AGAIN, MANGO])
    related = cosine(disk, disk_again)  # measured 0.575
    unrelated = max(cosine(disk, mango), cosine(disk_again, mango))  # measured 0.088
    assert related > 0.4
    assert unrelated < 0.2
    assert related > unrelated + 0.3


def test_batches_match_single_calls(local: Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    texts = [f"incident {i}: replica lag on db-{i % 3}" for i in range(10)]
    monkeypatch.setenv("BRAIN_EMBED_BATCH", "4")
    batched = local.embed(texts)
    single = local.embed_one(texts[7])
    assert max(abs(x - y) for x, y in zip(batched[7], single, strict=True)) < 1e-5


def test_loaded_once_per_process(local: Embedder) -> None:
    model = local._model  # type: ignore[attr-defined]
    assert model is not None
    again = get_embedder("local")
    assert again is local
    again.embed_one("still the same model")
    assert again._model is model  # type: ignore[attr-defined]
