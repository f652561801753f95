"""Finish in the background what the session-end hook had no time to store.

Claude Code gives its SessionEnd hooks 1.5 s in all. The hook hands off, stores the
turns it has time for, marks the session (brain.leave_capture) and starts this
process on its own (a new session: Claude Code, exiting, does not wait for it),
which writes what capture hooks kept on disk while the database was out (the
session-end hook leaves that to it), then stores the rest as the next session
start would: brain.uncaptured_sessions
hands the session out, its turns go through brain.observe_transcript in batches
(what is stored already is skipped, one writer at a time), and
brain.capture_ended_session marks it captured. If this process is killed first,
the next session start of the seat does the same.

    python -m pybrain.hooks.finish '{"source": ..., "project": ..., "seat": ...}'
"""

from __future__ import annotations

import json
import sys
import time
import warnings

# Seconds this process gives itself (a 64 MiB transcript's turns take minutes).
TIMEOUT = 600.0


def main(argv: list[str]) -> int:
    from pybrain import hooks

    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
    hooks.STARTED = time.time()
    wanted = json.loads(argv[0])
    options = hooks.Options(source=wanted["source"], project=wanted["project"], timeout=TIMEOUT)
    try:
        with hooks._deadline(TIMEOUT), hooks._brain(options, start=False) as brain:
            # what capture hooks kept while the database was out, as any command writes it
            from pybrain.config import Settings

            hooks.write_kept(Settings.from_env())
            # stored first, queued (embedding each batch would take twice as long), then
            # embedded with what a hook may use, as `brain worker --once` would
            hooks._capture_ended(brain, options, wanted["seat"], embed=False)
            _embed_queued(brain)
    except Exception as exc:  # the next session start captures what is left
        print(f"pybrain finish: {hooks._describe(exc)} (the next session start goes on)", file=sys.stderr)
    return 0


def _embed_queued(opened: object) -> None:
    """Embed the queued memories with the embedder a hook may use (none: `brain worker` does)."""
    from pybrain import hooks
    from pybrain.client import Brain
    from pybrain.errors import EmbedderError

    embedder = hooks._hook_embedder(opened, remote=True)
    if embedder is None:
        return
    brain = Brain(opened.conn, workspace=opened.workspace, embedder=embedder, actor=opened.actor)  # type: ignore[attr-defined]
    try:
        while brain.embed_pending(64):
            pass
    except EmbedderError:
        pass  # no warm server, or the provider is out: `brain worker` embeds them


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
