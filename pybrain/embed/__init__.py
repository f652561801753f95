"""Embedding providers: hash, local (MiniLM on onnxruntime), torch (opt-in), ollama and openai.

Importing this package stays cheap: onnxruntime, torch and requests load only
with the provider that needs them.
"""

from __future__ import annotations

import contextlib
import os
import threading

from pybrain.embed import providers
from pybrain.embed.base import Embedder
from pybrain.embed.local import local_available
from pybrain.embed.providers import PROVIDERS
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


def default_provider() -> str:
    """The provider used when none is set: local if its extra is installed, else hash."""
    return "local" if local_available() else "hash"


def get_embedder(spec: str | None = None) -> Embedder:
    """The embedder for "provider" or "provider:model", one instance per process.

    With no spec, BRAIN_EMBEDDER decides, then default_provider().
    """
    spec = (spec or os.environ.get("BRAIN_EMBEDDER", "")).strip() or default_provider()
    key = providers.parse(spec)
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
    """The provider's embedder; a model that runs on this machine behind a warm server
    process when allowed (pybrain.embed.server)."""
    embedder = providers.create(provider, model)
    if provider not in ("local", "torch"):
        return embedder
    from pybrain.embed import server

    if not server.enabled():
        return embedder
    # A CLI command gains from a warm server process (docs/embedders.md): reuse one when
    # allowed (torch takes seconds to import).
    if provider == "local":
        return server.ServedEmbedder(embedder, embedder.space)
    return server.ServedEmbedder(embedder, f"torch:{model}" if model else "torch")
