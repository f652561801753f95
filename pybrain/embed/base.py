"""The interface every embedding provider implements, and its settings."""

from __future__ import annotations

import abc
import contextlib
import math
import os
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from typing import Any

from pybrain.errors import EmbedderError, EmbeddingRefused

DEFAULT_BATCH = 64

# The total time one embedding request may take, retries included, when a caller
# sets one (see deadline()); None: the provider's own (BRAIN_EMBED_DEADLINE).
_deadline: ContextVar[float | None] = ContextVar("pybrain_embed_deadline", default=None)


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Give each embedding request made inside this block `seconds` in total, retries included.

    `brain worker` embeds in the background and can wait longer than a write
    made while a person or an agent waits for it.
    """
    token = _deadline.set(seconds)
    try:
        yield
    finally:
        _deadline.reset(token)


def current_deadline() -> float | None:
    return _deadline.get()


class Embedder(abc.ABC):
    """Turns texts into vectors of one embedding space."""

    provider: str
    model: str
    dims: int

    @property
    def space(self) -> str:
        """The name stored with each vector; vectors of different spaces never mix."""
        return f"{self.provider}:{self.model}"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in the same order, sent in batches of BRAIN_EMBED_BATCH."""
        if isinstance(texts, str):
            # A str is a Sequence[str]: embedding it character by character is never meant.
            raise TypeError("embed() takes a sequence of texts; use embed_one() for one text")
        items = list(texts)
        size = env_int("BRAIN_EMBED_BATCH", DEFAULT_BATCH)
        vectors: list[list[float]] = []
        for start in range(0, len(items), size):
            batch = self._embed_batch(items[start : start + size])
            for i, vector in enumerate(batch):
                reason = _unusable(vector)
                if reason:
                    # No write stores it: the caller queues the text (or parks it, when it recurs).
                    raise EmbeddingRefused(
                        f"{self.space} returned a vector with {reason} "
                        f"(text {start + i + 1} of {len(items)}).",
                        status=None,
                        reason=f"the vector has {reason}",
                        detail={"space": self.space, "index": start + i},
                        hint="The text is kept and queued; `brain worker` tries it again.",
                    )
            vectors.extend(batch)
        return vectors

    def embed_one(self, text: str) -> list[float]:
        return self.embed([text])[0]

    @abc.abstractmethod
    def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        """Vectors for one non-empty batch."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.space}>"


# A vector whose length is below this has no direction: cosine similarity is undefined
# for it (pgvector answers NaN), so it is refused like a NaN one.
MIN_NORM = 1e-6


def _unusable(vector: list[float]) -> str | None:
    """Why a vector cannot be stored or searched with, or None."""
    squares = math.fsum(x * x for x in vector)
    if not math.isfinite(squares):  # a NaN or an infinity makes the sum one
        return "NaN or infinite values"
    if squares < MIN_NORM * MIN_NORM:
        return "a length of zero or nearly zero"
    return None


def env_int(name: str, default: int, *, minimum: int = 1) -> int:
    return _env_number(name, default, int, minimum, f"a whole number of at least {minimum}", f"{default}")


def env_float(name: str, default: float, *, minimum: float = 0.0) -> float:
    return _env_number(name, default, float, minimum, f"a number of at least {minimum:g}", f"{default:g}")


def _env_number(
    name: str, default: Any, kind: Callable[[str], Any], minimum: Any, what: str, shown: str
) -> Any:
    """The number in environment variable name (default when unset or blank); EmbedderError
    when it is not `what` (one below minimum, or NaN, is not)."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        value = None
    if value is None or not value >= minimum:  # `not >=` also rejects NaN
        raise EmbedderError(f"{name} must be {what}.", hint=f"Fix or unset {name} (default {shown}).")
    return value
