"""Keeping the database well: init, stats, health, metrics, errors, maintain,
prune, and the embedded PostgreSQL (`brain db`)."""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import click

from pybrain import db
from pybrain.cli.base import _dump, _echo_rows, _fail, _mask, _max_results, _open, command, group
from pybrain.client import open_brain
from pybrain.config import Settings
from pybrain.embed import default_provider
from pybrain.embed.local import INSTALL as LOCAL_INSTALL
from pybrain.embed.local import prepare as prepare_local_model
from pybrain.errors import BrainError
from pybrain.repo import refile_global_sessions


@command()
def init(as_json: bool) -> None:
    """Start the database if needed, migrate it, and register the embedding space."""
    settings = Settings.from_env()
    url = db.admin_url(settings)
    conn = db.connect(url)
    report = db.migrate(conn)
    # as brain_owner: the installer runs no function of schema brain (docs/security.md)
    brain = open_brain("installer", settings, conn=conn)
    # An older release filed some sessions globally: filed now by the folder they ran in
    # (and the folders its sessions named projects by, registered oldest first).
    refiled = refile_global_sessions(brain)
    configured = brain.use_embedding_space(brain.configured_embedder())
    if db.spaces_without_statements(conn):
        # a space registered just now: the files once more, which write its statements
        db.migrate(conn)
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
        "refiled": {k: v for k, v in refiled.items() if k != "folders"},
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
    if refiled["sessions"]:
        click.echo(
            f"re-filed {refiled['sessions']} global sessions of an older release by the folder they ran in, "
            f"with {refiled['handoffs']} handoffs and {refiled['turns']} captured turns"
        )
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


@command()
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


@command()
def health(as_json: bool) -> None:
    """Database, extensions, embedder reachability, counts, pending embeddings."""
    from pybrain.config import Settings
    from pybrain.health import health as full_health
    from pybrain.hooks import spool

    with _open() as brain:
        out = full_health(brain)
    home = Settings.from_env().home
    # what the capture hooks kept on disk: waiting (written by the next command), set aside
    out["kept_captures"] = {
        "waiting": len(spool.pending(home)),
        "set_aside": [str(p) for p in spool.set_aside(home)],
    }
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
        if out.get("exposed"):
            click.echo(
                "warning: every role holds " + ", ".join(out["exposed"]) + ": a client can run "
                "statements of its own inside functions and pass the write guard (docs/security.md, "
                "run the revokes as a superuser)"
            )
        kept = out["kept_captures"]
        if kept["set_aside"]:
            click.echo(
                f"kept captures set aside (refused, or tried {spool.TRIES} times): "
                f"{len(kept['set_aside'])} in {spool.directory(home) / spool.FAILED}; "
                f"{kept['waiting']} waiting"
            )
        for kind, states in sorted(out["memories"].items()):
            click.echo(f"  {kind}: " + ", ".join(f"{s} {n}" for s, n in sorted(states.items())))
    if not out["ok"]:
        sys.exit(4)


@command()
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


@command()
@_max_results(20, 1000, "-n")
def errors(max_results: int, as_json: bool) -> None:
    """The latest failed tool calls and commands."""
    with _open() as brain:
        rows = brain.recent_errors(max_results)

    def line(r: dict[str, Any]) -> str:
        return f"{str(r['started_at'])[:19]} {r['channel']} {r['tool']} {r['error_code']}: {r['error']}"

    _echo_rows(rows, as_json, line, "no errors")


@command()
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


@command()
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


@group("db")
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


COMMANDS = (init, stats, health, metrics, errors, maintain, prune, db_group)
