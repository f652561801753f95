"""Sessions and the wiring of agents: boot, end and the handoff, action items,
scratch notes, `brain wire` (an MCP client's configuration, Claude Code's hooks)
and `brain hook` (a Claude Code hook)."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import Any

import click

from pybrain.cli.base import (
    REQUEST_KEY,
    SESSION_OPTION,
    Choice,
    QuietCommand,
    _dump,
    _echo_rows,
    _open,
    _text,
    command,
    group,
)
from pybrain.hooks import EVENTS as HOOK_EVENTS
from pybrain.wire import CLAUDE_SETTINGS
from pybrain.wire import clients as wire_clients


@command()
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


@command()
@click.option("--project", help="Only this project.")
def sessions(project: str | None, as_json: bool) -> None:
    """Live sessions (gone ones are ended first)."""
    with _open() as brain:
        rows = brain.list_active_sessions(project=project)

    def line(r: dict[str, Any]) -> str:
        where = r["project"] or "global"
        bound = f"pid {r['pid']}" if r["pid"] else "by heartbeat"
        return (
            f"#{r['session_id']} {r['source']} · {where} · {r['cwd'] or '?'} · {bound} · "
            f"{r['current_task'] or '(no task)'}"
        )

    _echo_rows(rows, as_json, line, "no active sessions")


@command()
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


@command()
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


@group("actions")
def actions_group() -> None:
    """Action items: raised for other sessions, acknowledged before they write."""


@command(actions_group, "add")
@click.argument("text")
@click.option("--project", default="", help="Project ('' = sessions without a project).")
@click.option("--all-projects", is_flag=True, help="Sessions of every project (workspace admins only).")
@click.option("--for-source", help="Only sessions of this source.")
@SESSION_OPTION
@REQUEST_KEY
def actions_add(
    text: str,
    project: str,
    all_projects: bool,
    for_source: str | None,
    session: int | None,
    request_key: str | None,
    as_json: bool,
) -> None:
    """Raise an action item."""
    with _open() as brain:
        item = brain.create_action_item(
            _text(text, "text") or "",
            project,
            for_source,
            session,
            all_projects=all_projects,
            request_key=request_key,
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

    def line(r: dict[str, Any]) -> str:
        return f"#{r['id']} {r['text']}"

    _echo_rows(rows, as_json, line, "nothing pending")


def _scratch_scope(session: int | None, project: str | None) -> dict[str, Any]:
    return {"session": session, "project": project}


@group("scratch")
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

    def line(r: dict[str, Any]) -> str:
        return f"{r['key']}: {r['value']}"

    _echo_rows(rows, as_json, line)


@command()
@click.argument("client", type=Choice(sorted(wire_clients())))
@click.option(
    "--write",
    "target",
    type=click.Path(dir_okay=False),
    help="Merge the entry into this JSON config file (codex: its config.toml), keeping its other "
    "entries (with --hooks: the settings file, as --settings).",
)
@click.option(
    "--hooks",
    is_flag=True,
    help="claude-code, codex, cursor: add pybrain's hooks (boot at SessionStart, capture and "
    "handoff at PreCompact and SessionEnd, for Codex and Cursor at Stop too) to the settings file "
    "instead (.claude/settings.local.json, .codex/hooks.json, .cursor/hooks.json; docs/hooks.md).",
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
    from pybrain.wire import codex_toml, merge_codex_toml, merge_into, remote_entry, server_entry, usual_file

    if token_env and not url:
        raise click.UsageError("--token-env goes with --url.")
    if hooks or settings_path or prompt_context or project is not None:
        if url:
            raise click.UsageError("--url registers a remote server; hooks run `brain` on this machine.")
        _wire_hooks(client, hooks, target, settings_path, project, prompt_context, as_json)
        return
    if client == "codex":
        if url:
            raise click.UsageError("codex: pybrain registers `brain mcp` (stdio) in config.toml; not --url.")
        entry = server_entry(client, target)
        _warn_unless_on_path(target or usual_file(client))
        if target:
            path = merge_codex_toml(target, entry)
            click.echo(_dump({"written": str(path)}) if as_json else f"pybrain added to {path}")
        else:
            click.echo(_dump(entry) if as_json else codex_toml(entry), nl=as_json)
            if not as_json:
                click.echo(
                    f"Put this in {usual_file(client)}, or: brain wire codex --write {usual_file(client)}",
                    err=True,
                )
        return
    entry = remote_entry(client, url, token_env) if url else server_entry(client, target)
    if not url:
        _warn_unless_on_path(target or usual_file(client))
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


def _warn_unless_on_path(target: str) -> None:
    """A file a team commits names `brain` without a path: say so when it is not on PATH."""
    from pybrain.wire import brain_path, on_path, shared_file

    if shared_file(target) and not on_path():
        click.echo(
            f"note: {target} runs `brain` from PATH, where this brain is not; to put it there: "
            f"ln -s {shlex.quote(brain_path())} ~/.local/bin/brain",
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
    from pybrain.wire import (
        HARNESS_HOOKS,
        HOOKS_FILE,
        hook_command,
        hook_entries,
        merge_claude_hooks,
        merge_cursor_hooks,
        merge_hooks,
    )

    if not hooks:
        raise click.UsageError("--settings, --project and --prompt-context go with --hooks.")
    if client not in HARNESS_HOOKS:
        raise click.UsageError(
            f"--hooks writes the hooks of {' and '.join(HARNESS_HOOKS)}; "
            f"{client} has no hooks pybrain writes."
        )
    if target and settings_path and Path(target).expanduser() != Path(settings_path).expanduser():
        raise click.UsageError("--write and --settings both name the settings file: give one.")
    path = target or settings_path or HOOKS_FILE[client]
    command = hook_command(path)
    if client == "cursor":
        if prompt_context:
            raise click.UsageError("--prompt-context: Cursor's beforeSubmitPrompt hook adds no context.")
        report = merge_cursor_hooks(path, hook_entries(project, command=command, harness=client))
    elif client == "claude-code":
        report = merge_claude_hooks(path, hook_entries(project, prompt_context, command=command))
    else:
        report = merge_hooks(
            path, hook_entries(project, prompt_context, command=command, harness=client), client
        )
    _warn_unless_on_path(path)
    if as_json:
        click.echo(_dump(report))
        return
    for each in (report, *report.get("elsewhere", [])):
        changes = [
            f"{what} {', '.join(each[what])}" for what in ("added", "replaced", "removed") if each[what]
        ]
        click.echo(f"pybrain hooks in {each['path']}: {'; '.join(changes) or 'already up to date'}")
    for other in report.get("also_in", []):
        click.echo(
            f"note: pybrain's hooks are also in {other}, which Claude Code runs in every project: "
            "each of them would run twice here. Remove them from one of the two files.",
            err=True,
        )


@click.command(
    "hook",
    cls=QuietCommand,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.argument("event", type=Choice(list(HOOK_EVENTS)))
@click.option(
    "--source", default="claude-code", show_default=True, help="The client the session is booted as."
)
@click.option(
    "--project",
    default=None,
    envvar="BRAIN_PROJECT",
    help="Project scope (env BRAIN_PROJECT; '' = global). Default: the git repository of the session's"
    " folder (CLAUDE_PROJECT_DIR, else the payload's cwd), else that folder's name.",
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
def hook(event: str, source: str, project: str | None, timeout: float | None, budget: int | None) -> None:
    """Run a Claude Code hook, or Codex's with --source codex: reads its JSON on standard
    input (docs/hooks.md).

    session-start boots a session and prints its payload as additional context;
    prompt prints the few memories the prompt brings up; pre-compact and
    session-end observe the transcript's new turns and end the session with a
    handoff. It never blocks the session: on any failure it says why on
    standard error, prints nothing and exits 0.

    Bounded input: standard input up to 8 MiB; of the transcript (a regular
    file, else BR030) the last 64 MiB, lines over 8 MiB skipped.
    """
    from pybrain.hooks import Options, read_input, run

    sys.exit(run(event, read_input(sys.stdin.buffer), Options(source, project, timeout, budget)))


COMMANDS = (boot, sessions, end, ack, actions_group, scratch_group, wire, hook)
