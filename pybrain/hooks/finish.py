"""Finish in the background what the session-end hooks had no time to store.

Claude Code gives its SessionEnd hooks 1.5 s in all. The hook hands off, stores the
turns it has time for, marks the session (brain.leave_capture) and asks for this
process (a new session: Claude Code, exiting, does not wait for it), which writes
what capture hooks kept on disk while the database was out, then stores the rest as
the next session start would: brain.uncaptured_sessions hands the session out, its
turns go through brain.observe_transcript in batches (what is stored already is
skipped, one writer at a time), brain.capture_ended_session marks it captured, and
the queued turns are embedded. If this process is killed first, the next session
start of the seat does the same.

One worker per home and database, whatever the number of sessions that end: a hook
leaves its request (the source, project and seat) as a file under
BRAIN_HOME/run/finish-TARGET/, and starts a worker only when none holds the folder's
lock. The worker holds the lock while it takes the requests, one after another,
until none is left; after letting the lock go it looks once more, so a request left
while it was finishing is never stranded (its hook found the lock held).

    python -m pybrain.hooks.finish TARGET
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from typing import Any

from pybrain.hooks.later import LOCK, ask, folder, requests, worker_lock, working  # noqa: F401

# Seconds a worker gives one request (a 64 MiB transcript's turns take minutes).
TIMEOUT = 600.0
# Turns a statement of the worker stores: each holds the capture's lock of its source
# (brain.observe_transcript), so the hooks of sessions that end meanwhile wait for one
# small batch, not for a long one.
BATCH = 32


def main(argv: list[str]) -> int:
    from pybrain.config import Settings

    settings = Settings.from_env()
    target = argv[0]
    while requests(settings.home, target):
        with worker_lock(settings.home, target) as held:
            if not held:
                return 0  # the worker that holds it takes this process's requests too
            _work(settings, target)
        # a request left while the lock was let go is taken by the loop's next turn
    return 0


def _work(settings: Any, target: str) -> None:
    """Take the requests until none is left, then embed what they queued."""
    import warnings

    from pybrain.hooks import base
    from pybrain.hooks.on_capture import write_kept
    from pybrain.hooks.on_start import _capture_ended

    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
    last = None
    while pending := requests(settings.home, target):
        for request in pending:
            try:
                wanted = json.loads(request.read_text(encoding="utf-8"))
                request.unlink()
            except (OSError, ValueError):
                with contextlib.suppress(OSError):
                    request.unlink()
                continue
            base.STARTED = time.time()
            options = base.Options(source=wanted["source"], project=wanted["project"], timeout=TIMEOUT)
            last = options
            try:
                with base._deadline(TIMEOUT), base._brain(options, start=False) as brain:
                    # what capture hooks kept while the database was out, as any command writes it
                    write_kept(settings)
                    # stored first, queued (embedding each batch would take twice as long)
                    _capture_ended(brain, options, wanted["seat"], embed=False, per_call=BATCH)
            except Exception as exc:  # the next session start captures what is left
                print(
                    f"pybrain finish: {base._describe(exc)} (the next session start goes on)",
                    file=sys.stderr,
                )
    if last is None:
        return
    try:
        # then embedded with what a hook may use, as `brain worker --once` would
        with base._deadline(TIMEOUT), base._brain(last, start=False) as brain:
            _embed_queued(brain)
    except Exception as exc:
        print(f"pybrain finish: {base._describe(exc)} (brain worker embeds the rest)", file=sys.stderr)


def _embed_queued(opened: object) -> None:
    """Embed the queued memories with the embedder a hook may use (none: `brain worker` does)."""
    from pybrain.errors import EmbedderError
    from pybrain.hooks import base

    embedder = base._hook_embedder(opened, remote=True)
    if embedder is None:
        return
    brain = opened.embedding_with(embedder)  # type: ignore[attr-defined]
    try:
        # small batches: the warm embedding server answers the hooks between them
        while brain.embed_pending(16):
            pass
    except EmbedderError:
        pass  # no warm server, or the provider is out: `brain worker` embeds them


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
