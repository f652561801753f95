"""Each provider's embedder, made from its name and model: the one place they are built.

pybrain.embed keeps one instance per spec and puts a model that runs on this machine
behind a warm server process (pybrain.embed.server); the server itself makes its
model here, and so never imports pybrain.embed.
"""

from __future__ import annotations

from pybrain.embed.base import Embedder
from pybrain.errors import EmbedderError

PROVIDERS = ("hash", "local", "torch", "ollama", "openai")


def parse(spec: str) -> tuple[str, str | None]:
    """(provider, model) of "provider" or "provider:model"."""
    provider, _, model = spec.partition(":")
    return provider.strip().lower(), model.strip() or None


def create(provider: str, model: str | None) -> Embedder:
    """A new embedder of the provider (and model)."""
    if provider == "hash":
        from pybrain.embed.hash import HashEmbedder

        _check_fixed_model(HashEmbedder, model)
        return HashEmbedder()
    if provider == "local":
        from pybrain.embed.local import LocalEmbedder

        return LocalEmbedder(model)
    if provider == "torch":
        from pybrain.embed.sbert import TorchEmbedder

        return TorchEmbedder(model)
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
