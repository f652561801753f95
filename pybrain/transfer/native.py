"""pybrain's own export: versioned JSONL (docs/export-format.md) and a readable Markdown rendering."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import IO, Any

import psycopg
from psycopg.types.json import Jsonb

from pybrain.client import Brain
from pybrain.errors import InvalidArgument
from pybrain.render import memory_markdown

FORMAT = "pybrain-memories"
VERSION = 2  # 2: sessions, handoffs and context packs follow the memories
READS = (1, 2)
PAGE = 500


def _snapshot(brain: Brain) -> AbstractContextManager[psycopg.Cursor]:
    """One read-only REPEATABLE READ transaction in the Brain's scope: every page of an
    export sees the same database, so its links point at memories it holds."""
    return brain.transaction(isolation=psycopg.IsolationLevel.REPEATABLE_READ, read_only=True)


def documents(
    brain: Brain, *, include_vectors: bool = False, project: str | None = None, sessions: bool = False
) -> Iterator[dict[str, Any]]:
    """The header, then one document per memory by id (brain.export_header, brain.export_memories),
    and with sessions the session and handoff lines after them (brain.export_sessions)."""
    with _snapshot(brain) as cur:
        cur.execute(
            "SELECT brain.export_header(include_vectors => %s, project => %s) AS h",
            (include_vectors, project),
        )
        yield cur.fetchone()["h"]
        after = 0
        while True:
            cur.execute(
                "SELECT memory_id, doc FROM brain.export_memories(include_vectors => %s, project => %s,"
                " after_id => %s, max_results => %s)",
                (include_vectors, project, after, PAGE),
            )
            rows = cur.fetchall()
            for r in rows:
                yield r["doc"]
            if len(rows) < PAGE:
                break
            after = rows[-1]["memory_id"]
        if sessions:
            cur.execute("SELECT doc FROM brain.export_sessions(project => %s)", (project,))
            for r in cur.fetchall():
                yield r["doc"]
            cur.execute("SELECT doc FROM brain.export_packs(project => %s)", (project,))
            for r in cur.fetchall():
                yield r["doc"]


def write_jsonl(
    brain: Brain, out: IO[str], *, include_vectors: bool = False, project: str | None = None
) -> int:
    """Write the export to out (its sessions and handoffs after the memories); the number of memories."""
    count = -1
    for doc in documents(brain, include_vectors=include_vectors, project=project, sessions=True):
        out.write(json.dumps(doc, ensure_ascii=False, sort_keys=True, default=str) + "\n")
        count += "record" not in doc
    return count


def import_records(
    brain: Brain,
    records: list[dict[str, Any]],
    *,
    project: str | None = None,
    imported: list[dict[str, Any]] | None = None,
) -> list[dict]:
    """Load an export's session and handoff lines (brain.import_sessions) and its context packs
    (brain.import_packs, their listed ids mapped to the memories `imported` created), each pack
    embedded as brain.create_pack embeds it: one row per line, in the order of the lines."""
    sessions = [r for r in records if r.get("record") != "pack"]
    packs = [r for r in records if r.get("record") == "pack"]
    rows = brain.call("import_sessions", docs=Jsonb(sessions), project=project) if sessions else []
    if packs:
        id_map = {
            str(r["old_id"]): r["memory_id"]
            for r in imported or []
            if r.get("old_id") is not None and r.get("memory_id") is not None and (r.get("chunk") or 1) == 1
        }
        for r in brain.call("import_packs", docs=Jsonb(packs), id_map=Jsonb(id_map), project=project):
            if r["action"] == "created":
                p = next(x for x in brain.list_packs() if x["pack_id"] == r["pack_id"])
                brain.create_pack(
                    p["name"],
                    query=p["query"],
                    memory_ids=p["memory_ids"] or None,
                    filters=p["filters"],
                    token_budget=p["token_budget"],
                    description=p["description"],
                    project=p["project"],
                )
            rows.append(
                {
                    "item": len(sessions) + r["item"],
                    "line": "pack",
                    "old_id": r["old_id"],
                    "action": r["action"],
                    "new_id": r["pack_id"],
                    "error_code": r["error_code"],
                    "error": r["error"],
                }
            )
    return rows


class _NonFinite(ValueError):
    pass


def _non_finite(name: str) -> Any:
    raise _NonFinite(name)


def read_jsonl(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header and the memory documents of an export file; refuses other formats and versions."""
    header, docs, _ = read_export(path)
    return header, docs


def read_export(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """The header, the memory documents and the other lines (sessions, handoffs: those with a
    "record") of an export file; refuses other formats and versions."""
    header: dict[str, Any] | None = None
    docs: list[dict[str, Any]] = []
    records: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line, parse_constant=_non_finite)
            except _NonFinite as exc:
                if header is None:
                    raise InvalidArgument(
                        f"{path} is not a pybrain export: its first line is not JSON.",
                        detail={"path": str(path)},
                    ) from None
                # A line with NaN or Infinity (not JSON, though Python writes it) is refused
                # by itself, with its line number; the other lines are imported.
                docs.append({"invalid": f"{exc} is not a JSON number.", "line": number})
                continue
            except json.JSONDecodeError as exc:
                raise InvalidArgument(
                    f"{path}, line {number}: not JSON ({exc.msg}).",
                    detail={"path": str(path), "line": number},
                    hint="An export has one JSON object per line (docs/export-format.md).",
                ) from None
            if header is None:
                if not isinstance(item, dict) or item.get("format") != FORMAT:
                    raise InvalidArgument(
                        f"{path} is not a pybrain export: its first line has no format {FORMAT!r}.",
                        detail={"path": str(path)},
                        hint="Give the format of another tool's export with --format.",
                    )
                if item.get("version") not in READS:
                    version = item.get("version")
                    said = f"version {version}" if type(version) is int else "a version"
                    raise InvalidArgument(
                        f"{path} is an export of {said} this pybrain does not read; "
                        f"it reads versions {', '.join(map(str, READS))}.",
                        detail={"field": "version", "supported": list(READS)},
                        hint="Import it with the pybrain release that wrote it, or a newer one.",
                    )
                header = item
                continue
            if isinstance(item, dict):
                item["line"] = number  # named when the import refuses the line
            (records if isinstance(item, dict) and "record" in item else docs).append(item)
    if header is None:
        raise InvalidArgument(f"{path} is empty.", detail={"path": str(path)})
    return header, docs, records


# --- Markdown ----------------------------------------------------------------


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "project"


def write_markdown(brain: Brain, directory: Path, *, project: str | None = None) -> list[Path]:
    """One file per project and kind under directory; each memory with its earlier
    versions (its supersede chain, newest first) beneath it. The files written."""
    docs = list(documents(brain, project=project))
    header, docs = docs[0], docs[1:]
    by_id = {d["id"]: d for d in docs}

    def chain_end(d: dict[str, Any]) -> dict[str, Any]:
        seen = set()
        while d.get("superseded_by") in by_id and d["id"] not in seen:
            seen.add(d["id"])
            d = by_id[d["superseded_by"]]
        return d

    earlier: dict[int, list[dict[str, Any]]] = {}
    for d in docs:
        if d["state"] == "superseded":
            earlier.setdefault(chain_end(d)["id"], []).append(d)
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for d in docs:
        if d["state"] != "superseded" or chain_end(d) is d:
            groups.setdefault((d["project"], d["kind"]), []).append(d)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    sections = (
        ("active", "Current"),
        ("archived", "Archived"),
        ("tombstoned", "Forgotten"),
        ("superseded", "Superseded (their successor is not in this export)"),
    )
    for (proj, kind), items in sorted(groups.items()):
        name = f"{_slug(proj) if proj else '_global'}/{kind}s.md"
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        scope = f"project {proj}" if proj else "global"
        n_earlier = sum(len(earlier.get(d["id"], [])) for d in items)
        lines = [
            f"# {kind.capitalize()}s — {scope}",
            "",
            f"Exported from workspace {header['source']['workspace']} on {str(header['exported_at'])[:19]}: "
            f"{len(items)} memories, with {n_earlier} earlier versions.",
            "",
        ]
        for state, title in sections:
            chosen = [d for d in items if d["state"] == state]
            if not chosen:
                continue
            lines += [f"## {title}", ""]
            for d in chosen:
                lines += memory_markdown(d)
                versions = sorted(earlier.get(d["id"], []), key=lambda x: x["id"], reverse=True)
                if versions:
                    chain = " → ".join(f"#{v['id']}" for v in reversed(versions)) + f" → #{d['id']}"
                    lines += [f"Earlier versions ({chain}):", ""]
                    for v in versions:
                        lines += memory_markdown(v, "####")
        path.write_text("\n".join(lines).rstrip() + "\n", encoding="utf-8")
        written.append(path)
    return written
