"""The typed methods of embedding: re-embedding into another space, the queue of
memories waiting for their embedding, and the HNSW index's stragglers."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import Any

from pybrain.api.core import BrainCore, WriteResult
from pybrain.api.transport import run_each
from pybrain.embed import Embedder
from pybrain.errors import EmbeddingRefused

log = logging.getLogger("pybrain")


class Embeddings(BrainCore):
    """The calls about embeddings (see the module's text)."""

    # --- re-embedding ---------------------------------------------------------

    def embedding_progress(self, space: str | None = None) -> dict[str, Any]:
        return self.value("embedding_progress", embedding_space=space)

    def reembed_batch(self, target: Embedder, batch: int = 64) -> int:
        """Embed one batch of memories missing from target's space; the number done (embedded,
        or refused by the provider and reported to brain.embedding_failed)."""
        rows = self.call("pending_embeddings", embedding_space=target.space, max_results=batch)
        if not rows:
            return 0
        done = _embed_rows(target, rows)
        for r, _, refused in done:
            if refused is not None:
                self.embedding_failed(r["memory_id"], refused, embedding_space=target.space)
        run_each(
            self,
            "attach_embedding",
            "SELECT brain.attach_embedding(memory_id => %s, embedding => %s, embedding_space => %s)",
            [(r["memory_id"], list(v), target.space) for r, v, _ in done if v is not None],
        )
        return len(rows)

    def activate_space(self, space: str) -> dict[str, Any]:
        result = self.value("activate_embedding_space", embedding_space=space)
        self._embedder = None  # the next write or search embeds with the new active model
        return result

    def drop_space(self, space: str) -> dict[str, Any]:
        return self.value("drop_embedding_space", embedding_space=space)

    # --- the embedding queue -----------------------------------------------

    def pending(self, max_results: int = 64) -> list[dict[str, Any]]:
        return self.call("pending_embeddings", embedding_space=self.embedder.space, max_results=max_results)

    def attach_embedding(self, memory_id: int, vector: Sequence[float]) -> WriteResult:
        (row,) = self.call(
            "attach_embedding",
            memory_id=memory_id,
            embedding=list(vector),
            embedding_space=self.embedder.space,
        )
        return WriteResult(**row)

    def index_vectors(self, max_rows: int = 1000) -> dict[str, Any]:
        """Index the vectors that large batches left out of the active space's HNSW index
        (brain.index_vectors): what was done, and how many still wait."""
        return self.value("index_vectors", max_rows=max_rows)

    def write_outcomes(self, memory_ids: Sequence[int]) -> list[dict[str, Any]]:
        """The final outcome of memories a write reported (brain.write_outcomes)."""
        return self.call("write_outcomes", memory_ids=list(memory_ids)) if memory_ids else []

    def index_waiting(self) -> Iterator[dict[str, Any]]:
        """brain.index_vectors step by step until it has nothing to do, or the table is
        busy (another time); each step's result. Nothing without an active space."""
        if self.active_space() is None:
            return
        while (done := self.index_vectors())["action"] not in ("none", "busy"):
            yield done

    def embed_pending(self, batch: int = 64) -> list[WriteResult]:
        """Embed one batch of queued memories; [] when the queue is empty.

        A text the provider refuses (or answers with a non-finite vector) is
        reported to brain.embedding_failed, which decides when it is tried again
        and when it is parked; its result has action 'failed' or 'parked' and the
        rows behind it go on. An outage (unreachable, deadline, 5xx) raises
        EmbedderError and reports nothing: no text is to blame.
        """
        rows = self.pending(batch)
        if not rows:
            return []
        out = []
        for r, vector, refused in _embed_rows(self.embedder, rows):
            if refused is None:
                out.append(self.attach_embedding(r["memory_id"], vector))
                continue
            failure = self.embedding_failed(r["memory_id"], refused)
            action = "parked" if failure["parked"] else "failed"
            out.append(WriteResult(action, r["memory_id"], None, None, True, None, refused.reason))
        return out

    def embedding_failed(
        self, memory_id: int, refused: EmbeddingRefused, embedding_space: str | None = None
    ) -> dict[str, Any]:
        """Report a refused text (brain.embedding_failed): its attempts, whether it is parked,
        and when it is due again."""
        (row,) = self.call(
            "embedding_failed",
            memory_id=memory_id,
            error=refused.reason,
            status=refused.status,
            embedding_space=embedding_space or self.embedder.space,
        )
        return row

    def failed_embeddings(self, space: str | None = None, max_results: int = 50) -> list[dict[str, Any]]:
        return self.call("failed_embeddings", embedding_space=space, max_results=max_results)

    def retry_failed_embeddings(self, space: str | None = None) -> int:
        """Make parked and waiting texts due again (brain.retry_failed_embeddings)."""
        return self.value("retry_failed_embeddings", embedding_space=space)


def _embed_rows(
    embedder: Embedder, rows: list[dict[str, Any]]
) -> list[tuple[dict[str, Any], list[float] | None, EmbeddingRefused | None]]:
    """Each queued row with its vector, or with the provider's refusal of its text.

    The batch goes in one request; when the provider refuses it, each text is
    sent alone to find the ones it refuses. Outages raise EmbedderError.
    """
    try:
        vectors = embedder.embed([r["embedding_input"] for r in rows])
        return [(r, v, None) for r, v in zip(rows, vectors, strict=True)]
    except EmbeddingRefused as exc:
        if len(rows) == 1:
            return [(rows[0], None, exc)]
    out: list[tuple[dict[str, Any], list[float] | None, EmbeddingRefused | None]] = []
    for r in rows:
        try:
            out.append((r, embedder.embed_one(r["embedding_input"]), None))
        except EmbeddingRefused as exc:
            out.append((r, None, exc))
    return out
