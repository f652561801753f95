"""A folder of markdown notes with YAML front matter (basic-memory, Obsidian).

Each ``.md`` file is one note: its front matter between ``---`` lines gives
``title`` (else the first ``# `` heading, else the file name), ``tags`` (a
list or a comma/space separated string), ``type`` (a pybrain category when
it names one: decision, meeting, person, ...; else kept in metadata) and
``permalink`` (the note's stable id: its source_ref, else its path in the
folder). Everything else in the front matter is kept in metadata.front_matter.
Notes are documents: artifact facts, keyed by source_system "markdown" and
hashed, a long note split into parts by the import.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from pathlib import Path
from typing import Any

import yaml

from pybrain.client import CATEGORIES

SOURCE_SYSTEM = "markdown"
FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


def split_front_matter(text: str) -> tuple[dict[str, Any], str, str | None]:
    """(front matter, content, the error when the front matter is not a YAML mapping)."""
    match = FRONT_MATTER.match(text)
    if not match:
        return {}, text, None
    try:
        meta = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        return {}, text, f"front matter is not YAML: {exc}".splitlines()[0]
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        return {}, text, "front matter is not a mapping of keys to values"
    return meta, text[match.end() :], None


def _tags(value: Any) -> list[str]:
    if isinstance(value, str):
        return [t.lstrip("#") for t in re.split(r"[,\s]+", value) if t.strip("#")]
    if isinstance(value, list):
        return [str(t).lstrip("#") for t in value if t is not None and str(t).strip("#")]
    return []


def _plain(value: Any) -> Any:
    """Front-matter values as JSON: dates as ISO text."""
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def document(path: Path, root: Path) -> dict[str, Any]:
    raw = path.read_bytes()
    rel = path.relative_to(root).as_posix()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return {"invalid": "The file is not UTF-8 text.", "source_ref": rel}
    meta, content, error = split_front_matter(text)
    meta = _plain(meta)
    content = content.strip()
    title = meta.pop("title", None)
    heading = re.match(r"#[ \t]+(.+)\n?", content)
    if title is None and heading:
        title = heading.group(1).strip()
    if heading and heading.group(1).strip() == str(title).strip():
        content = content[heading.end() :].strip()
    title = str(title) if title is not None else path.stem.replace("-", " ").replace("_", " ")
    kind_type = meta.pop("type", None)
    permalink = meta.pop("permalink", None)
    tags = _tags(meta.pop("tags", None))
    created = meta.get("created") or meta.get("date")
    metadata: dict[str, Any] = {"path": rel}
    if meta:
        metadata["front_matter"] = meta
    if kind_type is not None:
        metadata["type"] = kind_type
    if error:
        metadata["front_matter_error"] = error
    doc: dict[str, Any] = {
        "kind": "fact",
        "origin": "artifact",
        "category": kind_type if kind_type in CATEGORIES else "note",
        "title": title,
        "text": content or title,
        "tags": tags,
        "metadata": metadata,
        "source_system": SOURCE_SYSTEM,
        "source_ref": str(permalink) if permalink else rel,
        "source_hash": hashlib.sha256(raw).hexdigest(),
    }
    if isinstance(created, str):
        try:
            dt.datetime.fromisoformat(created)
            doc["created_at"] = created
        except ValueError:
            pass  # kept in metadata.front_matter
    return doc


def read(path: Path) -> list[dict[str, Any]]:
    """Memory documents of every .md file under path (or of path itself), by path."""
    if path.is_file():
        return [document(path, path.parent)]
    files = sorted(
        p
        for p in path.rglob("*.md")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts)
    )
    return [document(p, path) for p in files]
