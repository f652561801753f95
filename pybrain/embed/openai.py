"""Embeddings from OpenAI or any server speaking its API (`POST {base}/embeddings`)."""

from __future__ import annotations

import os
from typing import Any, ClassVar

from pybrain.embed.http import HttpEmbedder, HttpSettings

DEFAULT_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "text-embedding-3-small"


class OpenAIEmbedder(HttpEmbedder):
    provider = "openai"
    known_dims: ClassVar[dict[str, int]] = {
        "text-embedding-3-small": 1536,
        "text-embedding-3-large": 3072,
        "text-embedding-ada-002": 1536,
    }

    def __init__(self, model: str | None = None, *, settings: HttpSettings | None = None) -> None:
        url = os.environ.get("BRAIN_OPENAI_BASE_URL", "").strip() or DEFAULT_URL
        key = (
            os.environ.get("BRAIN_OPENAI_API_KEY", "").strip() or os.environ.get("OPENAI_API_KEY", "").strip()
        )
        # Local OpenAI-compatible servers often need no key.
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        super().__init__(model or DEFAULT_MODEL, url, headers=headers, secret=key or None, settings=settings)

    @property
    def endpoint(self) -> str:
        return f"{self.base_url}/embeddings"

    def _vectors(self, body: Any) -> list[Any]:
        items = list(body["data"])
        indexes = sorted(int(item["index"]) for item in items)
        if indexes != list(range(len(items))):
            raise ValueError(f"indexes {indexes} are not 0..{len(items) - 1}")
        return [item["embedding"] for item in sorted(items, key=lambda item: int(item["index"]))]

    def _unreachable_hint(self) -> str:
        return f"Check BRAIN_OPENAI_BASE_URL ({self.base_url}) and the network, or set BRAIN_EMBEDDER=hash."

    def _auth_hint(self) -> str:
        return "Set BRAIN_OPENAI_API_KEY (or OPENAI_API_KEY) to a valid API key."

    def _not_found_hint(self) -> str:
        return (
            f"Check the model name {self.model!r} in BRAIN_EMBEDDER=openai:<model>, and that "
            f"BRAIN_OPENAI_BASE_URL ({self.base_url}) includes the API prefix such as /v1."
        )
