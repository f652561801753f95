"""What the importers of other tools' JSON exports (mem0, OwnSona) share: the rows of the
file, and a row's metadata with the tool's own fields kept under its name."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pybrain.errors import InvalidArgument


def documents(
    path: Path,
    key: str,
    document: Callable[[dict[str, Any]], dict[str, Any]],
    *,
    row: str,
    what: str,
    hint: str,
) -> list[dict[str, Any]]:
    """The memory documents of the file's rows (see rows), each made by document; a row
    that is not an object becomes an invalid entry, named `row` ("A memory")."""
    return [
        document(r)
        if isinstance(r, dict)
        else {"invalid": f"{row} is a JSON object, not {type(r).__name__}."}
        for r in rows(path, key, what=what, hint=hint)
    ]


def rows(path: Path, key: str, *, what: str, hint: str) -> list[Any]:
    """The list under `key` of the JSON object in the file, or the file's bare list.
    what: what the file is not when neither is there (e.g. "a mem0 export: no results list")."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InvalidArgument(f"{path}: not JSON ({exc.msg}).", detail={"path": str(path)}) from None
    found = data.get(key) if isinstance(data, dict) else data
    if not isinstance(found, list):
        raise InvalidArgument(f"{path} is not {what}.", detail={"path": str(path)}, hint=hint)
    return found


def metadata(row: dict[str, Any], tool: str, fields: dict[str, Any]) -> dict[str, Any]:
    """The row's own metadata object (none when it is not an object), with fields under tool."""
    own = row.get("metadata") or {}
    out = dict(own) if isinstance(own, dict) else {}
    if fields:
        out[tool] = fields
    return out
