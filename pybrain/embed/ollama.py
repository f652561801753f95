"""Embeddings from an Ollama server (`POST /api/embed`)."""

from __future__ import annotations

import os
from typing import Any, ClassVar

from pybrain.embed.http import HttpEmbedder, HttpSettings

DEFAULT_URL = "http://localhost:11434"
DEFAULT_MODEL = "nomic-embed-text"


class OllamaEmbedder(HttpEmbedder):
    provider = "ollama"
    known_dims: ClassVar[dict[str, int]] = {
        "nomic-embed-text": 768,
        "mxbai-embed-large": 1024,
        "all-minilm": 384,
        "bge-m3": 1024,
    }

    def __init__(self, model: str | None = None, *, settings: HttpSettings | None = None) -> None:
        # Ollama reads "name" as "name:latest"; one spelling keeps one embedding space.
        name = (model or DEFAULT_MODEL).removesuffix(":latest")
        url = os.environ.get("BRAIN_OLLAMA_URL", "").strip() or DEFAULT_URL
        super().__init__(name, url, settings=settings)

    @property
    def endpoint(self) -> str:
        return f"{self.base_url}/api/embed"

    def _vectors(self, body: Any) -> list[Any]:
        return list(body["embeddings"])

    def _unreachable_hint(self) -> str:
        return (
            f"Is Ollama running at {self.base_url}? Start it with `ollama serve`, "
            "set BRAIN_OLLAMA_URL, or set BRAIN_EMBEDDER=hash."
        )

    def _auth_hint(self) -> str:
        return f"Ollama itself has no authentication: check what answers at {self.base_url}."

    def _not_found_hint(self) -> str:
        return (
            f"Pull the model with `ollama pull {self.model}` (Ollama 0.3.4 or newer "
            "is needed for /api/embed), or check the name in BRAIN_EMBEDDER."
        )
