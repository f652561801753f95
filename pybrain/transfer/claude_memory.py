"""Claude Code's auto memory: ``MEMORY.md`` and the topic files beside it
(``~/.claude/projects/<project-slug>/memory/``), kept in step with memory.

The reader only cuts each file into items: a list item (with the lines that
continue it) or a paragraph is one item, under the path of the headings above
it (its section, and its headline). The files go to
brain.ingest_documents as documents (source_system "claude-memory", ref the
file's name in the memory folder) with those items as their chunks, so the
database decides as for any ingested document: an unchanged item costs
nothing, a changed item supersedes the old item of its section, an item gone
from its file, or a topic file gone from the folder, is tombstoned ("removed
at source"), and an item repeating an active memory of the project is not
stored again (docs/hooks.md, "Beside Claude Code's auto memory").
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path

from pybrain.ingest.walk import MAX_BYTES, Document, Listing, Problem

SOURCE_SYSTEM = "claude-memory"
INDEX = "MEMORY.md"

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_ITEM = re.compile(r"^(?:[-*+]|\d+[.)])[ \t]+(.*)$")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n.*?\r?\n---[ \t]*(?:\r?\n|\Z)", re.S)


def is_memory_folder(path: Path) -> bool:
    """Whether path is an auto memory folder (it holds MEMORY.md) or its MEMORY.md."""
    return path.name == INDEX if path.is_file() else (path / INDEX).is_file()


def items(text: str, name: str = INDEX) -> list[tuple[int, dict[str, str]]]:
    """(line number, chunk) of each item of a memory file, in order: headed, as
    brain.chunk_text heads a chunk under headings, by its heading path (else the file's
    name), its text the item's."""
    out: list[tuple[int, dict[str, str]]] = []
    skip = _FRONT_MATTER.match(text)
    offset = text[: skip.end()].count("\n") if skip else 0
    lines = text[skip.end() if skip else 0 :].splitlines()
    path: list[str] = []
    current: list[str] = []
    start = 0
    fence: str | None = None

    def close() -> None:
        nonlocal current
        if current:
            first = _ITEM.match(current[0].strip())
            lead = (first.group(1) if first else current[0]).strip()
            body = "\n".join([lead, *current[1:]]).strip()
            out.append((start, {"section": " > ".join(path), "body": body}))
        current = []

    for n, line in enumerate(lines, start=offset + 1):
        if fence is not None:
            current.append(line)
            if line.strip().startswith(fence):
                fence = None
            continue
        opening = _FENCE.match(line)
        if opening:
            if not current:
                start = n
            current.append(line)
            fence = opening.group(1)
            continue
        heading = _HEADING.match(line)
        if heading:
            close()
            level = len(heading.group(1))
            path[level - 1 :] = [heading.group(2)]
            continue
        if not line.strip():
            close()
            continue
        if _ITEM.match(line) and not line[:1].isspace():
            close()
        if not current:
            start = n
        current.append(line)
    close()
    for _, c in out:
        c["headline"] = c["section"] or name
    return [(n, c) for n, c in out if c["body"]]


def collect(path: Path) -> tuple[Listing, dict[tuple[str, int], int]]:
    """The memory files of a folder (MEMORY.md and the topic files beside it) or one file,
    as documents cut into items; and the line each item starts on, by (ref, chunk number).
    A folder's listing is complete (scope ''): a topic file gone from it is removed at source."""
    listing = Listing()
    lines: dict[tuple[str, int], int] = {}
    if path.is_dir():
        files = sorted(p for p in path.glob("*.md") if not p.name.startswith("."))
        listing.scopes = [""]
    else:
        files = [path]
    for file in files:
        raw = _read(file, listing)
        if raw is None:
            continue
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            listing.problems.append(Problem(str(file), f"not UTF-8 text ({exc.reason} at byte {exc.start})"))
            continue
        found = items(text, file.name)
        if not found:
            listing.skipped.append(str(file))
            continue
        ref = file.name
        for k, (line, _) in enumerate(found, start=1):
            lines[(ref, k)] = line
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        listing.documents.append(Document(ref, "markdown", text, digest, str(file), [c for _, c in found]))
    return listing, lines


def _read(file: Path, listing: Listing) -> bytes | None:
    """A regular file's bytes, up to MAX_BYTES (checked on the open file), else None (said why)."""
    try:
        fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        listing.problems.append(Problem(str(file), f"cannot be read ({exc.strerror or exc})"))
        return None
    with os.fdopen(fd, "rb") as stream:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            listing.problems.append(Problem(str(file), "not a regular file"))
            return None
        raw = stream.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:
        listing.problems.append(
            Problem(str(file), f"over the {MAX_BYTES:,} bytes a document may be", "BR030")
        )
        return None
    return raw
