"""Embeddings: `brain worker` (pybrain.worker: the queue and the index), `brain
reembed` (another model, in one switch) and the warm embedding server."""

from __future__ import annotations

import sys
from typing import Any

import click

from pybrain.cli.base import _dump, _open, command, group


def _say(line: str) -> None:
    click.echo(line, err=True)


@command()
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
def worker(deadline: float, as_json: bool, **options: Any) -> None:
    """Embed queued writes (LISTEN brain_embedding) and run their semantic dedup; index
    the vectors that large observe batches left out of the HNSW index.

    A text the embedder refuses is tried again later and, after
    embedding_max_attempts tries, parked (see `brain stats`); the rest of the
    queue goes on. Without --once, a lost database or an unreachable embedder
    does not stop the worker: it waits, reconnects, listens again and goes on.
    """
    from pybrain import worker as work
    from pybrain.embed.base import deadline as embed_deadline

    stop = work.Stop()
    stop.install()
    with _open() as brain, embed_deadline(deadline):
        # options: once, batch, poll, retry_failed
        talk = not options["once"] and not as_json
        outcomes = work.run(brain, stop=stop, say=_say, talk=talk, **options)
    totals = outcomes.as_dict()
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
        released = f"released {totals['released']} refused texts; " if options["retry_failed"] else ""
        click.echo(
            f"{released}embedded {totals['embedded']}: {totals['updated']} merged into a longer version, "
            f"{totals['skipped']} folded into an existing memory, "
            f"{totals['flagged']} flagged as related{indexed}{refused}"
        )


@command()
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


@group("embedder")
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


COMMANDS = (worker, reembed, embedder_group)
