"""`brain ingest`: documents kept in step with their source (docs/ingest.md).

Python reads the files and computes embeddings; brain.ingest_documents decides
everything else. One run is:

1. the listing (refs and hashes, no text) in one call, with the scopes whose
   listing is complete: the database answers which documents are unchanged,
   renamed (moved there, history kept) or removed at source (tombstoned), and
   which are new or changed and need their text;
2. the texts of those, in batches: a check_only call chunks them and says which
   chunks to embed (unchanged chunks need none), then the batch is written
   with the embeddings of those chunks alone, and the chunks the check
   returned (so they are not cut twice).

With dry_run every call is check_only: the report says what would change and
nothing is written or embedded.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pybrain import db
from pybrain.errors import BrainError, EmbedderError
from pybrain.ingest.walk import Listing, Problem, collect
from pybrain.worker import Outcomes, drain_queue, settle

__all__ = ["Report", "collect", "ingest", "run"]

log = logging.getLogger("pybrain")

# The text sent per call: big enough to keep the calls few, small enough to
# show progress and to keep one transaction short.
BATCH_CHARS = 200_000
BATCH_DOCUMENTS = 200


@dataclass
class Report:
    """What a run did (or, dry, would do): counts of documents and chunks by action."""

    dry_run: bool
    documents: Counter = field(default_factory=Counter)  # unchanged renamed new changed removed rejected
    chunks: Counter = field(default_factory=Counter)  # new changed unchanged removed duplicate
    redacted: int = 0  # documents stored with a secret redacted
    problems: list[Problem] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    embedded: int = 0  # texts sent to the embedder
    # chunks stored without a vector (the embedder failed): `brain worker` embeds them
    embedding_queued: int = 0
    seconds: float = 0.0
    embed_seconds: float = 0.0

    def summary(self) -> dict[str, Any]:
        return {
            "dry_run": self.dry_run,
            "documents": {k: self.documents.get(k, 0) for k in _DOC_ACTIONS},
            "chunks": {k: self.chunks.get(k, 0) for k in _CHUNK_ACTIONS},
            "redacted": self.redacted,
            "problems": [{"path": p.path, "message": p.message, "code": p.code} for p in self.problems],
            "skipped": len(self.skipped),
            "embedded": self.embedded,
            "embedding_queued": self.embedding_queued,
            "seconds": round(self.seconds, 3),
            "embed_seconds": round(self.embed_seconds, 3),
        }


_DOC_ACTIONS = ("new", "changed", "unchanged", "renamed", "removed", "rejected")
_CHUNK_ACTIONS = ("new", "changed", "unchanged", "removed", "duplicate")

Progress = Callable[[int, int, Report], None]


def _batches(docs: Sequence[Any]) -> list[list[Any]]:
    out: list[list[Any]] = []
    size = 0
    for d in docs:
        if not out or size + len(d.text) > BATCH_CHARS or len(out[-1]) >= BATCH_DOCUMENTS:
            out.append([])
            size = 0
        out[-1].append(d)
        size += len(d.text)
    return out


def _count(report: Report, rows: list[dict[str, Any]]) -> None:
    for r in rows:
        if r["chunk"] is None:
            report.documents[r["action"]] += 1
            if r.get("redacted"):
                report.redacted += 1
        else:
            report.chunks[r["action"]] += 1
    report.rows += rows


def run(
    brain: Any,
    listing: Listing,
    *,
    source_system: str = "files",
    project: str = "",
    dry_run: bool = False,
    source_agent: str | None = None,
    progress: Progress | None = None,
) -> Report:
    """Ingest a listing (pybrain.ingest.collect) into brain's workspace."""
    started = time.perf_counter()
    report = Report(dry_run=dry_run, problems=list(listing.problems), skipped=list(listing.skipped))
    common = {"source_system": source_system, "project": project, "source_agent": source_agent}
    by_ref = {d.ref: d for d in listing.documents}
    total = len(listing.documents)

    # 1. The listing: unchanged, renamed and removed are settled here.
    rows = _call(
        brain,
        [d.as_json(with_text=False) for d in listing.documents],
        scopes=listing.scopes,
        check_only=dry_run,
        **common,
    )
    need = [by_ref[r["ref"]] for r in rows if r["chunk"] is None and r["action"] in ("new", "changed")]
    _count(report, [r for r in rows if not (r["chunk"] is None and r["action"] in ("new", "changed"))])
    done = total - len(need)
    if not dry_run and any(r["chunk"] is None and r["action"] == "renamed" for r in rows):
        # A chunk is embedded with its document's ref: the database queued the chunks of
        # renamed documents for new vectors, made here as `brain worker` would.
        _embed_queued(brain, report)
    if progress:
        progress(done, total, report)

    # 2. The texts of new and changed documents, batch by batch.
    for batch in _batches(need):
        docs = [d.as_json(with_text=True) for d in batch]
        checked = _call(brain, docs, check_only=True, **common)
        if dry_run:
            _count(report, checked)
        else:
            # The chunks go back with their texts, so the database does not cut them again.
            chunks: dict[str, list[dict[str, Any]]] = {}
            for r in checked:
                if r["chunk"] is not None and r["action"] != "removed":
                    chunks.setdefault(r["ref"], []).append(
                        {"headline": r["headline"], "section": r["section"], "body": r["body"]}
                    )
            for doc in docs:
                if doc["ref"] in chunks:
                    doc["chunks"] = chunks[doc["ref"]]
            inputs = [r["embedding_input"] for r in checked if r["embedding_input"] is not None]
            vectors = None
            if inputs:
                clock = time.perf_counter()
                try:
                    vectors = brain.embedder.embed(inputs)
                    report.embedded += len(inputs)
                except EmbedderError as exc:
                    log.warning("embedding failed, the chunks are queued for `brain worker`: %s", exc)
                    report.embedding_queued += len(inputs)
                finally:
                    report.embed_seconds += time.perf_counter() - clock
            written = _call(
                brain,
                docs,
                embeddings=db.Float8Matrix(vectors) if vectors else None,
                embedding_space=brain.embedder.space if vectors else None,
                **common,
            )
            _count(report, written)
        done += len(batch)
        if progress:
            progress(done, total, report)
    if not dry_run:
        # Large batches left their vectors out of the HNSW index: index them now,
        # as `brain worker` would, so a run leaves nothing waiting.
        settle(brain, queue=False)
    report.seconds = time.perf_counter() - started
    return report


def _call(brain: Any, docs: list[dict[str, Any]], **kwargs: Any) -> list[dict[str, Any]]:
    """brain.ingest_documents; a call the role's statement_timeout cancelled (SQLSTATE 57014)
    is said as such, with what it carried, instead of as the server's bare message."""
    try:
        return brain.ingest_documents(docs, **kwargs)
    except BrainError as exc:
        if not (isinstance(exc.detail, dict) and exc.detail.get("sqlstate") == "57014"):
            raise
        chars = sum(len(d.get("text") or "") for d in docs)
        raise BrainError(
            f"brain.ingest_documents was cancelled by the statement timeout ({len(docs)} documents, "
            f"{chars:,} characters of text); nothing of this batch was written.",
            detail={"sqlstate": "57014", "documents": len(docs), "characters": chars},
            hint='Split the largest documents (docs/ingest.md, "How large"), or run again when the '
            "database is less busy.",
        ) from exc


def _add_embedded(report: Report, done: Outcomes) -> None:
    """A batch's new vectors (not those folded or merged into another memory), as they are done."""
    report.embedded += done.embedded - done.updated - done.skipped


def _embed_queued(brain: Any, report: Report) -> None:
    clock = time.perf_counter()
    try:
        drain_queue(brain, each=lambda done: _add_embedded(report, done))
    except EmbedderError as exc:
        log.warning("embedding failed, the chunks are queued for `brain worker`: %s", exc)
    finally:
        report.embed_seconds += time.perf_counter() - clock


def ingest(
    brain: Any,
    paths: Sequence[str],
    *,
    root: Path | str | None = None,
    stdin_ref: str = "stdin",
    read_stdin: Callable[[], bytes] | None = None,
    **kwargs: Any,
) -> Report:
    """Collect paths (files, folders, globs, '-' for standard input) and ingest them."""
    listing = collect(list(paths), root=root, stdin_ref=stdin_ref, read_stdin=read_stdin)
    return run(brain, listing, **kwargs)
