"""Memories in and out of a workspace: export and import, importers of other
tools' formats, and backups of the whole database.

One module per format: ``native`` (pybrain's JSONL export, and its Markdown
rendering), ``ownsona``, ``mem0`` (what the two share: ``exported``),
``notes`` (markdown notes with front matter), ``claude_code`` (session
transcripts), ``claude_memory`` (Claude Code's auto memory files, kept in step
by brain.ingest_documents); ``backup`` runs the
PostgreSQL client programs. Each importer only translates its format into
memory documents (docs/export-format.md); what is stored, skipped or refused
is decided by ``brain.import_memories`` and ``brain.observe_batch``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from psycopg.types.json import Jsonb

from pybrain.client import Brain
from pybrain.errors import InvalidArgument

FORMATS = ("pybrain", "ownsona", "mem0", "markdown", "claude-code", "claude-memory")


def import_documents(
    brain: Brain,
    docs: Sequence[dict[str, Any]],
    *,
    source: str | None = None,
    project: str | None = None,
    semantic_dedup: bool = False,
    trust_file: bool = False,
) -> list[dict[str, Any]]:
    """Load memory documents with brain.import_memories: one result row per document (part).

    trust_file (an admin's choice) takes pins, ratings, importance, access counts and flag
    confirmations from the documents; without it they are data only."""
    if not docs:
        return []
    return brain.call(
        "import_memories",
        docs=Jsonb([_json_safe(d) for d in docs]),
        source=source,
        project=project,
        semantic_dedup=semantic_dedup,
        trust_file=trust_file,
    )


def _json_safe(doc: Any) -> Any:
    """A document JSON can carry: one holding NaN or an infinity (Python's json reads them)
    becomes an entry the import reports as refused, instead of failing the whole batch."""
    try:
        json.dumps(doc, allow_nan=False)
    except ValueError:
        bad = {"invalid": "A number in this entry is NaN or infinite, which JSON does not allow."}
        if isinstance(doc, dict) and isinstance(doc.get("line"), int):
            bad["line"] = doc["line"]
        return bad
    return doc


def summarize(rows: Iterable[dict[str, Any]]) -> dict[str, int]:
    """Counts by action (created, skipped, rejected, folded ...)."""
    return dict(sorted(Counter(r["action"] for r in rows).items()))


def detect_format(path: Path) -> str:
    """The format of a file or folder, from its content."""
    from pybrain.transfer.claude_memory import is_memory_folder

    if is_memory_folder(path):
        return "claude-memory"
    if path.is_dir():
        if any(path.rglob("*.jsonl")) and not any(path.rglob("*.md")):
            return "claude-code"
        return "markdown"
    if path.suffix.lower() in (".md", ".markdown"):
        return "markdown"
    with path.open(encoding="utf-8") as f:
        first = f.readline().strip()
    try:
        head = json.loads(first) if first else None
    except json.JSONDecodeError:
        head = None
    if isinstance(head, dict):
        if head.get("format") == "pybrain-memories":
            return "pybrain"
        if "sessionId" in head or head.get("type") in ("user", "assistant", "summary", "system"):
            return "claude-code"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("results"), list):
        return "mem0"
    if isinstance(data, dict) and isinstance(data.get("memories"), list):
        return "ownsona"
    if isinstance(data, list) and data and isinstance(data[0], dict):
        if "memory" in data[0]:
            return "mem0"
        if "text" in data[0]:
            return "ownsona"
    raise InvalidArgument(
        f"Cannot tell the format of {path}.",
        detail={"path": str(path)},
        hint=f"Name it with --format ({', '.join(FORMATS)}).",
    )
