"""The memories: write them (remember, supersede, observe, capture), read them
(recall, search, recent, skills, history), and change what they are (forget,
archive, restore, pin, rate, annotate, confirm, a task's status, flags)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import click

from pybrain.cli.base import (
    REQUEST_KEY,
    Choice,
    _dump,
    _echo_rows,
    _fail,
    _json_option,
    _max_results,
    _open,
    _person,
    _text,
    command,
)
from pybrain.client import WriteResult
from pybrain.errors import BrainError
from pybrain.render import age, memory_text
from pybrain.words import KINDS, ORIGINS, REMEMBERED_KINDS
from pybrain.worker import reconcile, settle

# The order --origin lists its words in (pybrain.words.ORIGINS has the database's).
ORIGINS_SHOWN = ("explicit", "overlay", "observed", "artifact")


def _describe_write(
    r: WriteResult, kind: str, headline: str, on_related: str = "refuse", reason: str | None = None
) -> str:
    if r.action == "created":
        line = f"created #{r.memory_id} {kind}: {headline}"
        if r.duplicate_of and on_related == "supersede":
            line += f"\n  superseded the related #{r.duplicate_of} (similarity {r.similarity:.3f})"
            line += f": {reason}" if reason else ""
        elif r.duplicate_of:
            line += f" (related to #{r.duplicate_of}, similarity {r.similarity:.3f})"
        if r.related:
            rel = r.related
            terms = rel.get("terms") or {}
            line += (
                f"\n  related #{rel['id']} (similarity {rel['similarity']}): {rel['headline']}"
                f"\n  differs in: {', '.join(terms.get('this') or [])} here,"
                f" {', '.join(terms.get('that') or [])} there"
                f"\n  if this replaces it: brain supersede {rel['id']} ..."
            )
        if r.embedding_pending:
            why = f": {r.embedder_error}" if r.embedder_error else ""
            line += f"\n  embedding pending{why}\n  `brain worker --once` will embed it"
        return line
    how = "exact duplicate" if r.similarity == 1 else f"near-identical, similarity {r.similarity:.3f}"
    if r.action == "updated":
        return f"updated #{r.memory_id}: {how}; kept the longer text"
    return f"skipped: already stored as #{r.memory_id} ({how})"


def _render_memory(m: dict[str, Any]) -> str:
    return memory_text(m, _style)


def _style(text: str, role: str) -> str:
    """The terminal's emphasis for pybrain.render: a banner in bold yellow, a headline in bold."""
    return click.style(text, fg="yellow", bold=True) if role == "banner" else click.style(text, bold=True)


def _remember_options(fn: Callable) -> Callable:
    options = [
        click.option("--category", help="decision, insight, procedural, gotcha, note, ..."),
        click.option("--project", default="", help="Project scope ('' = global)."),
        click.option("--tag", "tags", multiple=True, help="A tag (repeatable)."),
        click.option("--source", help="Who is writing (agent or person)."),
        click.option("--metadata", help="A JSON object to keep with the memory."),
        click.option(
            "--session",
            "session_id",
            type=int,
            envvar="BRAIN_SESSION",
            help="The writing session (env BRAIN_SESSION): its heartbeat, its action items.",
        ),
        click.option("--skill", "skill_trigger", help="A skill trigger as JSON."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def _on_related_option(help: str):
    """--on-related: the write's policy for a related memory (brain.remember's on_related)."""
    return click.option(
        "--on-related",
        type=Choice(["refuse", "store", "supersede"]),
        default="refuse",
        show_default=True,
        help=help,
    )


@command()
@click.argument("kind", type=Choice(REMEMBERED_KINDS, case_sensitive=False))
@click.argument("headline")
@click.argument("body", required=False, default="")
@_remember_options
@click.option(
    "--severity",
    type=Choice(["BLOCKER", "PATTERN"], case_sensitive=False),
    help="Rules: BLOCKER or PATTERN (default).",
)
@click.option("--pin", "pinned", is_flag=True, help="Load at every boot.")
@click.option("--importance", type=click.FloatRange(0, 1), help="0..1, default 0.5.")
@click.option(
    "--origin",
    type=Choice(sorted(ORIGINS, key=ORIGINS_SHOWN.index)),
    default="explicit",
    show_default=True,
)
@click.option("--expires-at", help="Facts: a hard expiry (ISO timestamp).")
@click.option("--halflife-days", type=float, help="Facts: decay half-life (default 7).")
@click.option("--status", type=Choice(["open", "blocked", "done"]), help="Tasks.")
@click.option("--priority", type=click.IntRange(1, 5), help="Tasks: 1 (highest) to 5.")
@click.option("--due", "due_at", help="Tasks: due date (ISO).")
@click.option("--what-was-wrong", help="Incidents.")
@click.option("--what-is-correct", help="Incidents.")
@click.option("--error-message", help="Incidents.")
@click.option("--command", "command_attempted", help="Incidents: the command attempted.")
@click.option("--file", "related_files", multiple=True, help="Incidents: a related file.")
@click.option("--complexity", type=Choice(["simple", "medium", "complex"]), help="Incidents.")
@_on_related_option(
    "When a related memory exists: refuse the write, store both, or supersede the related one."
)
@click.option("--reason", help="With --on-related supersede: why the related memory is replaced.")
def remember(kind: str, headline: str, body: str, as_json: bool, **opts: Any) -> None:
    """Store a memory. BODY '-' reads standard input."""
    headline = _text(headline, "headline") or ""
    body = _text(body, "body") or ""
    opts["metadata"] = _json_option(opts["metadata"], "--metadata")
    opts["skill_trigger"] = _json_option(opts["skill_trigger"], "--skill")
    opts["tags"] = list(opts["tags"])
    opts["related_files"] = list(opts["related_files"])
    opts["severity"] = opts["severity"].upper() if opts["severity"] else None
    source = opts.pop("source")
    with _open(source) as brain:
        result = brain.remember(kind.lower(), headline, body=body, source_agent=source, **opts)
    click.echo(
        _dump(result.as_dict())
        if as_json
        else _describe_write(result, kind.lower(), headline, opts["on_related"], opts["reason"])
    )


@command()
@click.argument("old_id", type=int)
@click.argument("headline")
@click.argument("body", required=False, default="")
@click.option("--reason", required=True, help="Why the old memory is no longer true.")
@click.option("--source", help="Who is writing.")
@click.option("--inherit-pinned", is_flag=True, help="Keep the old memory's pin.")
@click.option("--severity", type=Choice(["BLOCKER", "PATTERN"], case_sensitive=False))
@click.option("--category")
@click.option("--tag", "tags", multiple=True, help="Replace the tags (default: inherit).")
@_on_related_option(
    "When the new text is related to another memory: refuse, store anyway, or supersede it too."
)
def supersede(
    old_id: int, headline: str, body: str, reason: str, as_json: bool, source: str | None, **opts: Any
) -> None:
    """Replace memory OLD_ID with a corrected one. BODY '-' reads standard input."""
    headline = _text(headline, "headline") or ""
    body = _text(body, "body") or ""
    opts["tags"] = list(opts["tags"]) or None
    opts["severity"] = opts["severity"].upper() if opts["severity"] else None
    with _open(source) as brain:
        result = brain.supersede(old_id, headline, reason, body=body, source=source, **opts)
    if as_json:
        click.echo(_dump(result.as_dict()))
    elif result.action == "created":
        click.echo(f"#{old_id} superseded by #{result.memory_id}")
        if result.embedding_pending:
            click.echo("  embedding pending: `brain worker --once` will embed it")
    else:
        click.echo(f"#{old_id} superseded by existing #{result.memory_id} ({result.action})")


@command()
@click.argument("memory_id", type=int)
@click.option("--source", help="Who is reverting.")
def unsupersede(memory_id: int, source: str | None, as_json: bool) -> None:
    """Revert the supersede of MEMORY_ID."""
    with _open(source) as brain:
        restored = brain.unsupersede(memory_id, source=source)
    click.echo(_dump({"restored": restored}) if as_json else f"#{restored} is current again")


@command()
@click.option("--project", help="This project and global memories (default: every project).")
@click.option("--change", type=int, help="Only what this supersede left: the old or the new memory's id.")
@click.option("--max-results", "max_results", type=int, default=50, show_default=True)
def stale(project: str | None, change: int | None, max_results: int, as_json: bool) -> None:
    """List what supersedes left to review: memories that still state a changed value."""
    with _open() as brain:
        rows = brain.stale(project=project, change=change, max_results=max_results)
    if as_json:
        click.echo(_dump(rows))
        return
    if not rows:
        click.echo("nothing stale: no active memory states a superseded value")
        return
    for r in rows:
        scope = f" · {r['memory_project']}" if r["memory_project"] else ""
        click.echo(f"#{r['id']} {r['kind']}{scope}  {click.style(r['headline'], bold=True)}")
        click.echo(
            f"    states {', '.join(r['old_values'])} of #{r['changed_id']} {r['changed_headline']!r},"
            f" changed by #{r['change_id']} {r['change_headline']!r}"
        )


@command()
@click.argument("memory_id", type=int)
def recall(memory_id: int, as_json: bool) -> None:
    """Show a whole memory (and count the access)."""
    with _open() as brain:
        memory = brain.recall(memory_id)
    click.echo(_dump(memory) if as_json else _render_memory(memory))


# what a search that finds nothing relevant says (brain.search keeps each result on its own verdict)
NOTHING_RELEVANT = (
    "nothing relevant found: no memory reaches the relevance floor (the setting min_relevance;"
    " --min-relevance 0 lists the nearest anyway)"
)


def _folded(h: dict[str, Any]) -> str | None:
    """What a result says of the near-identical turns of its session that search folded into it."""
    folded = (h.get("metadata") or {}).get("folded") or []
    if not folded:
        return None
    ids = " ".join(f"#{i}" for i in folded[:5]) + (" …" if len(folded) > 5 else "")
    turns = "turn" if len(folded) == 1 else "turns"
    return f"{len(folded)} near-identical {turns} of its session folded ({ids})"


def _render_hits(hits: list[dict[str, Any]], empty: str = "no memories found") -> str:
    if not hits:
        return empty
    lines = []
    for h in hits:
        marks = [f"#{h['id']}", h["kind"]]
        if h.get("via_skill_trigger"):
            marks.append(f"skill {h['via_skill_trigger']}")
        elif h.get("neighbour_of") is not None:
            marks.append(f"beside #{h['neighbour_of']}")
        elif h.get("score") is not None:
            # the ranking's figure: never above the one before (the evidence alone is "relevance" in --json)
            marks.append(f"score {h['score']:.2f}")
        if h["project"]:
            marks.append(h["project"])
        if h["state"] != "active":
            marks.append(h["state"])
            if h.get("current_id") and h["current_id"] != h["id"]:
                marks.append(f"current #{h['current_id']}")
        if h.get("pinned"):
            marks.append("pinned")
        if h.get("flag_reasons"):
            marks.append(click.style(f"FLAGGED ({', '.join(h['flag_reasons'])})", fg="red"))
        if h.get("newer_related"):
            # an active one stands until a person confirms the change
            confirm = f" (if so: brain supersede {h['id']} ...)" if h.get("state") == "active" else ""
            marks.append(
                click.style(f"older: #{h['newer_related']} is newer, may contradict it{confirm}", fg="yellow")
            )
        if h.get("stale"):
            # it states the old value of a superseded memory (brain stale lists them)
            on, by = h["stale"]["on"], h["stale"]["by"]
            marks.append(click.style(f"depends on #{on}, changed by #{by}: brain stale", fg="yellow"))
        if folded := _folded(h):
            marks.append(folded)
        if "created_at" in h:
            marks.append(age(h["created_at"], datetime.now(UTC)))
        lines.append(f"{' · '.join(marks)}  {click.style(h['headline'], bold=True)}")
        if h.get("preview"):
            lines.append(f"    {h['preview']}")
    return "\n".join(lines)


def _filter_options(fn: Callable) -> Callable:
    options = [
        click.option("--kind", "kinds", multiple=True, type=Choice(KINDS), help="Repeatable."),
        click.option("--project", help="This project and global memories."),
        _max_results(10, 100),
        click.option("--include-superseded", is_flag=True),
        click.option("--include-archived", is_flag=True),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


@command()
@click.argument("query")
@_filter_options
@click.option("--category", "categories", multiple=True, help="Repeatable.")
@click.option("--tag", "tags", multiple=True, help="Memories with every given tag.")
@click.option("--person", "people", multiple=True, help="Memories mentioning every given @person.")
@click.option("--since", "created_after", help="Created at or after (ISO date or timestamp).")
@click.option("--until", "created_before", help="Created before (ISO date or timestamp).")
@click.option("--include-dormant", is_flag=True, hidden=True, help="No effect: dormant facts are searched.")
@click.option("--as-of", help="What was believed at that time (ISO timestamp).")
@click.option("--source-system", help="Only memories from this source system (e.g. files).")
@click.option("--source-ref", help="Only this document (a ref), or every ref under a folder ending in /.")
@click.option(
    "--min-relevance",
    type=click.FloatRange(0, 1),
    help="Only results at least this relevant, 0 to 1 (default: the setting min_relevance);"
    " 0 lists the nearest memories, relevant or not.",
)
@click.option(
    "--neighbours",
    type=click.IntRange(0, 10),
    default=0,
    help="Bring this many turns or chunks on each side of a hit, within --max-results.",
)
def search(query: str, as_json: bool, **filters: Any) -> None:
    """Find memories: meaning, words and near-spellings, fused and ranked."""
    query = _text(query, "query") or ""
    for key in ("kinds", "categories", "tags", "people"):
        filters[key] = list(filters[key]) or None
    with _open() as brain:
        hits = brain.search(query, **filters)
    click.echo(_dump(hits) if as_json else _render_hits(hits, NOTHING_RELEVANT))


@command()
@_filter_options
def recent(as_json: bool, **filters: Any) -> None:
    """The newest memories."""
    filters["kinds"] = list(filters["kinds"]) or None
    with _open() as brain:
        hits = brain.list_recent(**filters)
    click.echo(_dump(hits) if as_json else _render_hits(hits))


@command()
@click.argument("memory_id", type=int)
@click.option("--reason", required=True, help="Why it should be forgotten.")
@click.option("--replaced-by", type=int, help="The memory that replaces it.")
@click.option("--source", help="Who is forgetting.")
def forget(memory_id: int, reason: str, replaced_by: int | None, source: str | None, as_json: bool) -> None:
    """Tombstone a memory (kept for audit; out of every default read)."""
    with _open(source) as brain:
        brain.forget(memory_id, reason, replaced_by=replaced_by, source=source)
    click.echo(_dump({"forgotten": memory_id}) if as_json else f"#{memory_id} forgotten")


@command()
@click.argument("memory_id", type=int)
@click.argument("direction", type=Choice(["up", "down"]))
@click.option("--source", help="Who is rating.")
@REQUEST_KEY
def rate(memory_id: int, direction: str, source: str | None, request_key: str | None, as_json: bool) -> None:
    """Rate a memory up (it helped) or down (it misled)."""
    with _open(source) as brain:
        out = brain.rate(memory_id, direction, source=source, request_key=request_key)
    click.echo(_dump(out) if as_json else f"#{memory_id} rated {direction}: rating {out['rating']:+d}")


@command()
@click.argument("memory_id", type=int)
@click.argument("note")
@click.option("--source", help="Who is annotating.")
@REQUEST_KEY
def annotate(memory_id: int, note: str, source: str | None, request_key: str | None, as_json: bool) -> None:
    """Attach a note (a correction, a gotcha) to a memory. NOTE '-' reads standard input."""
    note = _text(note, "note") or ""
    with _open(source) as brain:
        annotation = brain.annotate(memory_id, note, source=source, request_key=request_key)
    click.echo(_dump({"annotation": annotation}) if as_json else f"#{memory_id} annotated")


def _set_pin(memory_id: int, pinned: bool, source: str | None, as_json: bool) -> None:
    """brain pin and brain unpin: whether it changed, or what it was already."""
    with _open(source) as brain:
        changed = (brain.pin if pinned else brain.unpin)(memory_id, source=source)
    if as_json:
        said = _dump({"changed": changed})
    elif changed:
        said = f"#{memory_id} {'pinned' if pinned else 'unpinned'}"
    else:
        said = f"#{memory_id} {'was already pinned' if pinned else 'was not pinned'}"
    click.echo(said)


@command()
@click.argument("memory_id", type=int)
@click.option("--source", help="Who is pinning.")
def pin(memory_id: int, source: str | None, as_json: bool) -> None:
    """Pin a memory: loaded at boot, weighted up in search."""
    _set_pin(memory_id, True, source, as_json)


@command()
@click.argument("memory_id", type=int)
@click.option("--source", help="Who is unpinning.")
def unpin(memory_id: int, source: str | None, as_json: bool) -> None:
    """Unpin a memory."""
    _set_pin(memory_id, False, source, as_json)


@command()
@click.argument("memory_id", type=int)
@click.option("--source", help="Who is confirming.")
def confirm(memory_id: int, source: str | None, as_json: bool) -> None:
    """Record that a memory is still true (a fact's decay starts over)."""
    with _open(source) as brain:
        out = brain.confirm(memory_id, source=source)
    click.echo(_dump(out) if as_json else f"#{memory_id} confirmed")


@command()
@click.argument("name", required=False)
@click.option("--project", help="Include skills scoped to this project.")
def skills(name: str | None, project: str | None, as_json: bool) -> None:
    """List skills, or load the skill NAME in full."""
    with _open() as brain:
        if name:
            memory = brain.load_skill(name, project=project)
            click.echo(_dump(memory) if as_json else _render_memory(memory))
            return
        found = brain.list_skills(project=project)
    if as_json:
        click.echo(_dump(found))
    elif not found:
        click.echo("no skills")
    else:
        for s in found:
            scope = ", ".join(s["projects"]) or "global"
            on = " · always on" if s["always_on"] else ""
            click.echo(f"{s['name']} (#{s['id']}, {scope}{on}): {s['headline']}")
            click.echo(f"    keywords: {', '.join(s['keywords'])}")


@command()
@click.argument("memory_id", type=int)
@click.argument("status", required=False, type=Choice(["open", "blocked", "done"]))
@click.option("--note", help="What changed.")
@click.option("--priority", type=click.IntRange(1, 5))
@click.option("--due", "due_at", help="Due date (ISO).")
@click.option("--source", help="Who is updating.")
def task(
    memory_id: int,
    status: str | None,
    note: str | None,
    priority: int | None,
    due_at: str | None,
    source: str | None,
    as_json: bool,
) -> None:
    """Move a task: open <-> blocked -> done (an update reopens a stale task)."""
    with _open(source) as brain:
        out = brain.update_task(memory_id, status, note=note, priority=priority, due_at=due_at, source=source)
    click.echo(_dump(out) if as_json else f"task #{memory_id}: {out['from']} -> {out['status']}")


@command()
@click.argument("memory_id", type=int)
@click.option("--reason", required=True, help="Why it is retired.")
@click.option("--source", help="Who is archiving.")
def archive(memory_id: int, reason: str, source: str | None, as_json: bool) -> None:
    """Retire a memory: kept and recallable, out of default search."""
    with _open(source) as brain:
        brain.archive(memory_id, reason, source=source)
    click.echo(_dump({"archived": memory_id}) if as_json else f"#{memory_id} archived")


def restore_memory(memory_id: int, source: str | None, as_json: bool) -> None:
    """`brain restore MEMORY_ID`: bring an archived or forgotten memory back."""
    with _open(source) as brain:
        brain.restore(memory_id, source=source)
    click.echo(_dump({"restored": memory_id}) if as_json else f"#{memory_id} restored")


@command()
@click.argument("memory_id", type=int)
def history(memory_id: int, as_json: bool) -> None:
    """A memory's supersede chain and audit trail."""
    with _open() as brain:
        out = brain.history(memory_id)
    if out is None:
        _fail(
            BrainError(f"No memory #{memory_id} in this workspace.", hint="Find memories with brain search."),
            as_json,
        )
    if as_json:
        click.echo(_dump(out))
        return
    click.echo(f"#{memory_id}: current version #{out['current_id']}")
    for v in out["chain"]:
        line = f"  #{v['id']} {v['state']:<10} {str(v['created_at'])[:19]}  {v['headline']}"
        if v["superseded_by"]:
            line += f"\n      superseded by #{v['superseded_by']}: {v['reason']}"
        click.echo(line)
    for e in out["events"]:
        detail = ", ".join(f"{k}={v}" for k, v in e["detail"].items() if v is not None)
        click.echo(
            f"  {str(e['at'])[:19]}  #{e['id']} {e['action']} by {e['actor']}"
            + (f" ({detail})" if detail else "")
        )


@command()
@click.argument("text")
@click.option("--project", default="", help="Project scope ('' = global).")
@click.option("--source", help="Who captured it.")
def capture(text: str, project: str, source: str | None, as_json: bool) -> None:
    """Keep the decisions, actions, gotchas and insights of TEXT ('-' reads standard input)."""
    text = _text(text, "text") or ""
    with _open(source) as brain:
        rows = brain.capture(text, project=project, source=source)

    def line(r: dict[str, Any]) -> str:
        where = f" #{r['memory_id']}" if r["memory_id"] else ""
        why = f" ({r['reason']})" if r["reason"] else ""
        return f"{r['action']}{where} {r['category']}: {r['sentence']}{why}"

    _echo_rows(rows, as_json, line, "nothing worth keeping found")


@command()
@click.argument("texts", nargs=-1, required=True)
@click.option("--kind", type=Choice(["fact", "incident"]), default="fact", show_default=True)
@click.option("--project", default="", help="Project scope ('' = global).")
@click.option("--artifact", is_flag=True, help="Document chunks rather than runtime events.")
@click.option("--source-system", help="What produced the text (a connector, an agent runtime).")
@click.option("--source-ref", help="The stable external id (one text only).")
@click.option("--source", "source_agent", help="Which agent observed it.")
@click.option(
    "--no-fold",
    is_flag=True,
    help="Keep near-identical texts apart (exact repeats are still skipped).",
)
def observe(
    texts: tuple[str, ...],
    kind: str,
    project: str,
    artifact: bool,
    source_system: str | None,
    source_ref: str | None,
    source_agent: str | None,
    no_fold: bool,
    as_json: bool,
) -> None:
    """Store observed text (chat turns, tool output, events). TEXT '-' reads standard input.

    Headlines are derived, long text is split into chunks that fit the embedder
    (markdown-aware: each chunk under a heading is headed by its heading path),
    and only exact or near-identical repeats are deduplicated.
    """
    if source_ref and len(texts) > 1:
        raise click.BadParameter("--source-ref names one text.")
    items = [_text(t, "text") or "" for t in texts]
    with _open(source_agent) as brain:
        rows = brain.observe(
            items,
            kind=kind,
            project=project,
            origin="artifact" if artifact else "observed",
            source_system=source_system,
            source_refs=[source_ref] if source_ref else None,
            source_agent=source_agent,
            fold=False if no_fold else None,
        )
        # A large batch left its vectors out of the HNSW index: index them now,
        # as `brain worker` would, so a one-off import leaves nothing waiting,
        # then read the final outcome of the rows whose dedup was still owed.
        settle(brain, queue=False)
        reconcile(brain, rows)
    if as_json:
        click.echo(_dump(rows))
        return
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["action"]] = counts.get(r["action"], 0) + 1
        if r["action"] == "rejected":
            click.echo(f"text {r['item']}: rejected ({r['error_code']}): {r['error']}")
            continue
        chunk = f" chunk {r['chunk']}" if r["chunk"] and r["chunk"] > 1 else ""
        line = f"text {r['item']}{chunk}: {r['action']} #{r['memory_id']}"
        redacted = ", ".join(f"{x['kind']} at {x['start']}-{x['end']}" for x in r.get("redacted") or [])
        if redacted:
            line += f" (redacted {redacted})"
        if r["action"] == "folded":
            line += " (near-identical: brain recall lists it under folds)"
        elif r["provisional"]:
            line += " (near-identical dedup pending: `brain worker --once`)"
        click.echo(line)
    summary = ", ".join(f"{n} {a}" for a, n in sorted(counts.items()))
    click.echo(f"{len(rows)} rows: {summary}")
    if counts.get("rejected"):
        sys.exit(1)


@command()
@click.option(
    "--all", "include_confirmed", is_flag=True, help="Also the flagged memories a person confirmed."
)
@click.option(
    "--confirm", "confirm_id", type=click.IntRange(1), help="Confirm this flagged memory: it is data."
)
@click.option("--source", help="Who confirms.")
@_max_results(50, 1000, "-n")
def flagged(
    include_confirmed: bool, confirm_id: int | None, source: str | None, max_results: int, as_json: bool
) -> None:
    """Memories flagged as possible instructions to the agent (kept out of boot until confirmed).

    --confirm is a person's decision: it connects with BRAIN_ADMIN_DATABASE_URL when set (on one
    machine, the embedded server's owner), since the author of a flagged memory cannot confirm it."""
    if confirm_id is not None:
        # a person's decision: never the agent's role (its author)
        with _person(source) as brain:
            result = brain.confirm_flagged(confirm_id, source)
        click.echo(_dump(result) if as_json else f"#{confirm_id} confirmed: it enters the boot payload")
        return
    with _open(source) as brain:
        rows = brain.list_flagged(include_confirmed, max_results)

    def line(r: dict[str, Any]) -> str:
        state = f"confirmed by {r['confirmed_by']}" if r["confirmed_at"] else "waiting"
        return f"#{r['id']} {r['kind']} [{', '.join(r['flag_reasons'])}] {state}  {json.dumps(r['headline'])}"

    _echo_rows(rows, as_json, line, "no flagged memories")


COMMANDS = (
    remember,
    supersede,
    unsupersede,
    stale,
    recall,
    search,
    recent,
    forget,
    rate,
    annotate,
    pin,
    unpin,
    confirm,
    skills,
    task,
    archive,
    history,
    capture,
    observe,
    flagged,
)
