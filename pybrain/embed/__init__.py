"""Embedding providers: hash, local (MiniLM on onnxruntime), torch (opt-in), ollama and openai.

Importing this package stays cheap: onnxruntime, torch and requests load only
with the provider that needs them.
"""

from __future__ import annotations

import contextlib
import os
import threading

from pybrain.embed.base import Embedder
from pybrain.embed.local import local_available
from pybrain.errors import EmbedderError

__all__ = [
    "PROVIDERS",
    "Embedder",
    "EmbedderError",
    "clear_cache",
    "default_provider",
    "get_embedder",
    "keep_warm",
    "local_available",
]

PROVIDERS = ("hash", "local", "torch", "ollama", "openai")


def default_provider() -> str:
    """The provider used when none is set: local if its extra is installed, else hash."""
    return "local" if local_available() else "hash"


def get_embedder(spec: str | None = None) -> Embedder:
    """The embedder for "provider" or "provider:model", one instance per process.

    With no spec, BRAIN_EMBEDDER decides, then default_provider().
    """
    spec = (spec or os.environ.get("BRAIN_EMBEDDER", "")).strip() or default_provider()
    provider, _, model = spec.partition(":")
    key = (provider.strip().lower(), model.strip() or None)
    with _lock:
        embedder = _by_spec.get(key)
        if embedder is None:
            created = _create(*key)
            # "ollama" and "ollama:nomic-embed-text" name one model: share one instance.
            embedder = _by_space.setdefault(created.space, created)
            _by_spec[key] = embedder
        return embedder


def keep_warm(spec: str | None = None) -> Embedder | None:
    """For a process that lives long (`brain mcp`, `brain serve`): a model that runs on this
    machine is loaded here, in the background, and kept for the process's lifetime.

    No warm embedding server is started or used by this process: it is its own. The
    first call that embeds before the load is done waits for it (the embedder's lock).
    HTTP providers are left alone (a request at start-up would cost a paid one).
    """
    os.environ["BRAIN_EMBED_SERVER"] = "off"
    # Instances made before (opening the database may have made one, for the space it
    # registered) would use the warm server: this process makes its own from now on.
    clear_cache()
    try:
        embedder = get_embedder(spec)
    except EmbedderError:
        return None  # the first call that needs it says why
    if embedder.provider not in ("local", "torch"):
        return embedder

    def load() -> None:
        with contextlib.suppress(EmbedderError):
            embedder.embed_one("warm up")

    threading.Thread(target=load, name="pybrain-embedder-warm-up", daemon=True).start()
    return embedder


def clear_cache() -> None:
    """Forget loaded embedders, so the next get_embedder() reads the environment again."""
    with _lock:
        _by_spec.clear()
        _by_space.clear()


_lock = threading.Lock()
_by_spec: dict[tuple[str, str | None], Embedder] = {}
_by_space: dict[str, Embedder] = {}


def _create(provider: str, model: str | None) -> Embedder:
    if provider == "hash":
        from pybrain.embed.hash import HashEmbedder

        _check_fixed_model(HashEmbedder, model)
        return HashEmbedder()
    if provider == "local":
        from pybrain.embed import server
        from pybrain.embed.local import LocalEmbedder

        local = LocalEmbedder(model)
        # A CLI command gains from a warm server process (docs/embedders.md): reuse one when allowed.
        return server.ServedEmbedder(local, local.space) if server.enabled() else local
    if provider == "torch":
        from pybrain.embed import server
        from pybrain.embed.sbert import TorchEmbedder

        # torch takes seconds to import: reuse a warm server process when allowed.
        spec = f"torch:{model}" if model else "torch"
        embedder = TorchEmbedder(model)
        return server.ServedEmbedder(embedder, spec) if server.enabled() else embedder
    if provider == "ollama":
        from pybrain.embed.ollama import OllamaEmbedder

        return OllamaEmbedder(model)
    if provider == "openai":
        from pybrain.embed.openai import OpenAIEmbedder

        return OpenAIEmbedder(model)
    raise EmbedderError(
        f"Unknown embedding provider; valid providers: {', '.join(PROVIDERS)}.",
        hint="Set BRAIN_EMBEDDER to hash, local, torch[:<directory>], ollama[:<model>] or openai[:<model>].",
    )


def _check_fixed_model(cls: type[Embedder], model: str | None) -> None:
    if model is not None and model != cls.model:
        raise EmbedderError(
            f"The {cls.provider} provider has only the model {cls.model!r}.",
            hint=f"Use BRAIN_EMBEDDER={cls.provider}.",
        )
