"""Memories in and out: export (JSONL or Markdown), import (pybrain, OwnSona, mem0,
notes, Claude Code transcripts), ingest (documents kept in step with their
source), backup, and `brain restore FILE`."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import click

from pybrain import db
from pybrain.cli.base import Choice, _dump, _mask, _open, _person, _writable, command
from pybrain.cli.memories import restore_memory
from pybrain.config import Settings
from pybrain.worker import Outcomes, settle


@command(name="export")
@click.argument("file", required=False, type=click.Path(dir_okay=False, allow_dash=True, path_type=Path))
@click.option(
    "--markdown",
    "markdown_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write a readable Markdown export into this folder (one file per project and kind).",
)
@click.option("--vectors", is_flag=True, help="Include the embeddings, with their space.")
@click.option("--project", help="Only this project ('' = global memories).")
def export_command(
    file: Path | None, markdown_dir: Path | None, vectors: bool, project: str | None, as_json: bool
) -> None:
    """Write every memory of the workspace as JSONL (docs/export-format.md); FILE '-' or
    none writes to standard output."""
    from pybrain.errors import InvalidArgument
    from pybrain.transfer import native

    with _open() as brain, _writable(file if markdown_dir is None else markdown_dir, InvalidArgument):
        if markdown_dir is not None:
            files = native.write_markdown(brain, markdown_dir, project=project)
            out: dict[str, Any] = {"markdown": str(markdown_dir), "files": [str(f) for f in files]}
        elif file is None or str(file) == "-":
            count = native.write_jsonl(brain, sys.stdout, include_vectors=vectors, project=project)
            click.echo(f"exported {count} memories", err=True)
            return
        else:
            partial = file.with_name(file.name + ".partial")
            try:
                with partial.open("w", encoding="utf-8") as f:
                    count = native.write_jsonl(brain, f, include_vectors=vectors, project=project)
            except BaseException:
                partial.unlink(missing_ok=True)
                raise
            partial.replace(file)
            out = {"file": str(file), "memories": count, "vectors": vectors}
    if as_json:
        click.echo(_dump(out))
    elif "files" in out:
        click.echo(f"wrote {len(out['files'])} Markdown files into {markdown_dir}")
    else:
        click.echo(f"exported {out['memories']} memories to {file}")


@command(name="import")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=Choice(["auto", "pybrain", "ownsona", "mem0", "markdown", "claude-code", "claude-memory"]),
    default="auto",
    show_default=True,
)
@click.option(
    "--project",
    help="Store everything in this project (default: as exported; '' for others; for Claude Code's "
    "auto memory, the repository of the current folder).",
)
@click.option("--source", help="Who is importing (recorded in the audit log).")
@click.option("--semantic-dedup", is_flag=True, help="Run semantic dedup on the imported memories too.")
@click.option("--no-embed", is_flag=True, help="Leave the embedding to `brain worker`.")
@click.option(
    "--trust-file",
    is_flag=True,
    help="Take pins, ratings, importance, access counts and flag confirmations from the file "
    "(an admin of the workspace only, connecting with BRAIN_ADMIN_DATABASE_URL when set; "
    "without it they are not imported).",
)
def import_command(
    paths: tuple[Path, ...],
    fmt: str,
    project: str | None,
    source: str | None,
    semantic_dedup: bool,
    no_embed: bool,
    trust_file: bool,
    as_json: bool,
) -> None:
    """Load a pybrain export, an OwnSona or mem0 export, a folder of markdown notes,
    Claude Code transcripts or Claude Code's auto memory (its memory folder or MEMORY.md,
    kept in step: run it again after the file changed) into the workspace, through the
    write gate."""
    from pybrain.transfer import claude_code, detect_format, import_documents, mem0, native, notes, ownsona
    from pybrain.transfer import summarize as tally

    rows: list[dict[str, Any]] = []
    # Trusting a file is a person's decision, on the owner's URL (the database checks it is an admin).
    with _person(source) if trust_file else _open(source) as brain:
        for path in paths:
            kind = detect_format(path) if fmt == "auto" else fmt
            if kind == "claude-code":
                found = claude_code.observe(brain, path, project=project or "")
            elif kind == "claude-memory":
                found = _import_memory_files(brain, path, project, source)
            else:
                reader = {"ownsona": ownsona.read, "mem0": mem0.read, "markdown": notes.read}.get(kind)
                records: list[dict[str, Any]] = []
                if reader is None:
                    _, docs, records = native.read_export(path)
                else:
                    docs = reader(path)
                found = import_documents(
                    brain,
                    docs,
                    source=source or f"import:{kind}",
                    project=project,
                    semantic_dedup=semantic_dedup,
                    trust_file=trust_file,
                )
                found += _line_numbers(
                    native.import_records(brain, records, project=project, imported=found), records
                )
                found = _line_numbers(found, docs)
            for r in found:
                r["file"], r["format"] = str(path), kind
            rows += found
        # embedded: the texts given a vector; refused: those the embedder refused (queued
        # again for `brain worker`, or parked after embedding_max_attempts)
        settled = Outcomes() if no_embed else settle(brain, batch=64)
        embedded, refused = settled.embedded, settled.failed + settled.parked
    counts = tally(rows)
    if as_json:
        out = {"counts": counts, "embedded": embedded, "embedding_refused": refused, "rows": rows}
        click.echo(_dump(out))
    else:
        for r in rows:
            if r["action"] == "rejected":
                where = (
                    f"line {r['line_number']}"
                    if r.get("line_number")
                    else f"item {r['item']}"
                    if r.get("item")
                    else f"session {r.get('session')}"
                    if r.get("session")
                    else f"{r.get('ref')}"
                )
                click.echo(f"{r['file']} {where}: rejected ({r.get('error_code')}): {r.get('error')}")
        summary = ", ".join(f"{n} {a}" for a, n in counts.items()) or "nothing to import"
        refusals = f" ({refused} refused by the embedder: `brain worker` tries them again)" if refused else ""
        click.echo(f"imported {len(rows)} items: {summary}; embedded {embedded}{refusals}")
    if counts.get("rejected"):
        sys.exit(1)


def _import_memory_files(
    brain: Any, path: Path, project: str | None, source: str | None
) -> list[dict[str, Any]]:
    """Claude Code's auto memory through brain.ingest_documents: one row per item (chunk)
    with its line, and one per file unchanged or refused."""
    from pybrain import ingest
    from pybrain.repo import project_of
    from pybrain.transfer import claude_memory

    listing, lines = claude_memory.collect(path)
    report = ingest.run(
        brain,
        listing,
        source_system=claude_memory.SOURCE_SYSTEM,
        project=project_of(Path.cwd(), brain) if project is None else project,
        source_agent=source or "import:claude-memory",
    )
    rows: list[dict[str, Any]] = [
        {"action": "rejected", "ref": p.path, "error_code": p.code, "error": p.message}
        for p in listing.problems
    ]
    for r in report.rows:
        # (a file's own row only when none of its items has one: unchanged, rejected)
        if r["chunk"] is None and r["action"] not in ("rejected", "unchanged"):
            continue
        row = {
            k: r.get(k) for k in ("action", "ref", "chunk", "memory_id", "previous_id", "error_code", "error")
        }
        if r["chunk"] is not None and r["action"] != "removed":
            row["line_number"] = lines.get((r["ref"], r["chunk"]))
        rows.append(row)
    return rows


def _line_numbers(rows: list[dict[str, Any]], docs: list[Any]) -> list[dict[str, Any]]:
    """Each result row with the line of its file (line_number) the reader found its document on."""
    for r in rows:
        if r.get("line_number") is None and r.get("item"):
            doc = docs[r["item"] - 1] if r["item"] <= len(docs) else None
            if isinstance(doc, dict) and isinstance(doc.get("line"), int):
                r["line_number"] = doc["line"]
    return rows


class _IngestProgress:
    """A one-line progress bar on standard error: documents done, chunks written, rate."""

    def __init__(self, dry_run: bool) -> None:
        self.started = time.perf_counter()
        self.dry_run = dry_run

    def __call__(self, done: int, total: int, report: Any) -> None:
        width = 24
        filled = width * done // total if total else width
        rate = done / max(time.perf_counter() - self.started, 1e-9)
        chunks = report.chunks.get("new", 0) + report.chunks.get("changed", 0)
        line = (
            f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} documents, "
            f"{chunks} chunks {'to write' if self.dry_run else 'written'}, {rate:.1f} documents/s"
        )
        click.echo(line, nl=done >= total, err=True)


def _ingest_text(summary: dict[str, Any], rows: list[dict[str, Any]]) -> list[str]:
    d, c = summary["documents"], summary["chunks"]
    total = sum(d.values())
    lines = []
    for r in rows:
        if r["chunk"] is not None:
            continue
        if r["action"] == "renamed":
            lines.append(f"renamed {r['previous_ref']} -> {r['ref']}")
        elif r["action"] == "removed":
            lines.append(f"removed at source: {r['ref']}")
        elif r["action"] == "rejected":
            lines.append(f"{r['ref']}: rejected ({r['error_code']}): {r['error']}")
        if r.get("redacted"):
            kinds = ", ".join(sorted({x["kind"] for x in r["redacted"]}))
            lines.append(f"{r['ref']}: secrets redacted ({kinds})")
    seconds = summary["seconds"]
    if summary["dry_run"]:
        lines.append(f"dry run: nothing was written; {total} documents would be ingested as follows")
    else:
        share = summary["embed_seconds"] / seconds if seconds else 0
        chunks = c["new"] + c["changed"]
        lines.append(
            f"ingested {total} documents in {seconds:.2f} s ({total / max(seconds, 1e-9):.1f} documents/s, "
            f"{chunks / max(seconds, 1e-9):.1f} chunks/s written; {share:.0%} of the time in embedding)"
        )
    lines.append("documents: " + ", ".join(f"{n} {a}" for a, n in d.items()))
    lines.append(
        f"chunks: {c['new']} new, {c['changed']} changed (superseding their old version), "
        f"{c['unchanged']} unchanged, {c['removed']} removed (tombstoned), {c['duplicate']} duplicate"
    )
    lines.append(f"redacted: {summary['redacted']} document{'' if summary['redacted'] == 1 else 's'}")
    if summary["skipped"]:
        n = summary["skipped"]
        lines.append(f"skipped: {n} file{'' if n == 1 else 's'} of no known format or with no text")
    if summary["embedding_queued"]:
        lines.append(
            f"embedding pending for {summary['embedding_queued']} chunks: `brain worker --once` embeds them"
        )
    return lines


@command(name="ingest")
@click.argument("paths", nargs=-1, required=True)
@click.option("--project", default="", help="Project scope ('' = global).")
@click.option(
    "--source-system",
    default="files",
    show_default=True,
    help="Where the documents come from (keys their refs).",
)
@click.option(
    "--root",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    default=None,
    help="Refs are paths relative to this folder, and nothing outside it is read (default: the "
    "current one, and a folder named outside it is its own root).",
)
@click.option(
    "--stdin-ref", default="stdin", show_default=True, help="The ref of the document read from '-'."
)
@click.option("--dry-run", is_flag=True, help="Report what would change; write and embed nothing.")
@click.option("--source", "source_agent", help="Who is ingesting (recorded in the audit log).")
def ingest_command(
    paths: tuple[str, ...],
    project: str,
    source_system: str,
    root: Path | None,
    stdin_ref: str,
    dry_run: bool,
    source_agent: str | None,
    as_json: bool,
) -> None:
    """Keep documents in memory in step with their source: files, folders (with their
    .gitignore and .brainignore), globs, '-' for standard input. Markdown, plain text,
    and the comments and docstrings of source code.

    Unchanged documents cost nothing; a changed chunk supersedes its old version;
    a document gone from a folder named here is tombstoned ("removed at source");
    a renamed one keeps its memories. See docs/ingest.md.
    """
    from pybrain import ingest

    listing = ingest.collect(list(paths), root=root, stdin_ref=stdin_ref)
    for p in listing.problems:
        click.echo(f"{p.path}: {p.message}", err=True)
    show = not as_json and sys.stderr.isatty()
    with _open(source_agent) as brain:
        report = ingest.run(
            brain,
            listing,
            source_system=source_system,
            project=project,
            dry_run=dry_run,
            source_agent=source_agent,
            progress=_IngestProgress(dry_run) if show else None,
        )
    summary = report.summary()
    if as_json:
        click.echo(_dump(summary | {"rows": [r for r in report.rows if r["chunk"] is None]}))
    else:
        click.echo("\n".join(_ingest_text(summary, report.rows)))
    if report.problems or report.documents.get("rejected"):
        sys.exit(1)


def _count_lines(c: dict[str, Any]) -> str:
    states = ", ".join(f"{n} {s}" for s, n in c["memories"].items())
    rest = ", ".join(
        f"{c[k]} {k}" for k in ("audit", "annotations", "folds", "embeddings", "sessions", "handoffs")
    )
    return f"memories: {states}\nrows: {rest}; {c['workspaces']} workspaces"


@command()
@click.argument("file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--url", help="Back up this database (default: the one `brain init` migrates).")
@click.option(
    "--verify",
    is_flag=True,
    help="Then restore it into a scratch embedded server (a temporary directory, removed after), "
    "compare its counts and a sample search with the backup's, print what was compared, and exit 1 "
    "on a mismatch.",
)
def backup(file: Path | None, url: str | None, verify: bool, as_json: bool) -> None:
    """Back up the whole database with pg_dump (custom format) into FILE, default
    BRAIN_HOME/backups/brain-<UTC time>.dump, with FILE.json holding the counts a restore checks.
    With --verify, the backup is then restored into a scratch server and compared (docs/backup.md)."""
    from pybrain.transfer import backup as backups

    settings = Settings.from_env()
    if file is None:
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        file = settings.home / "backups" / f"brain-{stamp}.dump"
    out = backups.backup(url or db.admin_url(settings), file, sample=verify)
    if verify:
        out["verify"] = backups.verify_restore(Path(out["file"]), out.pop("sample_search"))
    if as_json:
        click.echo(_dump(out))
    else:
        click.echo(f"backup: {out['file']} ({out['bytes']} bytes)\n{_count_lines(out['counts'])}")
        if verify:
            click.echo("\n".join(_verify_lines(out["verify"])))
    if verify and not out["verify"]["ok"]:
        sys.exit(1)


def _verify_lines(v: dict[str, Any]) -> list[str]:
    lines = [f"verify: restored into a scratch server ({v['scratch']}, removed)"]
    if v["counts"] is not None:
        same = "the same as" if v["counts"] == v["expected"] else "DIFFERENT from"
        same += " the manifest's"
        lines.append(f"verify: counts {same}:\n{_count_lines(v['counts'])}")
    search = v.get("search")
    if search is not None:
        same = "the same" if search["ids"] == search["restored_ids"] else "DIFFERENT"
        lines.append(
            f"verify: search {search['query']!r} in workspace {search['workspace']}: "
            f"{len(search['restored_ids'])} results, {same} as at backup time"
        )
    elif v["counts"] is not None:
        lines.append("verify: no active memory to search for")
    lines += [f"verify: MISMATCH: {m}" for m in v["mismatches"]]
    lines.append("verify: ok" if v["ok"] else "verify: FAILED")
    return lines


@command()
@click.argument("target", metavar="MEMORY_ID|FILE")
@click.option("--source", help="Who is restoring (a memory).")
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    help="A backup: restore into a new embedded database under this BRAIN_HOME (a failed restore "
    "stops the server it started there and removes the directory if it made it).",
)
@click.option("--url", help="A backup: restore into this empty database (a superuser's URL).")
@click.option(
    "--without-manifest",
    is_flag=True,
    help="A backup of an older pybrain without FILE.json: restore it unchecked by counts "
    "(its schema and data are still checked, and it is still loaded as a role without rights).",
)
def restore(
    target: str,
    source: str | None,
    home: Path | None,
    url: str | None,
    without_manifest: bool,
    as_json: bool,
) -> None:
    """Bring an archived or forgotten memory back (MEMORY_ID), or restore a backup
    (FILE, from `brain backup`, with its manifest FILE.json) into an empty database:
    the manifest, the checksums, the schema and the data are checked before anything
    of the file runs, and it is loaded as a role without rights (docs/backup.md)."""
    if not target.isdigit() or home or url or without_manifest:
        restore_backup(Path(target), home, url, as_json, without_manifest=without_manifest)
    else:
        restore_memory(int(target), source, as_json)


def restore_backup(
    file: Path, home: Path | None, url: str | None, as_json: bool, *, without_manifest: bool = False
) -> None:
    """`brain restore FILE`: a backup into an empty database (a new embedded one, or --url)."""
    from pybrain.transfer import backup as backups

    settings = Settings.from_env()
    # A file that is not pybrain's backup is refused before any server is started.
    backups.preflight(file, without_manifest=without_manifest)
    if url is None and (home is not None or settings.database_url is None):
        # The server keeps running afterwards, as after any command (`brain db stop`); a
        # restore that fails stops it if it started it, and removes the home if it made it.
        with backups.embedded_target(home or settings.home) as (server, url):
            out = backups.restore(file, url, without_manifest=without_manifest)
        out["target"] = str(server.pgdata)
    else:
        url = url or db.admin_url(settings)
        out = backups.restore(file, url, without_manifest=without_manifest)
        out["target"] = _mask(url)
    if as_json:
        click.echo(_dump(out))
    else:
        click.echo(f"restored {file} into {out['target']}\n{_count_lines(out['counts'])}")
        if out["count_check"] is None:
            click.echo("count check: no manifest (FILE.json) to compare with")
        else:
            click.echo("count check: ok, the same counts as at backup time")
        click.echo(_gate_lines(out["gate"]))
        if home is not None:
            click.echo(f"use it with BRAIN_HOME={home}")


def _gate_lines(gate: dict[str, Any]) -> str:
    """What the gate changed in a restored database, one line a memory (never a value)."""
    memories, others = gate["memories"], gate["redacted"]
    if not memories and not others:
        return "gate: every row passed as it was (no secret, no unflagged injection)"
    lines = [f"gate: {len(memories)} memories changed, as an import's would be"]
    for m in memories:
        said = []
        if m.get("redacted"):
            said.append("redacted " + ", ".join(m["redacted"]))
        if "flagged" in m:
            said.append("flagged " + (", ".join(m["flagged"]) or "again"))
        said += [w for w in ("unconfirmed", "unpinned") if m.get(w)]
        if m.get("votes_cleared"):
            said.append("votes cleared")
        lines.append(f"  #{m['id']} (workspace {m['workspace']}): {'; '.join(said)}")
    for column, n in sorted(others.items()):
        lines.append(f"  {column}: {n} redacted")
    return "\n".join(lines)


COMMANDS = (export_command, import_command, ingest_command, backup, restore)
