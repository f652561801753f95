"""SessionStart: the boot payload (brain.boot_session), after the turns of the folder's
sessions that ended without a capture are stored."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import replace
from typing import Any

from pybrain.hooks import base
from pybrain.hooks.base import (
    DEFAULT_TIMEOUT,
    HARNESSES,
    INJECTED,
    HookTimeout,
    Options,
    _finish_later,
    _harness,
    _mark_transcript,
    _NoEmbedder,
    _project,
    _seat,
    _store_turns,
    _string,
    _transcript_mark,
    _warm_up,
    _worker_busy,
)
from pybrain.hooks.on_capture import write_kept_first

# --- the events ------------------------------------------------------------


def session_start(payload: dict[str, Any], options: Options) -> dict[str, Any]:
    from pybrain.client import render_boot

    client_info = {
        "via": "hook",
        "client": _harness(options)[0],
        "client_session": _string(payload, "session_id"),
        "start": _string(payload, "source"),  # startup | resume | clear | compact
        "model": _string(payload, "model"),
        "transcript": _string(payload, "transcript_path"),  # read by a later start if no hook ends this one
    }
    with base._brain(options, start=True) as brain:
        write_kept_first(options)
        options = _project(options, brain, payload)
        _warm_up(brain)
        # No task at a session start: the database names what stands for one (the last
        # handoff), whose embedding finds the trajectories and the context pack to show.
        vector, space = _boot_query(brain, options)
        boot = brain.boot_session(
            options.source,
            project=options.project,
            cwd=_seat(payload),
            pid=base._client_pid(),
            token_budget=options.budget,
            client_info={k: v for k, v in client_info.items() if v is not None},
            task_embedding=vector,
            embedding_space=space,
        )
        _mark_transcript(brain, options, client_info.get("client_session"), client_info.get("transcript"))
        try:
            if _worker_busy():
                # the background worker stores what sessions left: this seat's ended
                # sessions are asked of it too, and the payload goes out at once
                _finish_later(options, _seat(payload))
            elif _capture_ended(brain, options, _seat(payload)):
                # a handoff came from them: the payload shows it (and is found by it)
                vector, space = _boot_query(brain, options)
                boot = {
                    **boot,
                    **brain.value(
                        "boot_payload",
                        session=boot["session_id"],
                        task_embedding=vector,
                        embedding_space=space,
                        token_budget=options.budget,
                    ),
                }
        except HookTimeout:  # the payload goes out all the same; the next start tries once more
            print("pybrain session-start: no time left to capture an earlier session", file=sys.stderr)
    return {
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            # marked as injected: the capture hooks never store it back (brain.capturable_text)
            "additionalContext": f"{INJECTED[0]}\n{render_boot(boot)}{INJECTED[1]}",
        }
    }


def _boot_query(brain: Any, options: Options) -> tuple[list[float] | None, str | None]:
    """The embedding of brain.boot_query (the last handoff) and its space, by an embedder a
    hook may use without loading a model (none: the boot goes without, as before)."""
    from pybrain.errors import EmbedderError

    query = brain.value("boot_query", source=options.source, project=options.project or "")
    if not query:
        return None, None
    embedder = base._hook_embedder(brain, remote=False)
    if embedder is None:
        return None, None
    try:
        return embedder.embed_one(query), embedder.space
    except EmbedderError:
        return None, None


def _capture_ended(
    opened: Any, options: Options, seat: str, *, embed: bool = True, per_call: int | None = None
) -> bool:
    """Capture the transcripts of this seat's sessions (of any harness) that ended without a
    capture hook (the client crashed): brain.uncaptured_sessions, then for each its turns through
    brain.observe_transcript and brain.capture_ended_session. True when a handoff was written."""
    import socket

    from psycopg.types.json import Jsonb

    from pybrain.errors import InputTooLarge
    from pybrain.hooks.transcript import read_turns

    handed = False
    # Stop beginning batches of turns at half the hook's time: the payload goes out after.
    until = (base.STARTED or time.time()) + (options.timeout or DEFAULT_TIMEOUT["session-start"]) / 2
    ended = opened.call(
        "uncaptured_sessions",
        source=options.source,
        project=options.project,
        cwd=seat,
        host=socket.gethostname(),
    )
    for row in ended:
        # (a session of another harness of the project: its turns stored, and its handoff
        # written, as its own hooks would have)
        harness = row["session_source"]
        own = replace(options, source=harness) if harness in HARNESSES else options
        if not _transcript_mark(opened, options.project, row["client_session"], row["transcript"]).exists():
            # not a transcript this machine's hooks booted a session for (a path planted in the
            # database, or one of another BRAIN_HOME): never read; the session is marked captured
            print(
                f"pybrain: session #{row['session_id']}'s transcript was not recorded by this machine's"
                " hooks; it is not read",
                file=sys.stderr,
            )
            turns = []
        else:
            try:
                turns = read_turns(os.path.expanduser(row["transcript"]), row["client_session"])
            except (OSError, InputTooLarge):
                turns = []  # gone from disk, or not a file to read: nothing to capture
        if turns:
            embedder = base._hook_embedder(opened, remote=True) or _NoEmbedder()
            brain = opened.embedding_with(embedder)
            _, left = _store_turns(brain, turns, own, until, embed=embed, per_call=per_call)
            if left:
                # what is stored stays; this session is handed out again (brain.uncaptured_sessions)
                print(
                    f"pybrain: {left} turns of session #{row['session_id']} left for the next session start",
                    file=sys.stderr,
                )
                continue
        out = opened.value(
            "capture_ended_session",
            session=row["session_id"],
            turns=Jsonb(turns),
            client=_harness(own)[1],
        )
        handed = handed or out["stored"]
    return handed
