"""`brain trajectory` and `brain pack`: how problems were solved, and named context packs.

Each command is one SQL call (brain.record_trajectory, brain.create_pack, ...);
pybrain.cli adds these groups to `brain`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from pybrain.cli.base import STDIN_BYTES, Choice, _dump, _echo_rows, _open, _text, command, group
from pybrain.cli.memories import _describe_write
from pybrain.render import step as render_step
from pybrain.words import KINDS


def _steps_file(path: Path) -> str:
    """The text of a --steps file: a regular file of at most STDIN_BYTES (BR030 over it)."""
    from pybrain.errors import InputTooLarge

    with open(path, "rb") as stream:
        raw = stream.read(STDIN_BYTES + 1)
    if len(raw) > STDIN_BYTES:
        raise InputTooLarge(
            f"{path} is over the {STDIN_BYTES // (1024 * 1024)} MiB --steps may be.",
            detail={"what": "steps", "limit_bytes": STDIN_BYTES},
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise click.BadParameter(f"--steps {path} is not valid UTF-8 ({exc.reason}).") from None


def _steps(step: tuple[str, ...], steps_json: str | None) -> list[Any]:
    """Steps from --step (a text, or a JSON object) and --steps (a JSON array; - reads standard input)."""
    out: list[Any] = []
    if steps_json is not None:
        raw = _text(steps_json, "steps") or ""
        if steps_json != "-" and Path(steps_json).is_file():
            raw = _steps_file(Path(steps_json))
        try:
            parsed = json.loads(raw)
        except ValueError as exc:
            raise click.BadParameter(f"--steps is not a JSON array: {exc}") from None
        if not isinstance(parsed, list):
            raise click.BadParameter("--steps must be a JSON array.")
        out += parsed
    for s in step:
        s = _text(s, "step") or ""
        if s.lstrip().startswith("{"):
            try:
                out.append(json.loads(s))
            except ValueError as exc:
                raise click.BadParameter(f"--step is not a JSON object: {exc}") from None
        else:
            out.append(s)
    return out


@group("trajectory")
def trajectory_group() -> None:
    """Trajectories: how a problem was solved (problem, ordered steps, outcome)."""


@command(trajectory_group, "record")
@click.option("--problem", help="What was wrong or had to be done (- reads standard input, up to 16 MiB).")
@click.option(
    "--step", multiple=True, help='A step, in order (repeatable): a text, or {"action", "command", ...}.'
)
@click.option(
    "--steps",
    "steps_json",
    help="All steps as a JSON array, or a file holding one (- reads stdin); up to 16 MiB.",
)
@click.option("--outcome", default="", help="What worked in the end.")
@click.option("--headline", help="One line (default: the problem's first words).")
@click.option("--project", default="", help="Project scope ('' = global).")
@click.option("--tag", "tags", multiple=True, help="A tag (repeatable).")
@click.option("--supersedes", type=click.IntRange(1), help="An older trajectory this one replaces.")
@click.option("--reason", help="With --supersedes: why the older one is replaced.")
@click.option("--source", help="Who is writing (agent or person).")
@click.option("--session", "session_id", type=int, envvar="BRAIN_SESSION", help="The writing session.")
@click.option(
    "--from-transcript",
    "transcript",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Take problem, steps and outcome from a Claude Code transcript or a Codex rollout file "
    "(JSONL): the tool calls of its last prompt that made any, from the prompt that started "
    "that work (a confirmation such as 'Good. Do that.' goes on with the one before); "
    "<private> text removed, secrets replaced, failed calls marked. A regular file; of one "
    "over 64 MiB the last 64 MiB are read, and lines over 8 MiB are skipped.",
)
@click.option(
    "--prompt",
    "prompt_number",
    type=click.IntRange(1),
    help="With --from-transcript: the n-th prompt (BR030 for a transcript over 64 MiB).",
)
def trajectory_record(
    problem: str | None,
    step: tuple[str, ...],
    steps_json: str | None,
    transcript: Path | None,
    prompt_number: int | None,
    as_json: bool,
    **opts: Any,
) -> None:
    """Record how a problem was solved."""
    redact = False
    steps = _steps(step, steps_json)
    problem = _text(problem, "problem")
    if transcript is None and not problem:
        raise click.UsageError("Say what the problem was: --problem TEXT (or --from-transcript FILE).")
    opts["tags"] = list(opts["tags"]) or None
    work = None
    if transcript is not None:
        from pybrain.hooks.trajectory import read_work

        work = read_work(transcript, prompt_number)  # read (and bounded) before connecting
        if work is None:
            raise click.UsageError(f"{transcript}: no prompt there led to tool calls.")
    with _open(opts.get("source")) as brain:
        if work is not None:
            # which prompt started the work, the database says (a confirmation goes on with the one before)
            found = work.trajectory(
                started=lambda prompts: brain.value("trajectory_problem", prompts=list(prompts))
            )
            if found["left_out"]:
                click.echo(f"pybrain: the transcript was read in part: {found['left_out']}", err=True)
            problem = problem or found["problem"]
            steps = steps or found["steps"]
            opts["outcome"] = opts["outcome"] or found["outcome"]
            opts["source_system"] = opts.get("source_system") or found["source_system"]
            opts["source_ref"] = found["source_ref"]
            # <private> text removed, secrets replaced, results cut, by the database
            redact = True
        if not problem:
            raise click.UsageError("Say what the problem was: --problem TEXT (or --from-transcript FILE).")
        r = brain.record_trajectory(
            problem,
            steps,
            outcome=_text(opts.pop("outcome"), "outcome"),
            redact=redact,
            source_agent=opts.pop("source"),
            **opts,
        )
    if as_json:
        click.echo(_dump(r.as_dict()))
    elif r.action == "skipped":
        click.echo(f"recorded again: #{r.memory_id} holds this solution (counted)")
    else:
        click.echo(_describe_write(r, "trajectory", f"{len(steps)} steps", "store"))


@command(trajectory_group, "list")
@click.option("--project", help="This project and global trajectories.")
@click.option("--include-superseded", is_flag=True)
@click.option("-n", "--max-results", type=click.IntRange(1, 1000), default=50, show_default=True)
def trajectory_list(project: str | None, include_superseded: bool, max_results: int, as_json: bool) -> None:
    """Trajectories, newest first: steps, failed attempts, times recorded and used."""
    with _open() as brain:
        rows = brain.list_trajectories(
            project=project, include_superseded=include_superseded, max_results=max_results
        )

    def line(r: dict[str, Any]) -> str:
        state = "" if r["state"] == "active" else f" [{r['state']} by #{r['superseded_by']}]"
        failed = f", {r['failed_steps']} failed" if r["failed_steps"] else ""
        return (
            f"#{r['id']} {r['headline']} ({r['steps']} steps{failed}; recorded {r['times_recorded']}x, "
            f"used {r['times_used']}x){state}"
        )

    _echo_rows(rows, as_json, line, "no trajectories")


@command(trajectory_group, "show")
@click.argument("memory_id", type=int)
def trajectory_show(memory_id: int, as_json: bool) -> None:
    """A trajectory with its steps (a recall: it counts as a use)."""
    with _open() as brain:
        m = brain.recall(memory_id)
    if m["kind"] != "trajectory":
        raise click.UsageError(f"#{memory_id} is a {m['kind']}: brain recall {memory_id} shows it.")
    if as_json:
        click.echo(_dump(m))
        return
    if m.get("banner"):
        click.secho(m["banner"], fg="yellow", bold=True)
    click.secho(f"#{m['id']} {m['headline']}", bold=True)
    click.echo(f"problem: {m['problem']}")
    for s in m.get("steps") or []:
        click.echo(render_step(s))
    click.echo(f"outcome: {m['outcome'] or '-'}")
    click.echo(f"recorded {m['times_recorded']}x · used {m['times_used']}x")


@group("pack")
def pack_group() -> None:
    """Context packs: named, versioned sets of memories loaded within a token budget."""


@command(pack_group, "create")
@click.argument("name")
@click.option("--query", help="The memories search finds for this query (kept current as memories change).")
@click.option(
    "--id", "memory_ids", type=click.IntRange(1), multiple=True, help="A memory (repeatable), in order."
)
@click.option("--kind", "kinds", multiple=True, type=Choice(KINDS), help="With --query: only these kinds.")
@click.option("--category", "categories", multiple=True, help="With --query: only these categories.")
@click.option("--tag", "tags", multiple=True, help="With --query: only memories with every given tag.")
@click.option(
    "--budget", "token_budget", type=click.IntRange(50, 20000), help="Tokens at most (default 600)."
)
@click.option("--description", default="", help="What the pack is for (its embedding, without a query).")
@click.option("--project", default="", help="Project scope ('' = global).")
@click.option("--source", help="Who defines it.")
def pack_create(
    name: str,
    query: str | None,
    memory_ids: tuple[int, ...],
    kinds: tuple[str, ...],
    categories: tuple[str, ...],
    tags: tuple[str, ...],
    as_json: bool,
    **opts: Any,
) -> None:
    """Define a context pack (again: a new version)."""
    filters = {k: list(v) for k, v in (("kinds", kinds), ("categories", categories), ("tags", tags)) if v}
    with _open(opts.get("source")) as brain:
        out = brain.create_pack(
            name, query=_text(query, "query"), memory_ids=list(memory_ids) or None, filters=filters, **opts
        )
    click.echo(_dump(out) if as_json else f"{out['action']} pack {out['name']} v{out['version']}")


@command(pack_group, "show")
@click.argument("name")
@click.option(
    "--budget", "token_budget", type=click.IntRange(20, 20000), help="A smaller budget than the pack's."
)
def pack_show(name: str, token_budget: int | None, as_json: bool) -> None:
    """A pack rendered as an agent gets it (its current members, within its budget)."""
    with _open() as brain:
        out = brain.render_pack(name, token_budget)
    if as_json:
        click.echo(_dump(out))
        return
    click.echo(out["text"])
    more = f"; {out['left_out']} left out for the budget" if out["truncated"] else ""
    click.echo(f"({out['tokens']} of {out['budget']} tokens{more})")


@command(pack_group, "list")
@click.option("--project", help="This project's packs and the global ones.")
def pack_list(project: str | None, as_json: bool) -> None:
    """The context packs."""
    with _open() as brain:
        rows = brain.list_packs(project)

    def line(r: dict[str, Any]) -> str:
        what = f"query {json.dumps(r['query'])}" if r["query"] else f"{len(r['memory_ids'])} listed memories"
        return f"{r['name']} v{r['version']} · {what} · {r['token_budget']} tokens · {r['description']}"

    _echo_rows(rows, as_json, line, "no packs")


@command(pack_group, "drop")
@click.argument("name")
@click.option("--source", help="Who drops it.")
def pack_drop(name: str, source: str | None, as_json: bool) -> None:
    """Drop a context pack (kept for the audit; the name is free again)."""
    with _open(source) as brain:
        out = brain.drop_pack(name, source)
    click.echo(_dump(out) if as_json else f"dropped pack {out['name']} (v{out['version']})")


COMMANDS = (trajectory_group, pack_group)
