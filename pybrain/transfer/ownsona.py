"""OwnSona's `export_memories` JSON: the rows of its single memories table.

The shape (its memories table, seeds/002): ``{"memories": [...]}`` or a bare
list, each row with id, user_id, text, tags, importance, source_provider,
source_client, source_conversation_id, embedding_provider, embedding_model,
created_at, updated_at, deleted_at, metadata, record_version, expires_at,
last_confirmed_at, forget_reason and replaced_by_id. A soft-deleted row
(deleted_at set) is imported as a tombstoned memory, replaced_by_id kept as
its link; the embedding is left out (another model's space).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pybrain.transfer import exported

SOURCE_SYSTEM = "ownsona"


def read(path: Path) -> list[dict[str, Any]]:
    """Memory documents for brain.import_memories."""
    return exported.documents(
        path,
        "memories",
        document,
        row="A memory row",
        what="an OwnSona export: no list of memories",
        hint='OwnSona\'s export_memories writes {"memories": [...]} or a list of memory rows.',
    )


def document(row: dict[str, Any]) -> dict[str, Any]:
    provenance = {
        k: row[k]
        for k in (
            "user_id",
            "source_provider",
            "source_client",
            "source_conversation_id",
            "embedding_provider",
            "embedding_model",
        )
        if row.get(k) is not None
    }
    metadata = exported.metadata(row, "ownsona", provenance)
    doc: dict[str, Any] = {
        "id": row.get("id"),
        "kind": "fact",
        "origin": "explicit",
        "text": row.get("text"),
        "tags": row.get("tags") or [],
        "metadata": metadata,
        "source_system": SOURCE_SYSTEM,
        "source_ref": None if row.get("id") is None else f"memories/{row['id']}",
        "source_agent": row.get("source_client"),
        "state": "tombstoned" if row.get("deleted_at") else "active",
    }
    for key in (
        "importance",
        "created_at",
        "updated_at",
        "record_version",
        "expires_at",
        "last_confirmed_at",
        "forget_reason",
    ):
        if row.get(key) is not None:
            doc[key] = row[key]
    if row.get("deleted_at"):
        doc["forgotten_at"] = row["deleted_at"]
        doc["forget_reason"] = row.get("forget_reason") or "deleted in OwnSona"
        doc["replaced_by"] = row.get("replaced_by_id")
    return doc
