"""Feature hashing: a deterministic, dependency-free embedder for tests and fallback."""

from __future__ import annotations

import hashlib
import math
import re

from pybrain.embed.base import Embedder

DIMS = 384
_TOKEN = re.compile(r"\w+")


class HashEmbedder(Embedder):
    """Bag of words hashed into 384 signed buckets; cosine tracks word overlap."""

    provider = "hash"
    model = "feature-hash-v1"
    dims = DIMS

    def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        return [hash_vector(text) for text in texts]


def hash_vector(text: str) -> list[float]:
    vector = [0.0] * DIMS
    for token in _TOKEN.findall(text.lower()):
        # blake2b, not hash(): str hashes are salted per process, vectors must not be.
        digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
        index = int.from_bytes(digest[:4], "little") % DIMS
        vector[index] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(value * value for value in vector))
    if norm == 0.0:
        # No tokens (or tokens that cancel out): cosine against a zero vector is undefined.
        vector[0] = 1.0
        return vector
    return [value / norm for value in vector]
