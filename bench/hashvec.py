"""pybrain's `hash` embedder, vectorised for bulk loads.

Same vectors as pybrain.embed.hash.hash_vector (checked by `check()` on every
run), computed with a per-token cache and numpy so 100k texts take seconds.
"""

from __future__ import annotations

import hashlib
import re

import numpy as np

from pybrain.embed.hash import DIMS, hash_vector

_TOKEN = re.compile(r"\w+")
_cache: dict[str, tuple[int, float]] = {}


def _slot(token: str) -> tuple[int, float]:
    slot = _cache.get(token)
    if slot is None:
        digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
        slot = (int.from_bytes(digest[:4], "little") % DIMS, 1.0 if digest[4] & 1 else -1.0)
        _cache[token] = slot
    return slot


def vectors(texts: list[str]) -> np.ndarray:
    """One unit float32 row per text (float64 arithmetic, as the pure-Python embedder)."""
    out = np.zeros((len(texts), DIMS), dtype=np.float64)
    for row, text in enumerate(texts):
        vec = out[row]
        for token in _TOKEN.findall(text.lower()):
            index, sign = _slot(token)
            vec[index] += sign
    norms = np.sqrt((out * out).sum(axis=1))
    empty = norms == 0.0
    out[empty, 0] = 1.0
    norms[empty] = 1.0
    out /= norms[:, None]
    return out.astype(np.float32)


def check(texts: list[str]) -> None:
    """Raises unless vectors() matches pybrain's hash embedder on these texts."""
    fast = vectors(texts)
    for text, row in zip(texts, fast, strict=True):
        reference = np.asarray(hash_vector(text), dtype=np.float32)
        if not np.array_equal(reference, row):
            raise AssertionError(f"bench.hashvec differs from pybrain's hash embedder on {text!r}")
