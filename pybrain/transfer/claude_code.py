"""Claude Code session transcripts (``~/.claude/projects/<project>/<session>.jsonl``).

One JSON object per line: ``type`` user or assistant (other types — summary,
system, progress, file-history-snapshot — carry no conversation), ``uuid``,
``parentUuid``, ``sessionId``, ``timestamp``, ``cwd``, ``gitBranch`` and
``message`` whose ``content`` is a string or a list of content blocks
(``text``, ``tool_use``, ``tool_result``, ``thinking``, ``image``). Each turn's
text blocks become one observed text, stored by brain.observe_batch with
source_system "claude-code" and source_ref "<sessionId>/<uuid>", the turn's
role, time, working directory and branch in metadata. Tool calls, tool
results, thinking and lines Claude Code marks as meta are left out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pybrain.client import Brain

SOURCE_SYSTEM = "claude-code"


@dataclass
class Session:
    session_id: str
    path: Path
    texts: list[str] = field(default_factory=list)
    refs: list[str] = field(default_factory=list)
    metadata: list[dict[str, Any]] = field(default_factory=list)
    unreadable: list[int] = field(default_factory=list)  # line numbers that are not JSON objects


def turn_text(message: Any) -> str:
    """The text blocks of a message, joined by blank lines."""
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content.strip()
    if not isinstance(content, list):
        return ""
    parts = [
        b["text"].strip()
        for b in content
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]
    return "\n\n".join(p for p in parts if p)


def read_transcript(path: Path) -> list[Session]:
    """The sessions of one transcript file (usually one), their turns in order."""
    sessions: dict[str, Session] = {}
    with path.open(encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                entry = None
            sid = entry.get("sessionId") if isinstance(entry, dict) else None
            session = sessions.setdefault(sid or path.stem, Session(sid or path.stem, path))
            if not isinstance(entry, dict):
                session.unreadable.append(number)
                continue
            if entry.get("type") not in ("user", "assistant") or entry.get("isMeta"):
                continue
            text = turn_text(entry.get("message"))
            if not text:
                continue
            uuid = entry.get("uuid") or f"line-{number}"
            role = (entry.get("message") or {}).get("role") or entry["type"]
            meta = {
                "role": role,
                "session": session.session_id,
                "uuid": uuid,
                "timestamp": entry.get("timestamp"),
                "cwd": entry.get("cwd"),
                "git_branch": entry.get("gitBranch"),
                "transcript": path.name,
            }
            session.texts.append(text)
            session.refs.append(f"{session.session_id}/{uuid}")
            session.metadata.append({k: v for k, v in meta.items() if v is not None})
    return [s for s in sessions.values() if s.texts or s.unreadable]


def transcripts(path: Path) -> list[Path]:
    """A transcript file, or every .jsonl under a folder (a project's, or ~/.claude/projects)."""
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*.jsonl") if p.is_file())


def observe(
    brain: Brain, path: Path, *, project: str = "", source_agent: str | None = SOURCE_SYSTEM
) -> list[dict[str, Any]]:
    """Store every session under path as observed turns; the observe_batch rows, each
    with the session and transcript it came from."""
    results: list[dict[str, Any]] = []
    for file in transcripts(path):
        for s in read_transcript(file):
            for number in s.unreadable:
                results.append(
                    {
                        "action": "rejected",
                        "session": s.session_id,
                        "transcript": str(file),
                        "error_code": None,
                        "error": f"line {number} is not a JSON object",
                    }
                )
            if not s.texts:
                continue
            rows = brain.observe(
                s.texts,
                kind="fact",
                project=project,
                origin="observed",
                source_system=SOURCE_SYSTEM,
                source_refs=s.refs,
                source_agent=source_agent,
                metadata=s.metadata,
            )
            for r in rows:
                r.update(session=s.session_id, transcript=str(file))
            results += rows
    return results
