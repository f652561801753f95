"""A memory as text: `brain recall` (and `brain skills NAME`) on a terminal, and
`brain export --markdown`, from one set of parts.

Both show the same things of a memory the same way: its kind marks (severity,
a task's status and priority), an incident's details, a trajectory's steps,
its source, its annotations. The terminal form adds the banner and the
counts; the Markdown form adds the supersede and forget lines an export needs.
A hit's age (`age`) is said the same way by `brain search` and the MCP tools.
No click here: the terminal's colours come in as a `style` function.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import datetime
from typing import Any

# An incident's details: (label, field).
DETAILS = (
    ("what was wrong", "what_was_wrong"),
    ("what is correct", "what_is_correct"),
    ("error", "error_message"),
    ("command", "command_attempted"),
)

Style = Callable[[str, str], str]  # (text, role) -> text; roles: "banner", "headline"


def _plain(text: str, role: str) -> str:
    return text


def _upper_first(line: str) -> str:
    return line[:1].upper() + line[1:]


def age(then: datetime | str | None, now: datetime) -> str:
    """How long ago, as a hit says it (brain search, the MCP tools): 40s, 12m, 5h, 3d, 7w, 4mo, 2y."""
    if then is None:
        return "?"
    if isinstance(then, str):
        then = datetime.fromisoformat(then)
    seconds = max(0, int((now - then).total_seconds()))
    for unit, size, until in (
        ("s", 1, 60),
        ("m", 60, 3600),
        ("h", 3600, 86400),
        ("d", 86400, 14 * 86400),
        ("w", 7 * 86400, 61 * 86400),
        ("mo", 30 * 86400, 730 * 86400),
    ):
        if seconds < until:
            return f"{seconds // size}{unit}"
    return f"{seconds // (365 * 86400)}y"


def kind_marks(m: dict[str, Any]) -> list[str]:
    """Kind, severity (rules), status and priority (tasks)."""
    marks = [m["kind"]]
    if m.get("severity"):
        marks.append(m["severity"])
    if m.get("status"):
        marks.append(f"{m['status']} P{m['priority']}")
    return marks


def details(m: dict[str, Any]) -> list[str]:
    """An incident's details that are set, one `label: value` each."""
    return [f"{label}: {m[key]}" for label, key in DETAILS if m.get(key)]


def source(m: dict[str, Any]) -> str:
    """Where a memory came from: its source system and ref ('' for neither)."""
    return " ".join(x for x in (m.get("source_system"), m.get("source_ref")) if x)


def annotations(m: dict[str, Any]) -> list[str]:
    """Each annotation as `annotation (its source): note`."""
    out = []
    for note in m.get("annotations") or []:
        by = f" ({note['source']})" if note.get("source") else ""
        out.append(f"annotation{by}: {note['note']}")
    return out


def step(s: dict[str, Any]) -> str:
    """One step of a trajectory: number, [failed], action, $ command, files, -> result."""
    line = f"{s['n']}. " + ("[failed] " if s.get("failed") else "")
    line += s.get("action") or s.get("tool") or ""
    if s.get("tool") and s.get("action"):
        line += f" ({s['tool']})"
    if s.get("command"):
        line += f"\n     $ {s['command']}"
    if s.get("files"):
        line += "\n     files: " + ", ".join(s["files"])
    if s.get("result"):
        line += f"\n     -> {s['result']}"
    return line


def memory_text(m: dict[str, Any], style: Style = _plain) -> str:
    """A recalled memory (brain.recall's payload) for a terminal."""
    lines = []
    if m.get("banner"):
        lines.append(style(m["banner"], "banner"))
    head = [f"#{m['id']}", *kind_marks(m)]
    head += [m["state"], f"project {m['project']}" if m["project"] else "global"]
    if m.get("pinned"):
        head.append("pinned")
    lines.append(" · ".join(head))
    lines.append(style(m["headline"], "headline"))
    if m.get("body"):
        lines += ["", m["body"]]
    lines += details(m)
    if m["kind"] == "trajectory":
        lines.append("")
        for s in m.get("steps") or []:
            lines.append(step(s))
        lines.append(f"recorded {m.get('times_recorded', 1)}x · used {m.get('times_used', 0)}x")
    lines.append("")
    facts = [f"{m['category']}", f"created {str(m['created_at'])[:10]}"]
    for key in ("tags", "people", "topics"):
        if m.get(key):
            facts.append(f"{key}: {', '.join(m[key])}")
    count = m["access_count"]
    facts.append(f"recalled {count} time{'' if count == 1 else 's'}")
    lines.append(" · ".join(facts))
    if m.get("source_ref") or m.get("source_system"):
        where = source(m)
        if m.get("source_chunk"):
            where += f", chunk {m['source_chunk']}"
        if m.get("source_hash"):
            where += f" (hash {m['source_hash'][:12]})"
        lines.append(f"source: {where}")
    for item in m.get("action_items") or []:
        lines.append(f"action item: {item}")
    lines += annotations(m)
    folds = m.get("folds") or []
    if folds:
        plural = "" if len(folds) == 1 else "s"
        lines.append(f"folded into this memory: {len(folds)} near-identical item{plural}")
    for f in folds:
        origin = f"#{f['folded_memory_id']}" if f.get("folded_memory_id") else "a write"
        if f.get("displaced"):
            origin = "this memory's earlier text"
        where = f", {f['source_ref']}" if f.get("source_ref") else ""
        lines.append(f"  fold {f['fold_id']} ({origin}{where}, {str(f['created_at'])[:10]}): {f['headline']}")
    return "\n".join(lines)


def memory_markdown(doc: dict[str, Any], level: str = "###") -> list[str]:
    """An exported memory (a document of pybrain.transfer.native) as Markdown lines:
    a heading, an italic line of facts, the body, then a list of details."""
    facts = kind_marks(doc)
    facts += [doc["state"], doc["category"], doc["origin"], f"created {str(doc['created_at'])[:10]}"]
    if doc.get("pinned"):
        facts.append("pinned")
    if doc.get("upvotes") or doc.get("downvotes"):
        facts.append(f"rated +{doc.get('upvotes', 0)}/-{doc.get('downvotes', 0)}")
    if doc.get("tags"):
        facts.append("tags: " + ", ".join(doc["tags"]))
    if doc.get("source_ref"):
        facts.append(f"source: {doc.get('source_system') or ''} {doc['source_ref']}".replace("  ", " "))
    out = [f"{level} #{doc['id']} {doc['headline']}", "", f"*{' · '.join(facts)}*", ""]
    if doc.get("body"):
        out += [doc["body"], ""]
    out += [f"- {_upper_first(line)}" for line in details(doc)]
    if doc.get("state") == "superseded":
        out.append(
            f"- Superseded by #{doc['superseded_by']} on {str(doc.get('superseded_at'))[:10]}: "
            f"{doc.get('supersede_reason') or ''}".rstrip(": ")
        )
    if doc.get("state") == "tombstoned":
        by = f" (replaced by #{doc['replaced_by']})" if doc.get("replaced_by") else ""
        out.append(f"- Forgotten{by}: {doc.get('forget_reason') or ''}")
    out += [f"- {_upper_first(line)}" for line in annotations(doc)]
    for fold in doc.get("folds") or []:
        out.append(f"- Folded in: {fold['headline']}")
    if out[-1] != "":
        out.append("")
    return out


def render_boot(payload: dict[str, Any]) -> str:
    """The boot payload as markdown for an agent (pybrain/templates/boot.md.j2)."""
    return _boot_template().render(p=payload)


@functools.cache
def _boot_template() -> Any:
    """The boot template, compiled once a process (the warm hook process compiles it for its children)."""
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(
        loader=PackageLoader("pybrain", "templates"),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,  # markdown for an agent, not HTML
    )
    return env.get_template("boot.md.j2")
