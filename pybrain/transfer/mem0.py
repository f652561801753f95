"""A mem0 memory export: the JSON of `Memory.get_all()` / `GET /v1/memories/`.

The documented shape: ``{"results": [{"id", "memory", "hash", "metadata",
"created_at", "updated_at", "user_id", "agent_id", "run_id", "app_id",
"categories"}, ...]}`` (older releases return the bare list). Each memory
becomes a fact keyed by source_system "mem0" and its id, with mem0's hash as
source_hash; the scope ids and categories go into metadata.mem0, the
categories also into tags.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pybrain.transfer import exported

SOURCE_SYSTEM = "mem0"


def read(path: Path) -> list[dict[str, Any]]:
    return exported.documents(
        path,
        "results",
        document,
        row="A memory",
        what="a mem0 export: no results list",
        hint='mem0\'s get_all returns {"results": [{"id": ..., "memory": ...}, ...]}.',
    )


def document(row: dict[str, Any]) -> dict[str, Any]:
    scope = {
        k: row[k]
        for k in ("user_id", "agent_id", "run_id", "app_id", "actor_id", "role", "categories")
        if row.get(k) not in (None, [], "")
    }
    metadata = exported.metadata(row, "mem0", scope)
    doc: dict[str, Any] = {
        "kind": "fact",
        "origin": "explicit",
        "text": row.get("memory"),
        "tags": [c for c in row.get("categories") or [] if isinstance(c, str)],
        "metadata": metadata,
        "source_system": SOURCE_SYSTEM,
        "source_ref": row.get("id"),
        "source_hash": row.get("hash"),
    }
    for key in ("created_at", "updated_at"):
        if row.get(key):
            doc[key] = row[key]
    return doc
